"""The model's own file tools on the run's workspace (`Skills(file_tools=True)`), and `run_command` with its
approvals: nothing runs unasked unless a loaded skill the application trusts allows it."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic_ai import Agent, BinaryContent
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.workspaces import Workspace

from skillshelf import Skills, SkillSandbox
from skillshelf.sandbox import SandboxWorkspace

from reliability.ledger import case
from scripted_model import Script, call, tool_returns

OUTPUT = [str, DeferredToolRequests]


def png(width: int, height: int) -> bytes:
    """A real PNG of one colour, written with zlib alone."""
    row = b'\x00' + b'\xff\x00\x00' * width
    raw = zlib.compress(row * height)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))

    header = struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0)
    return b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + chunk(b'IDAT', raw) + chunk(b'IEND', b'')


def skill_library(root: Path, allowed: str = '') -> Path:
    folder = root / 'lib' / 'docs-kit'
    (folder / 'scripts').mkdir(parents=True)
    front = f'---\nname: docs-kit\ndescription: Work on documents.\n{allowed}---\nEdit files.\n'
    (folder / 'SKILL.md').write_text(front, encoding='utf-8')
    (folder / 'scripts' / 'tool.py').write_text('print(1)\n', encoding='utf-8')
    return folder.parent


def file_skills(root: Path) -> Skills[Any]:
    """The file tools on a library of one skill; the agents built with them take approvals (`OUTPUT`), as an
    application giving a host workspace does, so that `run_command` is asked about rather than refused."""
    return Skills(skill_library(root), file_tools=True)


def returns(messages: list[ModelMessage], tool: str) -> list[Any]:
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == tool
    ]


def workspaces(tmp_path: Path) -> list[AbstractCapability[Any]]:
    (tmp_path / 'work').mkdir()
    return [LocalWorkspace(tmp_path / 'work')]


def test_the_model_writes_edits_lists_and_reads_files(workspace: AbstractCapability[Any], tmp_path: Path) -> None:
    model = Script(
        [
            [call('write_file', path='notes/plan.md', content='step one\nstep two\n')],
            [call('edit_file', path='notes/plan.md', old_text='step two', new_text='step 2')],
            [call('list_files')],
            [call('read_file', path='notes/plan.md')],
            [call('edit_file', path='notes/plan.md', old_text='step', new_text='x')],
        ]
    )
    agent = Agent(model.model(), capabilities=[workspace, file_skills(tmp_path)], output_type=OUTPUT)
    messages = agent.run_sync('plan').all_messages()
    assert tool_returns(messages, 'write_file') == ["Wrote 'notes/plan.md' (18 bytes)."]
    assert tool_returns(messages, 'edit_file') == [
        "Edited 'notes/plan.md'.",
        "Cannot edit 'notes/plan.md': `old_text` occurs 2 times; give text that occurs exactly once.",
    ]
    assert tool_returns(messages, 'list_files') == ['notes/plan.md (16 bytes)']
    assert tool_returns(messages, 'read_file') == ['     1\tstep one\n     2\tstep 2']


def put_file(workspace: AbstractCapability[Any], tmp_path: Path, path: str, data: bytes) -> dict[str, Any]:
    """Put a file in the workspace the way an application does before a run; the run's extra arguments."""
    if isinstance(workspace, LocalWorkspace):
        (tmp_path / 'work' / path).write_bytes(data)
        return {}
    assert isinstance(workspace, SkillSandbox)
    backend = SandboxWorkspace(workspace)
    anyio.run(Workspace(backend).write_bytes, path, data)
    return {'workspace': backend}


def test_an_image_comes_back_as_an_image_the_model_sees(workspace: AbstractCapability[Any], tmp_path: Path) -> None:
    picture = png(4, 3)
    model = Script([[call('read_file', path='thumb.png')]])
    agent = Agent(model.model(), capabilities=[workspace, file_skills(tmp_path)], output_type=OUTPUT)
    result = agent.run_sync('look', **put_file(workspace, tmp_path, 'thumb.png', picture))
    [content] = returns(result.all_messages(), 'read_file')
    assert content[0] == f"'thumb.png' ({len(picture)} bytes):"
    assert isinstance(content[1], BinaryContent)
    assert (content[1].data, content[1].media_type) == (picture, 'image/png')


