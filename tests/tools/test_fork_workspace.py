"""A forked skill's sub-agent works in the parent run's workspace: its skill's files are there (`${SKILL_DIR}` names
them), it runs its scripts and uses the file tools, what it writes is there for the parent, and its calls that need
approval ask as the parent's would, under pydantic-ai's `LocalWorkspace` and skillshelf's `SkillSandbox`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability, HandleDeferredToolCalls, LocalWorkspace
from pydantic_ai.messages import TextPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults

from skillshelf import Skills, SkillWarning

from reliability.ledger import case
from scripted_model import Script, call, parent_and_fork, tool_returns
from skill_files import write_skill

TAKES_APPROVALS = [str, DeferredToolRequests]
"""The parent agent's output types when the application takes approvals (so nothing is refused for want of one)."""
SCRIPT = 'import sys\nopen("greeting.txt", "w").write("hello " + sys.argv[1])\nprint("wrote greeting.txt")\n'


def library(tmp_path: Path, body: str, **fields: str) -> Path:
    """A library holding the forked skill `memo` (with a style guide and a script) and an ordinary skill."""
    write_skill(
        tmp_path / 'lib',
        'memo',
        body,
        fields={'context': 'fork', **fields},
        files={'style.md': 'Sign every memo "— the team".\n', 'scripts/greet.py': SCRIPT},
    )
    write_skill(tmp_path / 'lib', 'vault', 'Private.', files={'scripts/leak.py': 'print("leaked")\n'})
    return tmp_path / 'lib'


def returns_in(script: Script, tool: str) -> list[Any]:
    return tool_returns(script.requests[-1].messages, tool)


def test_the_fork_reads_its_skills_file_and_writes_one_the_parent_then_reads(
    workspace: AbstractCapability[Any], tmp_path: Path
) -> None:
    lib = library(tmp_path, 'Read ${SKILL_DIR}/style.md, then write memo.txt about $ARGUMENTS.')
    parent = Script([[call('load_skill', name='memo', arguments='the offsite')], [call('read_file', path='memo.txt')]])
    fork = Script(
        [
            [call('read_file', path='.skillshelf/skills/memo/style.md')],
            [call('write_file', path='memo.txt', content='The offsite is on Friday.\n— the team')],
            [TextPart('Wrote memo.txt.')],
        ]
    )
    capabilities = [Skills(lib, file_tools=True), workspace]
    result = Agent(parent_and_fork(parent, fork), capabilities=capabilities, output_type=TAKES_APPROVALS).run_sync(
        'Write a memo about the offsite'
    )

    instructions = fork.requests[0].instructions or ''
    folder = next(word for word in instructions.split() if word.endswith('/.skillshelf/skills/memo/style.md,'))
    assert instructions.endswith(f'Read {folder.rstrip(",")}, then write memo.txt about the offsite.')
    assert '${SKILL_DIR}' not in instructions  # expanded to the skill's folder in the workspace
    assert returns_in(fork, 'read_file')[0] == '     1\tSign every memo "— the team".'
    # What the sub-agent wrote is in the parent run's workspace: the parent reads it with its own tool.
    assert tool_returns(result.all_messages(), 'read_file') == ['     1\tThe offsite is on Friday.\n     2\t— the team']
    [reply] = tool_returns(result.all_messages(), 'load_skill')
    assert reply.endswith('Wrote memo.txt.')
    assert fork.requests[0].tools == [
        'edit_file',
        'list_files',
        'read_file',
        'read_skill_resource',
        'run_command',
        'write_file',
    ]


