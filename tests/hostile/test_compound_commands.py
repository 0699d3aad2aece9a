"""Issue #38, class 1: a trusted skill's `allowed-tools: Bash(git status:*)` pre-approved `run_command` lines such as
`git status || rm -f notes.txt`: the rule was matched on the line's words, but the line runs under `sh -c`, so the
user's file was deleted without a question, in the sandbox and on the host under `LocalWorkspace`.

Now a rule pre-approves only a line that is one simple command (`capability.simple_command`) whose words it
matches; every other line reaches the application as a deferred call. Each case is a real run: an `Agent` on a
scripted `FunctionModel`, `run_command` under pydantic-ai's `LocalWorkspace` (real processes on a temporary
folder) and skillshelf's `SkillSandbox` (real bubblewrap). The property at the end runs every line the check
accepts under real `dash` and `bash`, and holds them to one program run with exactly the words the check found.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability, HandleDeferredToolCalls, LocalWorkspace
from pydantic_ai.messages import TextPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolDenied
from pydantic_ai.workspaces import Workspace, WorkspaceError

from skillshelf import Skills, SkillSandbox
from skillshelf.capability.simple_command import NotASimpleCommand, read_simple_command
from skillshelf.sandbox import SandboxWorkspace

from reliability.ledger import case, example
from sandbox_support import BWRAP_PROBLEM
from scripted_model import Script, call, parent_and_fork, tool_returns
from skill_files import write_skill

OUTPUT = [str, DeferredToolRequests]
NOTES = b'the user notes\n'
RULE = 'Bash(git status:*)'
DECLINED = 'The user declined this command.'

COMPOUND_LINES = {
    '`||`': 'git status || rm -f notes.txt',
    '`&&`': 'git status && rm -f notes.txt',
    '`;`': 'git status ; rm -f notes.txt',
    'a line break': 'git status\nrm -f notes.txt',
    '`$(...)`': 'git status $(rm -f notes.txt)',
    'backquotes': 'git status `rm -f notes.txt`',
    '`$(...)` in double quotes': 'git status "$(rm -f notes.txt)"',
    '`${...}`': 'git status ${x:-$(rm -f notes.txt)}',
    '`| sh`': "git status | sh -c 'rm -f notes.txt'",
    '`> file`': 'git status > notes.txt',
    '`&`': 'git status & rm -f notes.txt',
    'an assignment before it': 'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor '
    "GIT_CONFIG_VALUE_0='rm -f notes.txt' git status",
    'a here-doc': "git status <<'EOF'\nEOF\nrm -f notes.txt",
    '`<(...)`': 'git status <(rm -f notes.txt)',
    'a comment hiding nothing': 'git status #\nrm -f notes.txt',
}
"""Lines that delete or empty `notes.txt` under `sh -c` (`<(...)` under bash; dash refuses it as a syntax error).
`Bash(git status:*)` pre-approved all of them before the fix but the assignment (its first word is not `git`)."""


def library(root: Path) -> Path:
    write_skill(root / 'lib', 'repo-status', 'Run `git status`.', fields={'allowed-tools': RULE})
    return root / 'lib'


def workspace(kind: str, root: Path) -> tuple[AbstractCapability[Any], dict[str, Any], Callable[[], bytes | None]]:
    """The run's workspace holding the user's `notes.txt`: the capability, the run's extra arguments, and what
    `notes.txt` holds afterwards (`None`: it is gone)."""
    if kind == 'local':
        (root / 'work').mkdir()
        notes = root / 'work' / 'notes.txt'
        notes.write_bytes(NOTES)
        return LocalWorkspace(root / 'work'), {}, lambda: notes.read_bytes() if notes.exists() else None
    if BWRAP_PROBLEM is not None:
        pytest.skip(BWRAP_PROBLEM)
    sandbox = SkillSandbox(root / 'sandbox')
    backend = SandboxWorkspace(sandbox)
    anyio.run(Workspace(backend).write_bytes, 'notes.txt', NOTES)

    async def read() -> bytes | None:
        try:
            return await Workspace(backend).read_bytes('notes.txt')
        except (OSError, WorkspaceError):
            return None

    return sandbox, {'workspace': backend}, lambda: anyio.run(read)


def run_commands(tmp_path: Path, kind: str, *lines: str) -> tuple[Any, Callable[[], bytes | None]]:
    """Load the trusted skill, then call `run_command` with each line in one response."""
    capability, extra, place = workspace(kind, tmp_path)
    lib = library(tmp_path)
    skills = Skills(lib, file_tools=True, trusted_directories=[lib])
    model = Script([[call('load_skill', name='repo-status')], [call('run_command', command=line) for line in lines]])
    agent = Agent(model.model(), capabilities=[capability, skills], output_type=OUTPUT)
    return agent.run_sync('What changed?', **extra), place


@pytest.mark.parametrize('kind', ['local', 'sandbox'])
@pytest.mark.parametrize('name', list(COMPOUND_LINES))
def test_a_compound_line_waits_for_the_application_and_the_file_stays(tmp_path: Path, kind: str, name: str) -> None:
    line = COMPOUND_LINES[name]
    result, notes = run_commands(tmp_path, kind, line)
    assert notes() == NOTES
    assert tool_returns(result.all_messages(), 'run_command') == []  # nothing ran
    assert isinstance(result.output, DeferredToolRequests)
    [waiting] = result.output.approvals
    assert (waiting.tool_name, result.output.metadata[waiting.tool_call_id]) == ('run_command', {'command': line})
    case(
        "The model's calls",
        f'`run_command` with {name} after `git status`, a trusted skill allowing `{RULE}` ({kind})',
        f'not pre-approved: it waits for the application ({type(result.output).__name__}), notes.txt unchanged',
    )


@pytest.mark.parametrize('kind', ['local', 'sandbox'])
def test_a_plain_git_status_still_runs_without_asking(tmp_path: Path, kind: str) -> None:
    result, notes = run_commands(tmp_path, kind, 'git status', "git status --short -- 'notes.txt'")
    assert result.output == 'done'
    replies = tool_returns(result.all_messages(), 'run_command')
    assert len(replies) == 2
    assert all(reply.startswith('Exit code ') for reply in replies)  # 128 outside a repository: git ran
    assert all('not a git repository' in reply for reply in replies)
    assert notes() == NOTES


def test_the_same_line_runs_once_the_application_approves_it(tmp_path: Path) -> None:
    # The fix asks; it does not forbid. What runs is the application's decision, under the real shell.
    result, notes = run_commands(tmp_path, 'local', COMPOUND_LINES['`||`'])
    [waiting] = result.output.approvals
    lib = tmp_path / 'lib'
    agent = Agent(
        Script([]).model(),
        capabilities=[LocalWorkspace(tmp_path / 'work'), Skills(lib, file_tools=True, trusted_directories=[lib])],
        output_type=OUTPUT,
    )
    approved = agent.run_sync(
        message_history=result.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={waiting.tool_call_id: True}),
    )
    [reply] = tool_returns(approved.all_messages(), 'run_command')
    assert reply.startswith('Exit code 0.\nfatal: not a git repository')  # git failed, so `rm` ran
    assert notes() is None


def test_a_forked_skill_asks_the_application_for_a_compound_line(tmp_path: Path) -> None:
    write_skill(tmp_path / 'lib', 'repo-status', 'Run git status.', fields={'allowed-tools': RULE, 'context': 'fork'})
    lib = tmp_path / 'lib'
    (tmp_path / 'work').mkdir()
    (tmp_path / 'work' / 'notes.txt').write_bytes(NOTES)
    asked: list[dict[str, Any]] = []

    def deny(ctx: RunContext[None], requests: DeferredToolRequests) -> DeferredToolResults:
        asked.extend(requests.metadata[call.tool_call_id] for call in requests.approvals)
        return requests.build_results(
            approvals={call.tool_call_id: ToolDenied(DECLINED) for call in requests.approvals}
        )

    line = COMPOUND_LINES['`||`']
    commands = [call('run_command', command='git status'), call('run_command', command=line)]
    parent, fork = Script([[call('load_skill', name='repo-status')]]), Script([commands, [TextPart('Tried.')]])
    capabilities = [
        Skills(lib, file_tools=True, trusted_directories=[lib]),
        LocalWorkspace(tmp_path / 'work'),
        HandleDeferredToolCalls(handler=deny),
    ]
    Agent(parent_and_fork(parent, fork), capabilities=capabilities).run_sync('What changed?')
    assert asked == [
        {'command': line, 'skillshelf_fork': 'repo-status'}
    ]  # the plain `git status` was the skill's to approve; the compound line was not
    plain, compound = tool_returns(fork.requests[-1].messages, 'run_command')
    assert plain.startswith('Exit code 128.')
    assert compound == DECLINED
    assert (tmp_path / 'work' / 'notes.txt').read_bytes() == NOTES
    case(
        "The model's calls",
        f'a forked skill allowing `{RULE}` runs `{line}`',
        f'asked the application (its handler; the fork\'s metadata names the skill), whose answer "{compound}" the '
        'sub-agent got; notes.txt unchanged',
    )


# Snippets a command line is made of: plain text, quotes, and every character a shell reads specially.
SNIPPETS = [' ', '\t', 'a', 'b-c', '--x=1', '%', '/', ',', ':', '@', '+', "'", '"', '$', '$(', '${', '`', ';']
SNIPPETS += ['&', '|', '&&', '<', '>', '>>', '<<', '(', ')', '{', '}', '\n', '\\', '*', '?', '[', ']', '~', '#']
SNIPPETS += ['!', 'é', 'x=1', 'rm', 'if', ' then ']
_QUOTABLE = st.lists(st.sampled_from([snippet for snippet in SNIPPETS if snippet != "'"]), max_size=5).map(''.join)
_WORD = st.lists(
    st.one_of(
        st.sampled_from(['a', 'b-c', '--x=1', '%', ',', 'é']),
        _QUOTABLE.map(lambda text: f"'{text}'"),
        _QUOTABLE.filter(lambda text: not set(text) & set('"$`\\')).map(lambda text: f'"{text}"'),
        st.sampled_from(SNIPPETS),
    ),
    min_size=1,
    max_size=4,
).map(''.join)
LINES = st.one_of(
    st.lists(st.sampled_from(SNIPPETS), max_size=12).map(lambda parts: 'prog' + ''.join(parts)),
    st.lists(_WORD, max_size=5).map(lambda words: ' '.join(['prog', *words])),
)
RUN = '\x01run'
"""What the logger writes before each run: a control character, which no word of a simple command holds."""
LOGGER = '#!/bin/sh\n{ printf "\\001run\\0"; for word in "$@"; do printf "%s\\0" "$word"; done; } >> "$RUNS"\n'
SHELLS = [shell for shell in ('/bin/dash', '/bin/bash') if Path(shell).exists()]


def runs_under(shell: str, line: str, program: str) -> tuple[int, list[list[str]]]:
    """Run `line` under `shell -c` in a fresh folder whose only program is a logger named `program`; the exit code
    and the arguments of each run the logger saw."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / 'bin').mkdir()
        (root / 'cwd').mkdir()
        logger = (root / 'cwd' / program) if '/' in program else (root / 'bin' / program)
        logger.parent.mkdir(parents=True, exist_ok=True)
        logger.write_text(LOGGER, encoding='utf-8')
        logger.chmod(0o755)
        env = {'PATH': str(root / 'bin'), 'RUNS': str(root / 'runs'), 'LC_ALL': 'C.UTF-8'}
        done = subprocess.run([shell, '-c', line], cwd=root / 'cwd', env=env, capture_output=True, timeout=30)
        log = (root / 'runs').read_bytes().decode() if (root / 'runs').exists() else ''
    runs: list[list[str]] = []
    for word in log.split('\0')[:-1]:
        if word == RUN:
            runs.append([])
        else:
            runs[-1].append(word)
    return done.returncode, runs


