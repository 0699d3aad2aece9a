"""One sandbox's limits must not hurt another's: skillshelf's bubblewrap sandbox (`SkillSandbox`) under many
conversations at once, some of them hostile, with real `bwrap` and real agent runs.

- 200 concurrent runs, each its own conversation: 20 fork-bomb to the process cap and hold it, 4 fill their
  workspace as fast as they can, 4 fill `/tmp`; every harmless run must succeed (each runs three child processes).
- A fast writer is stopped near its workspace's limit (the limit is held by watching; one runaway file stops
  exactly at it), and the conversation is told its workspace is full.
- `/tmp` and `/dev/shm` in the sandbox are private, writable and capped; nothing lands in the host's.
- An agent not running as root (a subprocess as `nobody`) keeps each command's process count apart too.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage

from skillshelf import SandboxLimits, ScriptLimits, Skills, SkillSandbox

from reliability.ledger import case, figure
from repo_paths import REPO
from sandbox_support import needs_bwrap, python_for_nobody
from scripted_model import Script, call, tool_returns
from skill_files import write_skill

pytestmark = needs_bwrap

AREA = 'Runs'
RUNS = 200
OVERSHOOT_UNDER_LOAD = 2 << 30
"""What a workspace filler may write past its limit while 200 runs share two cores with other work (measured: 0.2-0.8
GiB at ~1.5 GB/s of page cache; alone, a filler stops within 2x the limit: see the fast-writer test). Before the
watch had a thread of its own, nothing bounded it but the time limit."""
LIMITS = SandboxLimits(max_workspace_bytes=64 << 20, max_tmp_bytes=32 << 20)
TIME = ScriptLimits(timeout=90)
HARMLESS = """import subprocess, sys
for _ in range(3):
    subprocess.run(['true'], check=True)
with open('mine.txt', 'w') as file:
    file.write(sys.argv[1])
print('ok', open('mine.txt').read())
"""
BOMB = """import os, sys, time
children = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(float(sys.argv[1]))
            os._exit(0)
        children += 1
except OSError as error:
    print('bomb capped at', children, type(error).__name__, flush=True)
time.sleep(float(sys.argv[1]))
"""
FILL = """import os
data = b'x' * (1 << 20)
files = 0
try:
    while True:
        with open(f'fill-{files}', 'wb') as file:
            for _ in range(8):
                file.write(data)
        files += 1
except OSError as error:
    print('filler refused after', files, 'files:', type(error).__name__)
"""
ONE_FILE = """data = b'x' * (1 << 20)
written = 0
try:
    with open('huge.bin', 'wb') as file:
        while True:
            file.write(data)
            written += 1
except OSError as error:
    print('one file refused after', written, 'MiB:', type(error).__name__)
"""
TMP_FILL = """import sys
data = b'x' * (1 << 20)
written = 0
try:
    with open(sys.argv[1], 'wb') as file:
        while True:
            file.write(data)
            file.flush()
            written += 1
except OSError as error:
    print('filled', sys.argv[1], written, 'MiB:', type(error).__name__)
