"""Issue #38, class 1: a trusted skill's `allowed-tools: Bash(git status:*)` pre-approved `run_command` lines such as
`git status || rm -f notes.txt`: the rule was matched on the line's words, but the line runs under `sh -c`, so the
user's file was deleted without a question, in the sandbox and on the host under `LocalWorkspace`.

Now the rules pre-approve a line only when it is simple commands joined by `;`, `&&`, `||` or `|`
(`capability.simple_command`) and a rule matches each; every other line reaches the application as a deferred
call. Each case is a real run: an `Agent` on a scripted `FunctionModel`, `run_command` under pydantic-ai's
`LocalWorkspace` (real processes on a temporary folder) and skillshelf's `SkillSandbox` (real bubblewrap). The
property at the end runs every line the check accepts under real `dash` and `bash`, and holds them to running
exactly the programs with exactly the words the check found.
"""

from __future__ import annotations

import os
import posixpath
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

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
from skillshelf.capability.simple_command import CommandList, NotASimpleCommand, read_commands
from skillshelf.sandbox import SandboxWorkspace

from reliability.ledger import case, example
from sandbox_support import BWRAP_PROBLEM
from scripted_model import Script, call, parent_and_fork, tool_returns
from skill_files import write_skill

OUTPUT = [str, DeferredToolRequests]
T = TypeVar('T')
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
    on_own_loop(Workspace(backend).write_bytes, 'notes.txt', NOTES)

    async def read() -> bytes | None:
        try:
            return await Workspace(backend).read_bytes('notes.txt')
        except (OSError, WorkspaceError):
            return None

    return sandbox, {'workspace': backend}, lambda: on_own_loop(read)


