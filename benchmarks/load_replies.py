"""What `load_skill` replies beyond a skill's body, for skill folders given by path.

Each folder is loaded by a real agent run (a scripted model calls `load_skill`), twice: without scripts, and with
`Skills(scripts=True)` in a `LocalWorkspace` on a temporary folder (where the reply also says where the files are and
what this machine lacks for the skill's scripts). For each it records the body's characters, the reply's, the
characters beyond the body, and what the flat list of every file path (the reply before the map) would take. Only
folder names are written, never host paths.

    python benchmarks/load_replies.py path/to/skills/docx path/to/skills/xlsx ...

Run by hand on Anthropic's skills (`git clone https://github.com/anthropics/skills`); writes
`benchmarks/results/load_replies.json` and regenerates the figures the README quotes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import report
from _results import machine, write_json
from pydantic_ai import Agent
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import LibraryOptions, SkillLibrary, Skills


def load_reply(folder: Path, scripts: bool) -> str:
    """What a real run's `load_skill` of the skill in `folder` returns, with or without scripts in a workspace."""
    name = folder.name

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('load_skill', {'name': name})])
        return ModelResponse(parts=[TextPart('done')])

    with tempfile.TemporaryDirectory() as work:
        capabilities: list[Any] = [Skills(folder, scripts=scripts)]
        if scripts:
            capabilities.insert(0, LocalWorkspace(Path(work)))
        result = Agent(FunctionModel(respond), capabilities=capabilities).run_sync(f'use {name}')
    [reply] = [
        str(part.content)
        for message in result.all_messages()
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    return reply


def measure(folder: Path) -> dict[str, Any]:
    """One skill folder's figures."""
    library = SkillLibrary.build(options=LibraryOptions(directories=[folder]))
    skill = library.skills[folder.name]
    body = skill.load_instructions().strip()
    plain, in_workspace = load_reply(folder, False), load_reply(folder, True)
    flat = f'Files (read with `read_skill_resource`): {", ".join(skill.list_resources())}.'
    return {
        'skill': folder.name,
        'files': len(skill.list_resources()),
        'body_chars': len(body),
        'reply_chars': len(plain),
        'beyond_body_chars': len(plain) - len(body),
        'workspace_beyond_body_chars': len(in_workspace.replace(body, '', 1)),
        'flat_file_list_chars': len(flat),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('folders', nargs='+', type=Path, help='skill folders, each holding a SKILL.md')
    parser.add_argument(
        '--no-readme', action='store_true', help='do not regenerate benchmarks/README.md and the figures the docs quote'
    )
    args = parser.parse_args()
    rows = [measure(folder.resolve()) for folder in args.folders]
    print(f'{"skill":<12} {"files":>5} {"body":>7} {"reply":>7} {"beyond":>7} {"in ws":>7} {"flat list":>9}')
    for row in rows:
        print(
            f'{row["skill"]:<12} {row["files"]:>5} {row["body_chars"]:>7,} {row["reply_chars"]:>7,} '
            f'{row["beyond_body_chars"]:>7,} {row["workspace_beyond_body_chars"]:>7,} {row["flat_file_list_chars"]:>9,}'
        )
    print(f'wrote {write_json("load_replies", {"machine": machine(), "rows": rows})}')
    if not args.no_readme:
        report.regenerate()


if __name__ == '__main__':
    main()
