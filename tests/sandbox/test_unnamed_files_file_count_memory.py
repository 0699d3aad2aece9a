"""What a workspace holds and what one command uses are counted whole (#38 classes 4 and 5, and the memory of a
command), on real agent runs in real bubblewrap:

- a script writing unnamed files (`O_TMPFILE`) past the workspace's limit, to name them at the end, is refused them,
  and the workspace stays within its limit; `tempfile.TemporaryFile` still works inside;
- a script making empty files in a loop is stopped near the workspace's file limit, the model is told in a
  sentence, and the workspace can still be cleaned and deleted;
- a command whose processes together (with a file in `/dev/shm`) use more memory than one command may, each of them
  within the per-process limits, is stopped and the model is told; where this machine offers no memory cgroup the
  test says why it skips, and an agent without one (an ordinary user) learns why; there the filter refuses memory
  no process holds (`memfd_create`, `shmget`), while POSIX shared memory in `/dev/shm` works.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent

from skillshelf import SandboxLimits, ScriptLimits, Skills, SkillSandbox
from skillshelf.sandbox import memory, seccomp

from reliability.ledger import case
from sandbox_support import needs_bwrap, python_for_nobody
from scripted_model import Script, call, tool_returns
from skill_files import write_skill

pytestmark = needs_bwrap

AREA = 'Runs'
UNNAMED = """import errno, os, tempfile
data = b'x' * (1 << 20)
unnamed = []
try:
    for _ in range(6):  # 96 MiB, named only at the end
        fd = os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o600)
        for _ in range(16):
            os.write(fd, data)
        unnamed.append(fd)
    for index, fd in enumerate(unnamed):
        os.link(f'/proc/self/fd/{fd}', f'named-{index}', follow_symlinks=True)
    print('unnamed files written and named')
except OSError as error:
    print('unnamed file refused:', os.strerror(error.errno))
for folder in (None, '.'):
    with tempfile.TemporaryFile(dir=folder) as file:
        file.write(data)
        file.seek(0)
        assert file.read() == data
print('tempfile works')
"""
MANY = """import os
os.makedirs('many')
made = 0
try:
    while True:
        open(f'many/{made}', 'w').close()
        made += 1
except OSError as error:
    print('refused after', made, 'files:', type(error).__name__)
"""
HOG = """import subprocess, sys
for name in ('a', 'b'):  # memory too: /dev/shm is a tmpfs (60 MiB each: one file may have 64)
    with open(f'/dev/shm/{name}', 'wb') as file:
        file.write(b'x' * (60 << 20))