def on_own_loop(function: Callable[..., Awaitable[T]], *args: Any) -> T:
    """`anyio.run(function, *args)` in a thread of its own: on this thread it would leave the event loop `run_sync`
    keeps here unset but open, to be warned about (`ResourceWarning`) in whichever test collects it."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, function, *args).result()


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
    lines = ['git status', "git status --short -- 'notes.txt'", 'git status --short || git status']
    result, notes = run_commands(tmp_path, kind, *lines)
    assert result.output == 'done'
    replies = tool_returns(result.all_messages(), 'run_command')
    assert len(replies) == 3
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
SNIPPETS = [' ', '\t', 'a', 'b-c', '--x=1', '%', '/', ',', ':', '@', '+', "'", '"', '$', '$(', '${', '`', ';', '||']
SNIPPETS += ['&', '|', '&&', '<', '>', '>>', '<<', '(', ')', '{', '}', '\n', '\\', '*', '?', '[', ']', '~', '#']
SNIPPETS += ['!', 'é', 'x=1', 'rm', 'if', ' then ']
_QUOTABLE = st.lists(st.sampled_from([snippet for snippet in SNIPPETS if snippet not in "'\n"]), max_size=5).map(
    ''.join
)
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
_QUOTED_WORD = st.one_of(
    st.sampled_from(['a', 'b-c', '--x=1', '%', ',', 'x=1', 'if']),
    _QUOTABLE.map(lambda text: f"'{text}'"),
    _QUOTABLE.filter(lambda text: not set(text) & set('"$`\\')).map(lambda text: f'"{text}"'),
)
_COMMAND = st.tuples(
    st.sampled_from(['prog', 'git', 'rm', "'pr og'", 'sub/prog']),
    st.lists(st.one_of(_QUOTED_WORD, _QUOTED_WORD, _WORD), max_size=4),
)
_JOIN = st.one_of(
    st.sampled_from([';', ' ; ', '&&', ' && ', '||', ' || ', '|', ' | ']),
    st.sampled_from([' & ', '\n', ';;', '|&', '&&&', ' ']),
)
_LIST = st.tuples(_COMMAND, st.lists(st.tuples(_JOIN, _COMMAND), min_size=1, max_size=3)).map(
    lambda line: (
        ' '.join([line[0][0], *line[0][1]])
        + ''.join(join + ' '.join([program, *words]) for join, (program, words) in line[1])
    )
)
LINES = st.one_of(
    st.lists(st.sampled_from(SNIPPETS), max_size=12).map(lambda parts: 'prog' + ''.join(parts)),
    st.lists(_WORD, max_size=5).map(lambda words: ' '.join(['prog', *words])),
    _LIST,
    _LIST,
)
RUN = '\x01run'
"""What a logger writes before each run: a control character, which no word of a simple command holds."""
SHELLS = [shell for shell in ('/bin/dash', '/bin/bash') if Path(shell).exists()]


def expected_runs(found: CommandList) -> list[tuple[str, ...]]:
    """The commands that run when each exits with 0: all but the pipelines after a `||`."""
    runs: list[tuple[str, ...]] = [found.commands[0].words]
    skipping = False
    for operator, command in zip(found.operators, found.commands[1:], strict=True):
        skipping = skipping if operator == '|' else operator == '||'
        if not skipping:
            runs.append(command.words)
    return sorted(runs)


def runs_under(shell: str, line: str, programs: set[str]) -> tuple[int, list[tuple[str, ...]]]:
    """Run `line` under `shell -c` in a fresh folder whose only programs are loggers named `programs`; the exit code
    and each run the loggers saw (the program, then its arguments), sorted (a pipeline's run at once)."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for place in ('bin', 'cwd', 'runs'):
            (root / place).mkdir()
        for program in programs:
            logger = (root / 'cwd' / program) if '/' in program else (root / 'bin' / program)
            logger.parent.mkdir(parents=True, exist_ok=True)
            logger.write_text(
                f'#!/bin/sh\n{{ printf "\\001run\\0%s\\0" {shlex.quote(program)}; '
                'for word in "$@"; do printf "%s\\0" "$word"; done; } >> "$RUNS/$$"\n',
                encoding='utf-8',
            )
            logger.chmod(0o755)
        env = {'PATH': str(root / 'bin'), 'RUNS': str(root / 'runs'), 'LC_ALL': 'C.UTF-8'}
        done = subprocess.run([shell, '-c', line], cwd=root / 'cwd', env=env, capture_output=True, timeout=30)
        logs = [log.read_bytes().decode() for log in (root / 'runs').iterdir()]
    runs: list[list[str]] = []
    for word in (word for log in logs for word in log.split('\0')[:-1]):
        if word == RUN:
            runs.append([])
        else:
            runs[-1].append(word)
    return done.returncode, sorted(tuple(run) for run in runs)


@settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=500,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(line=LINES)
def test_a_line_read_as_simple_commands_runs_exactly_those_under_real_shells(line: str) -> None:
    statement = (
        'A command line read as simple commands (joined by ; && || |) runs, under real dash and bash, exactly those '
        'programs with exactly the words read, and nothing else (every other line is asked, never pre-approved)'
    )
    try:
        found = read_commands(line)
    except NotASimpleCommand as refused:
        example('simple commands', statement, f'refused: {str(refused).split(" (")[0].split(" {")[0]}')
        return
    programs = {command.program for command in found.commands}
    if any(posixpath.normpath(program) != program or program.startswith('/') for program in programs):
        example('simple commands', statement, 'read as simple commands of a program the test cannot place: not run')
        return
    for shell in SHELLS:
        code, runs = runs_under(shell, line, programs)
        assert (code, runs) == (0, expected_runs(found)), (shell, line)
    joined = (
        'one command' if len(found.commands) == 1 else 'commands joined by ' + ' '.join(sorted(set(found.operators)))
    )
    example('simple commands', statement, f'{joined}: ran as read')


def test_the_property_runs_real_shells() -> None:
    assert SHELLS, 'no dash or bash here'
    found = read_commands("prog a 'b c' || rm -f x && git 'st atus' | sub/prog")
    assert runs_under(
        SHELLS[0], "prog a 'b c' || rm -f x && git 'st atus' | sub/prog", {'prog', 'rm', 'git', 'sub/prog'}
    ) == (
        0,
        [('git', 'st atus'), ('prog', 'a', 'b c'), ('sub/prog',)],
    )
    assert expected_runs(found) == [('git', 'st atus'), ('prog', 'a', 'b c'), ('sub/prog',)]
    assert shutil.which('git') is not None, 'the run tests need git'
    assert os.access(SHELLS[0], os.X_OK)