"""
SCRIPTS = {'ok.py': HARMLESS, 'bomb.py': BOMB, 'fill.py': FILL, 'one_file.py': ONE_FILE, 'tmp_fill.py': TMP_FILL}


def library(root: Path) -> Path:
    files = {f'scripts/{name}': text for name, text in SCRIPTS.items()}
    return write_skill(root / 'lib', 'tool-kit', 'Run the scripts.', description='Scripts.', files=files).parent


def steps(script: str, args: list[str]) -> Script:
    return Script(
        [
            [call('load_skill', name='tool-kit')],
            [call('run_skill_script', name='tool-kit', script=f'scripts/{script}', args=args)],
        ]
    )


def kind(index: int) -> tuple[str, list[str]]:
    """What run `index` does: every 10th fork-bombs, four fill their workspace, four fill /tmp, the rest are harmless."""
    if index % 10 == 0:
        return 'bomb.py', ['20']
    if index % 50 == 7:
        return 'fill.py', []
    if index % 50 == 13:
        return 'tmp_fill.py', ['/tmp/filler']
    return 'ok.py', [f'run-{index}']


def du(folder: Path) -> int:
    return int(subprocess.run(['du', '-sxB1', str(folder)], capture_output=True, text=True).stdout.split()[0])


def owners(root: Path) -> list[dict[str, Any]]:
    return [
        json.loads((place / 'owner.json').read_text()) for place in root.iterdir() if (place / 'owner.json').exists()
    ]


async def test_two_hundred_concurrent_runs_with_hostile_neighbours_all_succeed(tmp_path: Path) -> None:
    sandbox = SkillSandbox(tmp_path / 'ws', limits=LIMITS)
    skills = Skills(library(tmp_path), scripts=True, script_limits=TIME)

    async def one(index: int) -> tuple[str, str, Any]:
        script, args = kind(index)
        result = await Agent(steps(script, args).model(), capabilities=[sandbox, skills]).run('go')
        [reply] = tool_returns(result.all_messages(), 'run_skill_script')
        return script, reply, result.response.workspace_ref

    results = await asyncio.gather(*(one(index) for index in range(RUNS)))
    harmless = [(index, reply) for index, (script, reply, _) in enumerate(results) if script == 'ok.py']
    failed = [
        index for index, reply in harmless if reply != f'scripts/ok.py exited with code 0.\nOutput:\nok run-{index}'
    ]
    bombs = [reply for script, reply, _ in results if script == 'bomb.py']
    fillers = [(reply, ref) for script, reply, ref in results if script == 'fill.py']
    tmp_fillers = [reply for script, reply, _ in results if script == 'tmp_fill.py']
    assert failed == [], [reply for index, reply in harmless if index in failed][:3]
    assert all('bomb capped at' in reply for reply in bombs), bombs
    assert all(int(reply.split('bomb capped at ')[1].split()[0]) < LIMITS.max_processes for reply in bombs)
    filled: list[int] = []
    for reply, ref in fillers:
        assert reply.startswith('scripts/fill.py was stopped: it filled the workspace past its size limit.'), reply
        folder = sandbox.folder(ref)
        assert folder is not None
        filled.append(du(folder))
    assert all('ENOSPC' in reply or 'OSError' in reply for reply in tmp_fillers), tmp_fillers
    if os.geteuid() == 0:  # each workspace its own user, so no two share a process count
        uids = [owner['uid'] for owner in owners(tmp_path / 'ws')]
        assert len(uids) == RUNS
        assert len(set(uids)) == RUNS
    for _, _, ref in results:  # gigabytes of fillers: not left to pytest's kept temporary folders
        assert await sandbox.delete(ref)
    # The limit is held by watching (no hard quota): a writer at page-cache speed (~1.5 GB/s here) beside 200 runs
    # on two cores writes for a few rounds of the watch before it is killed. Alone it stops within 2x the limit.
    assert max(filled) < LIMITS.max_workspace_bytes + OVERSHOOT_UNDER_LOAD, filled
    figure(
        'Concurrent sandboxed script runs',
        RUNS,
        f'({len(harmless)} harmless beside 20 fork bombs and 8 disk fillers; harmless runs failed: {len(failed)})',
    )
    case(
        AREA,
        f'{RUNS} concurrent sandboxed runs: 20 fork-bomb to the process cap, 4 fill their workspace, 4 fill /tmp',
        f'{len(failed)} of {len(harmless)} harmless runs failed; bombs capped ({bombs[0].splitlines()[-1]}), '
        f'fillers stopped at {max(filled) / (1 << 20):.0f} MiB at most of a 64 MiB limit '
        f'({fillers[0][0].splitlines()[0]})',
    )


def run_once(sandbox: SkillSandbox, skills: Skills[Any], script: str, args: list[str], **extra: Any) -> Any:
    return Agent(steps(script, args).model(), capabilities=[sandbox, skills]).run_sync('go', **extra)


def replies(messages: list[ModelMessage]) -> list[str]:
    return tool_returns(messages, 'run_skill_script')


def test_a_fast_writer_is_stopped_near_the_workspace_limit_and_the_workspace_stays_full(tmp_path: Path) -> None:
    limits = SandboxLimits(max_workspace_bytes=64 << 20)
    sandbox = SkillSandbox(tmp_path / 'ws', limits=limits)
    skills = Skills(library(tmp_path), scripts=True, script_limits=ScriptLimits(timeout=60))
    first = run_once(sandbox, skills, 'fill.py', [])
    [stopped] = replies(first.all_messages())
    folder = sandbox.folder(first.response.workspace_ref)
    assert folder is not None
    used = du(folder)
    assert stopped.startswith('scripts/fill.py was stopped: it filled the workspace past its size limit.'), stopped
    # The cap is a watch on the folder's size, so a writer gets ahead of it by what it writes while the watch waits for
    # a CPU: 2x the limit on a quiet machine, more under load. Unwatched, this script writes until its 60 s are up.
    assert used < 8 * limits.max_workspace_bytes, f'{used:,} bytes'
    again = Agent(steps('ok.py', ['again']).model(), capabilities=[sandbox, skills]).run_sync(
        'go', message_history=first.all_messages()
    )
    [refused] = replies(again.new_messages())
    assert refused.startswith("Cannot run 'scripts/ok.py' of 'tool-kit': the workspace is full"), refused
    assert str(folder) not in refused
    case(
        AREA,
        'a skill script writes 8 MiB files as fast as it can into a 64 MiB workspace',
        f'stopped at {used / (1 << 20):.0f} MiB: {stopped.splitlines()[0]} Next run: {refused}',
    )


def test_one_runaway_file_stops_exactly_at_the_room_left(tmp_path: Path) -> None:
    limits = SandboxLimits(max_workspace_bytes=48 << 20, max_file_bytes=1 << 30)
    sandbox = SkillSandbox(tmp_path / 'ws', limits=limits)
    skills = Skills(library(tmp_path), scripts=True, script_limits=ScriptLimits(timeout=60))
    result = run_once(sandbox, skills, 'one_file.py', [])
    [reply] = replies(result.all_messages())
    folder = sandbox.folder(result.response.workspace_ref)
    assert folder is not None
    size = (folder / 'huge.bin').stat().st_size
    assert size <= limits.max_workspace_bytes
    assert 'one file refused after' in reply or 'killed for writing a file past the size' in reply, reply
    case(AREA, 'a skill script writes one file without end', f'the file stops at {size:,} bytes: {reply}')


def test_tmp_and_dev_shm_are_private_writable_and_capped(tmp_path: Path) -> None:
    token = secrets.token_hex(8)
    sandbox = SkillSandbox(tmp_path / 'ws', limits=LIMITS)
    skills = Skills(library(tmp_path), scripts=True, script_limits=TIME)
    found: dict[str, str] = {}
    for target in (f'/tmp/escape-{token}', f'/dev/shm/escape-{token}'):
        [found[target]] = replies(run_once(sandbox, skills, 'tmp_fill.py', [target]).all_messages())
    for target, reply in found.items():
        written = int(reply.split(f'filled {target} ')[1].split()[0])
        assert 24 <= written <= 32, reply
        assert not os.path.exists(target)  # the host's own /tmp and /dev/shm got nothing
    stray = subprocess.run(
        ['find', '/tmp', '/var/tmp', '/dev/shm', '-xdev', '-name', f'*{token}*', '-print', '-quit'],
        capture_output=True,
        text=True,
    ).stdout
    assert stray == ''  # not under another name either
    case(
        AREA,
        'a skill script fills /tmp and /dev/shm',
        f'each stops at its cap, the host gets nothing: {"; ".join(found.values())}',
    )


NOBODY = 65534
DRIVER = """
import asyncio, json, sys
from pathlib import Path
from pydantic_ai import Agent
from skillshelf import ScriptLimits, Skills, SkillSandbox
from scripted_model import Script, call, tool_returns

