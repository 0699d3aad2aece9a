"""A durable agent with skills: a DBOS workflow on SQLite (no server), with a scripted model (runs offline).

Each model request, the run's library check and each skill tool call is a DBOS step, recorded in the database: a
workflow recovered after a crash gets their results back instead of calling the model, reading a `SKILL.md` or
running a tool again. Here the workflow runs once, then is started again with the same id, which DBOS answers from
the record. `pip install 'skillshelf[durable]'`; see docs/durable.md.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from dbos import DBOS, DBOSConfig, SetWorkflowID
from pydantic_ai import Agent
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from weather_skill import weather

from skillshelf import Skills
from skillshelf.dbos import SkillSteps

SKILLS = Path(__file__).resolve().parent.parent / 'skills'
SCRIPT = [
    [ToolCallPart('load_skill', {'name': 'weather'})],
    [ToolCallPart('get_forecast', {'city': 'Lisbon', 'days': 2})],
    [TextPart('Lisbon: sunny, 21-22 °C.')],
]
model_calls = 0


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Stands in for a real model: the response that follows from how many it has given."""
    global model_calls
    model_calls += 1
    return ModelResponse(parts=SCRIPT[sum(isinstance(message, ModelResponse) for message in messages)])


# Order matters: `SkillSteps` after `Skills`, so each step holds a tool's own work and `Skills` keeps the load
# state in workflow code. Use `DBOSDurability`; the older `DBOSAgent` wrapper refuses `Skills`.
agent = Agent(
    FunctionModel(scripted),
    name='forecaster',
    capabilities=[Skills(SKILLS, skills=[weather]), DBOSDurability(), SkillSteps()],
)


@DBOS.workflow()
async def forecast(question: str) -> str:
    return (await agent.run(question)).output


async def main() -> None:
    with tempfile.TemporaryDirectory() as work:
        config: DBOSConfig = {
            'name': 'skillshelf-example',
            'system_database_url': f'sqlite:///{Path(work) / "dbos.sqlite"}',
            'log_level': 'WARNING',
        }
        DBOS(config=config)
        DBOS.launch()
        try:
            with SetWorkflowID('lisbon-1'):
                print('answer:', await forecast('Weather in Lisbon?'))
            print('steps recorded:')
            for step in await DBOS.list_workflow_steps_async('lisbon-1'):
                print(f'  {step["function_id"]}. {step["function_name"]}')
            calls = model_calls
            with SetWorkflowID('lisbon-1'):  # the same workflow again: DBOS answers from the record
                print('again:', await forecast('Weather in Lisbon?'))
            print(f'model calls the second time: {model_calls - calls}')
        finally:
            DBOS.destroy()


if __name__ == '__main__':
    asyncio.run(main())