def test_the_fork_runs_its_skills_script_and_the_parent_sees_what_it_wrote(
    workspace: AbstractCapability[Any], tmp_path: Path
) -> None:
    lib = library(tmp_path, 'Run scripts/greet.py with the name, then report.')
    parent = Script([[call('load_skill', name='memo', arguments='Ada')], [call('read_file', path='greeting.txt')]])
    fork = Script(
        [
            [
                call('run_skill_script', name='memo', script='scripts/greet.py', args=['Ada']),
                call('run_skill_script', name='vault', script='scripts/leak.py'),
            ],
            [TextPart('Greeted Ada.')],
        ]
    )
    skills = Skills(lib, scripts=True, file_tools=True, script_approval=False)
    agent = Agent(parent_and_fork(parent, fork), capabilities=[skills, workspace], output_type=TAKES_APPROVALS)
    result = agent.run_sync('Greet Ada')

    ran, refused = returns_in(fork, 'run_skill_script')
    assert ran == 'scripts/greet.py exited with code 0.\nOutput:\nwrote greeting.txt'
    assert refused.startswith("Only the skill 'memo' runs here, so only its scripts are available")
    assert "run its scripts with `run_skill_script` (name 'memo')" in (fork.requests[0].instructions or '')
    assert tool_returns(result.all_messages(), 'read_file') == ['     1\thello Ada']


def test_a_forks_shell_command_is_refused_unless_the_application_approves_it(tmp_path: Path) -> None:
    lib = library(tmp_path, 'Clean up.')
    (tmp_path / 'work').mkdir()
    command = call('run_command', command='touch removed-everything')

    def run(*extra: AbstractCapability[Any], **options: Any) -> Script:
        parent, fork = Script([[call('load_skill', name='memo')]]), Script([[command], [TextPart('Tried.')]])
        capabilities = [Skills(lib, file_tools=True), LocalWorkspace(tmp_path / 'work'), *extra]
        result = Agent(parent_and_fork(parent, fork), capabilities=capabilities, **options).run_sync('Clean up')
        assert result.output == 'done'
        return fork

    # The application takes approvals (it would get the parent's), but a sub-agent cannot wait for them.
    refused = run(output_type=TAKES_APPROVALS)
    [reply] = returns_in(refused, 'run_command')
    assert reply.startswith("Not run: this call needs approval, and no one could give it: the skill 'memo' runs")
    assert not (tmp_path / 'work' / 'removed-everything').exists()
    # It takes none, and the workspace is the host: the parent's `Skills` refuses it.
    with pytest.warns(SkillWarning, match='`run_command` will be refused'):
        on_the_host = run()
    [reply] = returns_in(on_the_host, 'run_command')
    assert reply.startswith('Not run: this command needs approval, and no one can give it here')
    assert not (tmp_path / 'work' / 'removed-everything').exists()
    case('Runs', 'a forked skill runs a shell command no one approved', f'not run; the sub-agent is told: {reply}')

    asked: list[DeferredToolRequests] = []

    def approve(ctx: RunContext[None], requests: DeferredToolRequests) -> DeferredToolResults:
        asked.append(requests)
        return requests.build_results(approve_all=True)

    approved = run(HandleDeferredToolCalls(handler=approve))
    assert returns_in(approved, 'run_command') == ['Exit code 0. It printed nothing.']
    assert (tmp_path / 'work' / 'removed-everything').exists()
    [requests] = asked
    [pending] = requests.approvals
    assert (pending.tool_name, requests.metadata[pending.tool_call_id]) == (
        'run_command',
        {'command': 'touch removed-everything', 'skillshelf_fork': 'memo'},
    )


@pytest.mark.parametrize('allowed', ['', 'Bash(python scripts/greet.py:*)'])
def test_with_script_approval_a_forks_script_runs_only_when_its_allowed_tools_preapproves_it(
    tmp_path: Path, allowed: str
) -> None:
    lib = library(tmp_path, 'Greet.', **({'allowed-tools': allowed} if allowed else {}))
    (tmp_path / 'work').mkdir()
    parent = Script([[call('load_skill', name='memo', arguments='Ada')]])
    fork = Script([[call('run_skill_script', name='memo', script='scripts/greet.py', args=['Ada'])], [TextPart('Ok.')]])
    skills = Skills(lib, scripts=True, script_approval=True)
    capabilities = [skills, LocalWorkspace(tmp_path / 'work')]
    Agent(parent_and_fork(parent, fork), capabilities=capabilities, output_type=TAKES_APPROVALS).run_sync('Greet')

    [reply] = returns_in(fork, 'run_skill_script')
    if allowed:
        assert reply == 'scripts/greet.py exited with code 0.\nOutput:\nwrote greeting.txt'
    else:
        assert reply.startswith('Not run: this call needs approval')
    assert (tmp_path / 'work' / 'greeting.txt').exists() == bool(allowed)