root = Path(sys.argv[1])
sandbox = SkillSandbox(root / 'ws')
skills = Skills(root / 'lib', scripts=True, script_limits=ScriptLimits(timeout=60))

async def one(script, args):
    model = Script([[call('load_skill', name='tool-kit')],
                    [call('run_skill_script', name='tool-kit', script=script, args=args)]])
    result = await Agent(model.model(), capabilities=[sandbox, skills]).run('go')
    return tool_returns(result.all_messages(), 'run_skill_script')[0]

async def main():
    bombs = [one('scripts/bomb.py', ['15']) for _ in range(3)]
    harmless = [one('scripts/ok.py', [f'run-{index}']) for index in range(6)]
    print(json.dumps(await asyncio.gather(*bombs, *harmless)))

asyncio.run(main())
"""


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder for `nobody` (the test gives it to them), outside pytest's own temporary folders (closed to other
    users). Not open to all: the sandbox refuses a root inside a folder others may write to."""
    folder = Path(tempfile.mkdtemp(prefix='skillshelf-nobody-'))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def reachable_by_everyone() -> Iterator[None]:
    """The folders above the checkout and the interpreter's packages searchable by other users while the test runs
    (a checkout under a private folder, such as `mktemp -d` makes, keeps `nobody` from importing the project), then
    as they were."""
    site = next(Path(sys.prefix).glob('lib/python3*/site-packages'))
    folders = {parent for path in (REPO, site) for parent in path.resolve().parents} | {REPO.resolve(), site.resolve()}
    opened = [folder for folder in sorted(folders) if not folder.stat().st_mode & 0o001]
    for folder in opened:
        folder.chmod(folder.stat().st_mode | 0o001)
    try:
        yield
    finally:
        for folder in opened:
            folder.chmod(folder.stat().st_mode & ~0o001)