child = subprocess.Popen([sys.executable, '-c', 'import sys, time; a = bytearray(120 << 20); print("child holds", flush=True); time.sleep(60)'], stdout=subprocess.PIPE)
child.stdout.readline()
mine = bytearray(120 << 20)
print('all held: the cap did not hold')
"""


def library(root: Path) -> Path:
    files = {
        'scripts/unnamed.py': UNNAMED,
        'scripts/many.py': MANY,
        'scripts/hog.py': HOG,
        'scripts/ok.py': 'print("ok")',
    }
    return write_skill(root / 'lib', 'tool-kit', 'Run the scripts.', description='Scripts.', files=files).parent


def run_script(sandbox: SkillSandbox, root: Path, script: str, **extra: Any) -> tuple[str, Any]:
    """The model's reply to running `scripts/<script>`, and the run's result."""
    model = Script(
        [[call('load_skill', name='tool-kit')], [call('run_skill_script', name='tool-kit', script=f'scripts/{script}')]]
    )
    skills = Skills(library(root), scripts=True, script_limits=ScriptLimits(timeout=120))
    result = Agent(model.model(), capabilities=[sandbox, skills]).run_sync('go', **extra)
    [reply] = tool_returns(result.new_messages(), 'run_skill_script')
    return reply, result


def du(folder: Path) -> int:
    return int(subprocess.run(['du', '-sxB1', str(folder)], capture_output=True, text=True).stdout.split()[0])


def test_unnamed_files_are_refused_and_the_workspace_stays_within_its_limit(tmp_path: Path) -> None:
    limits = SandboxLimits(max_workspace_bytes=48 << 20)
    sandbox = SkillSandbox(tmp_path / 'ws', limits=limits)
    reply, result = run_script(sandbox, tmp_path, 'unnamed.py')
    folder = sandbox.folder(result.response.workspace_ref)
    assert folder is not None
    assert reply == (
        'scripts/unnamed.py exited with code 0.\nOutput:\nunnamed file refused: Operation not supported\ntempfile works'
    ), reply
    assert not list(folder.glob('named-*'))
    assert du(folder) <= limits.max_workspace_bytes
    case(
        AREA,
        'a skill script writes 96 MiB into unnamed files (O_TMPFILE) of a 48 MiB workspace, to name them at the end',
        f'refused at the first (EOPNOTSUPP); the workspace holds {du(folder):,} bytes; tempfile.TemporaryFile works',
    )


def test_a_file_maker_is_stopped_near_the_file_limit_and_the_workspace_can_be_cleaned(tmp_path: Path) -> None:
    limits = SandboxLimits(max_workspace_files=5000)
    sandbox = SkillSandbox(tmp_path / 'ws', limits=limits)
    reply, result = run_script(sandbox, tmp_path, 'many.py')
    ref = result.response.workspace_ref
    folder = sandbox.folder(ref)
    assert folder is not None
    made = sum(1 for _ in (folder / 'many').iterdir())
    assert reply.startswith(
        'scripts/many.py was stopped: it made more files and folders than the workspace may hold. Nothing more can '
        'run or be written there until files are removed: tell the user.'
    ), reply
    # Held by a watch, like the size: the overshoot is what the script makes before the watch thread gets a CPU.
    # Unwatched, this script makes files until its 120 s are up (a 10 s command made 116,000-461,000).
    assert limits.max_workspace_files < made < 4 * limits.max_workspace_files, made
    again, _ = run_script(sandbox, tmp_path, 'ok.py', message_history=result.all_messages())
    assert again.startswith(
        "Cannot run 'scripts/ok.py' of 'tool-kit': the workspace is full (it may hold 5,000 files"
    ), again

    async def clean() -> str:
        backend = sandbox.workspace(conversation=None, ref=ref)
        await backend.remove('/workspace/many')
        return (await backend.run(['sh', '-c', 'echo runs again'])).stdout

    assert asyncio.run(clean()) == 'runs again\n'
    assert asyncio.run(sandbox.delete(ref))
    assert not folder.exists()
    case(
        AREA,
        'a skill script makes empty files in a loop in a workspace that may hold 5,000',
        f'stopped at {made:,} files: {reply.splitlines()[0]} Next run: {again} Removing the folder lets commands run.',
    )


def test_a_command_past_its_memory_cap_is_stopped_and_the_model_told(tmp_path: Path) -> None:
    if (reason := memory.unavailable()) is not None:
        pytest.skip(f'this machine gives the agent no memory cgroup to make: {reason}')
    limits = SandboxLimits(max_command_memory_bytes=200 << 20)
    sandbox = SkillSandbox(tmp_path / 'ws', limits=limits)
    reply, result = run_script(sandbox, tmp_path, 'hog.py')
    assert 'its processes together used more memory than one command may have.' in reply, reply
    assert reply.startswith(('scripts/hog.py was stopped: ', 'scripts/hog.py exited with code 137: ')), reply
    assert 'the cap did not hold' not in reply
    again, _ = run_script(sandbox, tmp_path, 'ok.py', message_history=result.all_messages())
    assert again == 'scripts/ok.py exited with code 0.\nOutput:\nok', again
    parent = memory._hierarchy()  # pyright: ignore[reportPrivateUsage]
    assert not isinstance(parent, str)
    assert not list(parent.parent.glob(f'skillshelf-{os.getpid()}-*')), 'a command left its memory group behind'
    case(
        AREA,
        'a command holds 120 MiB in /dev/shm, 120 MiB in a child and 120 MiB in itself, with a 200 MiB memory cap',
        f'{reply.splitlines()[0]} The next run of the conversation runs.',
    )


def test_an_agent_that_may_make_no_memory_group_learns_why(tmp_path: Path) -> None:
    python = python_for_nobody('runs the probe as another user')
    source = Path(memory.__file__).read_text()  # standard library only: run as it is, from stdin
    done = subprocess.run(
        ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', python, '-'],
        input=f'{source}\nprint(unavailable())\n',
        capture_output=True,
        text=True,
        cwd='/',
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    reason = done.stdout.strip()
    assert reason != 'None'
    assert 'cannot make a group' in reason or 'memory controller' in reason, reason


OUTSIDE = """import ctypes, os
from multiprocessing import shared_memory
try:
    os.memfd_create('held')
    print('memfd_create: allowed')
except OSError as error:
    print('memfd_create:', os.strerror(error.errno))
libc = ctypes.CDLL(None, use_errno=True)
print('shmget:', 'allowed' if libc.shmget(0, 1 << 20, 0o1600) >= 0 else os.strerror(ctypes.get_errno()))
shared = shared_memory.SharedMemory(create=True, size=1 << 20)
shared.buf[0] = 1
shared.close()
shared.unlink()
print('/dev/shm: works')
"""


@pytest.mark.parametrize('capped', [True, False])
def test_without_a_memory_group_memory_no_process_holds_is_refused(capped: bool) -> None:
    fd = seccomp.filter_pipe(memory_capped=capped)
    if fd is None:
        pytest.skip('no seccomp filter is known for this machine')
    try:
        done = subprocess.run(
            ['bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--tmpfs', '/dev/shm', '--unshare-ipc', '--seccomp',
             str(fd), '--', sys.executable, '-c', OUTSIDE],
            capture_output=True, text=True, pass_fds=(fd,), timeout=60,
        )  # fmt: skip
    finally:
        os.close(fd)
    refused = 'Function not implemented'
    expected = ('allowed', 'allowed') if capped else (refused, refused)
    assert done.stdout == f'memfd_create: {expected[0]}\nshmget: {expected[1]}\n/dev/shm: works\n', done.stderr
