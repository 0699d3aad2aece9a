"""A durable agent with skills, as its own process: `python durable_dbos_app.py WORK MODE DATABASE`.

DBOS keeps its system database at DATABASE, an SQLAlchemy URL (SQLite or PostgreSQL); the skills are `WORK/skills`;
the `forecast` tool appends a line to `WORK/forecast.log` each time its body runs; the prompt is `WORK/prompt` if
there is one. MODE `start` starts the workflow,
and the scripted model kills this process (SIGKILL, no cleanup) at the request named by `WORK/kill_at`; MODE
`recover` lets DBOS recover the workflow at launch and prints, as JSON, what the recovered run saw.

With `WORK/variant` the agent runs skill scripts in a workspace instead (see `durable_tally`): the workflow is a
conversation of two runs, and once it is recovered, a second workflow continues its history.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from dbos import DBOS, DBOSConfig, SetWorkflowID
from pydantic_ai import Agent
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import Skills
from skillshelf.capability.dbos_steps import SkillSteps

from durable_tally import (
    CONTINUED,
    CONVERSATION,
    log_launches,
    tally_capabilities,
    tally_responses,
    variant_of,
    workspace_refs,
)
from durable_weather import (
    crash_at_chosen_request,
    first_prompt,
    first_run_script,
    itinerary_skill,
    sub_agent_response,
    weather_skill,
    what_the_model_saw,
)

WORKFLOW_ID = 'trip-1'
WORK = Path(sys.argv[1])
MODE = sys.argv[2]
DATABASE = sys.argv[3]

weather = weather_skill(WORK)
itinerary = itinerary_skill(WORK)
VARIANT = variant_of(WORK)

PROMPT = first_prompt(WORK)
SCRIPT = first_run_script(PROMPT) if VARIANT is None else tally_responses()
seen: list[dict[str, Any]] = []


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """One scripted response per request; which request this is follows from the history, as on a real model."""
    if (forked := sub_agent_response(messages, info)) is not None:
        return forked  # `itinerary`'s sub-agent, inside the recorded `load_skill` call: never killed, never seen
    step = sum(isinstance(message, ModelResponse) for message in messages)
    seen.append(what_the_model_saw(step + 1, messages, info))
    if MODE == 'start':
        crash_at_chosen_request(WORK, step + 1)
    return ModelResponse(parts=list(SCRIPT[step]))


agent = Agent(
    FunctionModel(respond),
    name='trip',
    capabilities=[
        *(
            [Skills(WORK / 'skills', skills=[weather, itinerary])]
            if VARIANT is None
            else tally_capabilities(WORK, VARIANT)
        ),
        DBOSDurability(),
        SkillSteps(),
    ],
)


@DBOS.workflow()
async def plan_trip(prompt: str) -> list[str]:
    result = await agent.run(prompt)
    return [result.output]


@DBOS.workflow()
async def converse(prompts: list[str], history_json: str) -> dict[str, Any]:
    """One conversation continued: each prompt a run on the previous run's history (at first `history_json`)."""
    history = ModelMessagesTypeAdapter.validate_json(history_json)
    outputs: list[str] = []
    for prompt in prompts:
        result = await agent.run(prompt, message_history=history)
        outputs.append(result.output)
        history = result.all_messages()
    return {'outputs': outputs, 'history': ModelMessagesTypeAdapter.dump_json(history).decode()}


def skill_file_reads(event: str, args: tuple[Any, ...]) -> None:
    """Audit hook: every `SKILL.md` opened once the agent is built (no replay may read one)."""
    if event == 'open' and str(args[0]).endswith('SKILL.md'):
        with (WORK / 'skill_reads.log').open('a') as log:
            log.write(f'{args[0]}\n')


async def main() -> None:
    config: DBOSConfig = {
        'name': 'skillshelf-durable-test',
        'system_database_url': DATABASE,
        'log_level': 'WARNING',
    }
    DBOS(config=config)
    sys.addaudithook(skill_file_reads)
    if VARIANT is not None:
        log_launches(WORK)
    if MODE == 'start':
        DBOS.launch()
        with SetWorkflowID(WORKFLOW_ID):
            await (plan_trip(PROMPT) if VARIANT is None else converse(CONVERSATION, '[]'))
        raise SystemExit('the scripted model did not kill the process')
    DBOS.launch()  # recovers the workflow the killed process left pending
    handle = await DBOS.retrieve_workflow_async(WORKFLOW_ID)
    output = await handle.get_result()
    steps = await DBOS.list_workflow_steps_async(WORKFLOW_ID)
    names = [step['function_name'] for step in steps]
    summary = {'output': output, 'seen': seen, 'steps': names, 'pid': os.getpid()}
    if VARIANT is not None:
        summary.update(await continue_conversation(output))
    print(json.dumps(summary))
    DBOS.destroy()


async def continue_conversation(recovered: dict[str, Any]) -> dict[str, Any]:
    """The recovered conversation continued by a new workflow, as an application would on the user's next message."""
    with SetWorkflowID(f'{WORKFLOW_ID}-continued'):
        continued = await converse(CONTINUED, recovered['history'])
    steps = await DBOS.list_workflow_steps_async(f'{WORKFLOW_ID}-continued')
    return {
        'output': [*recovered['outputs'], *continued['outputs']],
        'refs': workspace_refs(ModelMessagesTypeAdapter.validate_json(continued['history'])),
        'continued_steps': [step['function_name'] for step in steps],
    }


if __name__ == '__main__':
    import asyncio

    asyncio.run(main())
    # Skip interpreter teardown, which waits about 2 s for threads DBOS leaves behind after `destroy`: everything is
    # printed and recorded by now.
    sys.stdout.flush()
    os._exit(0)
