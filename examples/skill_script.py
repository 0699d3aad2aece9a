"""Run a skill's bundled script: the csv-analysis skill profiles a CSV file in the run's workspace.

Runs offline with a scripted model: it loads the skill, then calls `run_skill_script` with the CSV as an input
file. By default the agent has no workspace of its own, so skillshelf supplies its bubblewrap sandbox (one folder per
conversation, no network, nothing of the host but the system and Python); it needs `bwrap` (Debian/Ubuntu:
`apt-get install bubblewrap`). `--local` gives the agent pydantic-ai's `LocalWorkspace` in a temporary folder instead:
scripts run unsandboxed there, trusted like the program's own code (`script_approval=False`).

    python examples/skill_script.py
    python examples/skill_script.py --local
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import Skills, SkillSandbox

SKILLS_DIR = Path(__file__).resolve().parent.parent / 'skills'
SALES = 'region,amount\nnorth,120\nsouth,\nnorth,80\neast,45.5\n'


def scripted_model() -> FunctionModel:
    steps: list[list[Any]] = [
        [ToolCallPart('load_skill', {'name': 'csv-analysis'})],
        [
            ToolCallPart(
                'run_skill_script',
                {
                    'name': 'csv-analysis',
                    'script': 'scripts/profile.py',
                    'args': ['sales.csv'],
                    'files': {'sales.csv': SALES},
                },
            )
        ],
        [TextPart('4 rows; amount is missing once and ranges from 45.5 to 120.')],
    ]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = sum(isinstance(message, ModelResponse) for message in messages)
        return ModelResponse(parts=steps[min(turn, len(steps) - 1)])

    return FunctionModel(respond, model_name='scripted')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--local', action='store_true', help='run the script without a sandbox (LocalWorkspace)')
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        workspace = [LocalWorkspace(folder)] if args.local else []
        # On the host nothing isolates a script, so it would be refused (no one is asked) unless the skills are trusted.
        skills = Skills(SKILLS_DIR, scripts=True, script_approval=False if args.local else None)
        agent = Agent(scripted_model(), capabilities=[*workspace, skills])
        result = agent.run_sync('Profile my sales data.')
        if not args.local and result.response.workspace_ref is not None:
            asyncio.run(
                SkillSandbox().delete(result.response.workspace_ref)
            )  # the conversation is over: its folder can go
    for message in result.new_messages():
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                print(f'model -> {part.tool_name}({part.args_as_json_str()})')
            elif isinstance(part, ToolReturnPart) and part.tool_name == 'run_skill_script':
                print('tool  <- ' + part.model_response_str().replace('\n', '\n         '))
            elif isinstance(part, TextPart):
                print(f'model : {part.content}')


if __name__ == '__main__':
    main()