def test_paths_outside_the_workspace_and_skill_copies_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / 'secret.txt'
    secret.write_text('SECRET', encoding='utf-8')
    (tmp_path / 'work').mkdir()
    (tmp_path / 'work' / 'link.txt').symlink_to(secret)
    model = Script(
        [
            [call('read_file', path='../secret.txt')],
            [call('read_file', path=str(secret))],
            [call('read_file', path='link.txt')],
            [call('write_file', path='.skillshelf/skills/docs-kit/scripts/tool.py', content='print("changed")')],
        ]
    )
    capabilities = [LocalWorkspace(tmp_path / 'work'), file_skills(tmp_path)]
    messages = Agent(model.model(), capabilities=capabilities, output_type=OUTPUT).run_sync('peek').all_messages()
    reads = tool_returns(messages, 'read_file')
    assert all(reply.endswith('it is outside the workspace.') for reply in reads), reads
    assert not any('SECRET' in reply for reply in reads)
    [write] = tool_returns(messages, 'write_file')
    assert "it is a skill's own file" in write
    case('Resource reads', 'file tools reach outside the workspace (.., absolute, symlink)', f'refused: {reads[2]}')


def delete_database() -> str:
    return 'deleted'


def host_tools() -> FunctionToolset[Any]:
    tools = FunctionToolset[Any]()
    tools.add_function(delete_database, requires_approval=True)
    return tools


def command_agent(tmp_path: Path, allowed: str, trusted: bool, steps: list[Any]) -> tuple[Script, Agent[None, Any]]:
    library = skill_library(tmp_path, allowed)
    skills = Skills(library, file_tools=True, trusted_directories=[library] if trusted else [])
    model = Script([[call('load_skill', name='docs-kit')], *steps])
    agent = Agent(
        model.model(), capabilities=[*workspaces(tmp_path), skills], toolsets=[host_tools()], output_type=OUTPUT
    )
    return model, agent


def test_a_command_waits_for_approval_and_runs_once_approved(tmp_path: Path) -> None:
    _, agent = command_agent(tmp_path, '', False, [[call('run_command', command='echo hello > out.txt; cat out.txt')]])
    result = agent.run_sync('go')
    assert isinstance(result.output, DeferredToolRequests)
    [waiting] = result.output.approvals
    assert result.output.metadata[waiting.tool_call_id] == {'command': 'echo hello > out.txt; cat out.txt'}
    approved = agent.run_sync(
        message_history=result.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={waiting.tool_call_id: True}),
    )
    assert tool_returns(approved.all_messages(), 'run_command') == ['Exit code 0.\nhello']


@pytest.mark.parametrize('trusted', [True, False])
def test_only_a_trusted_skill_pre_approves_commands_and_the_hosts_tools(tmp_path: Path, trusted: bool) -> None:
    allowed = "allowed-tools: 'Bash(echo:*) delete_database'\n"
    steps = [[call('run_command', command='echo from a skill'), call('delete_database')]]
    _, agent = command_agent(tmp_path, allowed, trusted, steps)
    result = agent.run_sync('go')
    if trusted:
        assert result.output == 'done'
        assert tool_returns(result.all_messages(), 'run_command') == ['Exit code 0.\nfrom a skill']
        assert tool_returns(result.all_messages(), 'delete_database') == ['deleted']
    else:
        assert isinstance(result.output, DeferredToolRequests)
        assert sorted(call.tool_name for call in result.output.approvals) == ['delete_database', 'run_command']
        case(
            "The model's calls",
            "an untrusted skill's allowed-tools names `Bash(echo:*)` and the host's `delete_database`",
            'neither pre-approved: both wait for the application',
        )