@settings(derandomize=True, database=None, deadline=None, max_examples=400, suppress_health_check=list(HealthCheck))
@given(line=LINES)
def test_a_line_read_as_one_simple_command_runs_as_exactly_that_under_real_shells(line: str) -> None:
    statement = (
        'A command line read as one simple command runs, under real dash and bash, exactly one program with exactly '
        'the words read (every other line is asked, never pre-approved)'
    )
    try:
        simple = read_simple_command(line)
    except NotASimpleCommand as refused:
        example('one simple command', statement, f'refused: {str(refused).split(" (")[0].split(" {")[0]}')
        return
    program = simple.program
    if program.startswith(('/', '.')) or '..' in program.split('/') or program.endswith('/'):
        example('one simple command', statement, 'read as simple, program outside the test folder: not run')
        return
    for shell in SHELLS:
        code, runs = runs_under(shell, line, program)
        assert (code, runs) == (0, [list(simple.words[1:])]), (shell, line, simple.words)
    example('one simple command', statement, 'read as simple: ran once with the same words')


def test_the_property_runs_real_shells() -> None:
    assert SHELLS, 'no dash or bash here'
    code, runs = runs_under(SHELLS[0], "prog a 'b c'", 'prog')
    assert (code, runs) == (0, [['a', 'b c']])
    assert shutil.which('git') is not None, 'the run tests need git'
    assert os.access(SHELLS[0], os.X_OK)
