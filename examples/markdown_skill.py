"""A markdown knowledge skill with bundled files: search, load, then read one of its resources.

python examples/markdown_skill.py
"""

from __future__ import annotations

from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import Skills

SKILLS_DIR = Path(__file__).resolve().parent.parent / 'skills'
QUERY = 'SELECT * FROM orders WHERE customer_id NOT IN (SELECT id FROM blocked)'


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    steps = [
        [ToolCallPart('search_skills', {'query': 'review a SQL query', 'limit': 3})],
        [ToolCallPart('load_skill', {'name': 'sql-review'})],
        [ToolCallPart('read_skill_resource', {'name': 'sql-review', 'path': 'references/checklist.md'})],
        [TextPart('Bug: NOT IN returns no rows if blocked.id has a NULL; use NOT EXISTS.')],
    ]
    turn = sum(isinstance(message, ModelResponse) for message in messages)
    return ModelResponse(parts=steps[min(turn, len(steps) - 1)])


def main() -> None:
    agent = Agent(FunctionModel(respond, model_name='scripted'), capabilities=[Skills(SKILLS_DIR)])
    result = agent.run_sync(f'Review this query: {QUERY}')
    for message in result.new_messages():
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                print(f'model -> {part.tool_name}({part.args_as_json_str()})')
            elif isinstance(part, ToolReturnPart):
                print('tool  <- ' + part.model_response_str()[:400].replace('\n', '\n         '))
    print(f'answer: {result.output}')


if __name__ == '__main__':
    main()