@pytest.mark.usefixtures('reachable_by_everyone')
def test_an_agent_not_running_as_root_keeps_each_commands_process_count_apart(shared_folder: Path) -> None:
    python = python_for_nobody('runs the agent as another user')
    library(shared_folder)
    for path in [shared_folder, *shared_folder.rglob('*')]:
        os.chown(path, NOBODY, NOBODY)
    site = next(Path(sys.prefix).glob('lib/python3*/site-packages'))
    env = {
        'PATH': '/usr/bin:/bin',
        'HOME': str(shared_folder),
        'TMPDIR': str(shared_folder),
        'PYTHONPATH': os.pathsep.join([str(REPO / 'src'), str(REPO / 'tests' / 'support'), str(site)]),
    }
    done = subprocess.run(
        [
            'setpriv',
            f'--reuid={NOBODY}',
            f'--regid={NOBODY}',
            '--clear-groups',
            python,
            '-c',
            DRIVER,
            str(shared_folder),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if 'bwrap: ' in done.stderr and 'ermission' in done.stderr:
        pytest.skip(f'this kernel does not let an unprivileged user create namespaces: {done.stderr[-200:]}')
    assert done.returncode == 0, done.stderr[-2000:]
    answers = json.loads(done.stdout.splitlines()[-1])
    bombs, harmless = answers[:3], answers[3:]
    assert all('bomb capped at' in reply for reply in bombs), bombs
    assert harmless == [f'scripts/ok.py exited with code 0.\nOutput:\nok run-{index}' for index in range(6)]
    case(
        AREA,
        'an agent running as an ordinary user: 3 fork bombs beside 6 harmless scripts',
        f'each command counts its own processes (a user namespace each): {bombs[0].splitlines()[-1]}; '
        'all 6 harmless runs succeeded',
    )
