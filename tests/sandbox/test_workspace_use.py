"""`SkillSandbox.prune` deletes only what is not in use (issue #38, class 3): use is any operation through a backend
or a command still running, not the moment the workspace was made or opened.

Real bubblewrap and real agent runs. A workspace's last use is the modification time of its use marker (`used`,
beside the `workspace` folder, out of every command's reach): an idle hour is set there as an idle hour leaves it,
so no test waits for time to pass.

- a skill's script running longer than the prune age, in a conversation the application kept a backend for: prune
  leaves it, the script finishes, the user's upload is there;
- a conversation used a moment ago through a backend the application kept (the README's pattern), by a command, a
  read, a write, a listing, a backend opened by its ref or a run reopening it from its history: not pruned; an
  idle one beside it is, and its kept backend says it was deleted.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic_ai import Agent
from pydantic_ai.workspaces import Workspace

from skillshelf import Skills, SkillSandbox
from skillshelf.sandbox import SandboxWorkspace, WorkspaceDeletedError
from skillshelf.sandbox.use import USE_MARKER

from reliability.ledger import case
from sandbox_support import needs_bwrap
from scripted_model import Script, call, tool_returns
from skill_files import write_skill

pytestmark = needs_bwrap

AREA = 'Runs'
UPLOAD = b'the contract the user uploaded'
WAIT = """import os, time
open('started', 'w').close()
while not os.path.exists('go'):  # released by the test once prune has run
    time.sleep(0.01)
print('finished with', open('upload.txt').read())
"""
WRITE = "open('out.txt', 'w').write('done')\nprint('wrote out.txt')\n"
HOUR = 3600.0


def skills(tmp_path: Path) -> Skills[Any]:
    files = {'scripts/wait.py': WAIT, 'scripts/write.py': WRITE}
    return Skills(write_skill(tmp_path / 'lib', 'kit', 'Run the scripts.', files=files).parent, scripts=True)


def run_script(script: str) -> Script:
    return Script(
        [[call('load_skill', name='kit')], [call('run_skill_script', name='kit', script=f'scripts/{script}')]]
    )


def marker(sandbox: SkillSandbox, backend: SandboxWorkspace) -> Path:
    assert backend.ref is not None
    folder = sandbox.folder(backend.ref)
    assert folder is not None
    return folder.parent / USE_MARKER


def idle_for(sandbox: SkillSandbox, backend: SandboxWorkspace, seconds: float) -> None:
    """What `seconds` without any use leaves: the use marker that old."""
    then = time.time() - seconds
    os.utime(marker(sandbox, backend), (then, then))


def prune_in_another_process(root: Path, older_than: float) -> int:
    """What `prune` removes when another agent process of the host runs it."""
    code = (
        'import asyncio, sys\nfrom skillshelf import SkillSandbox\n'
        'print(asyncio.run(SkillSandbox(sys.argv[1]).prune(float(sys.argv[2]))))'
    )
    done = subprocess.run(
        [sys.executable, '-c', code, str(root), str(older_than)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return int(done.stdout)


async def until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(60):
        while not condition():
            await asyncio.sleep(0.02)


async def test_a_script_running_longer_than_the_prune_age_is_not_pruned(tmp_path: Path) -> None:
    sandbox = SkillSandbox(tmp_path / 'ws')
    backend = sandbox.workspace(conversation='long-job')
    await Workspace(backend).write_bytes('upload.txt', UPLOAD)
    agent = Agent(run_script('wait.py').model(), capabilities=[sandbox, skills(tmp_path)])
    run = asyncio.create_task(agent.run('go', workspace=backend, conversation_id='long-job'))
    assert backend.ref is not None
    folder = sandbox.folder(backend.ref)
    assert folder is not None
    await until(lambda: (folder / 'started').exists())
    idle_for(sandbox, backend, HOUR)  # as if the script had started an hour ago, past a 60 s prune age

    removed = await sandbox.prune(older_than=60)
    elsewhere = prune_in_another_process(tmp_path / 'ws', 60)

    assert (removed, elsewhere) == (0, 0)
    assert (folder / 'upload.txt').read_bytes() == UPLOAD
    (folder / 'go').touch()
    [reply] = tool_returns((await run).all_messages(), 'run_skill_script')
    assert reply == f'scripts/wait.py exited with code 0.\nOutput:\nfinished with {UPLOAD.decode()}'
    assert time.time() - marker(sandbox, backend).stat().st_mtime < 60  # its end is a use too
    assert await sandbox.prune(older_than=60) == 0
    assert (folder / 'upload.txt').read_bytes() == UPLOAD
    case(
        AREA,
        "prune(older_than=60) while a skill's script has run for an hour (by its use time) beside the user's upload",
        f'{removed} workspaces pruned (in the agent process and in another); the script finished ({reply.splitlines()[-1]!r}) and the upload is intact',
    )


async def use_by_running(sandbox: SkillSandbox, backend: SandboxWorkspace, history: Any) -> None:
    assert (await backend.run(['true'])).exit_code == 0


async def use_by_reading(sandbox: SkillSandbox, backend: SandboxWorkspace, history: Any) -> None:
    assert await Workspace(backend).read_bytes('upload.txt') == UPLOAD


async def use_by_writing(sandbox: SkillSandbox, backend: SandboxWorkspace, history: Any) -> None:
    await Workspace(backend).write_bytes('notes.txt', b'a note')


async def use_by_listing(sandbox: SkillSandbox, backend: SandboxWorkspace, history: Any) -> None:
    assert 'upload.txt' in [entry.name for entry in await Workspace(backend).list_dir('.')]


async def use_by_attaching(sandbox: SkillSandbox, backend: SandboxWorkspace, history: Any) -> None:
    again = sandbox.workspace(conversation='kept', ref=backend.ref)
    assert await again.working_dir() == '/workspace'  # opens the folder, runs nothing


async def use_by_reopening(sandbox: SkillSandbox, backend: SandboxWorkspace, history: Any) -> None:
    # the next turn, whose model only answers: the run reopens the folder from its history and does nothing there
    result = await Agent(Script([]).model(), capabilities=[sandbox]).run(
        'thanks', message_history=history, conversation_id='kept'
    )
    assert result.response.workspace_ref == backend.ref


USES: dict[str, Callable[[SkillSandbox, SandboxWorkspace, Any], Awaitable[None]]] = {
    'a command': use_by_running,
    'a read': use_by_reading,
    'a write': use_by_writing,
    'a listing': use_by_listing,
    'a backend opened by ref': use_by_attaching,
    'a run reopening it from its history': use_by_reopening,
}


@pytest.mark.parametrize('use', list(USES))
async def test_a_conversation_used_moments_ago_through_a_kept_backend_is_not_pruned(tmp_path: Path, use: str) -> None:
    sandbox = SkillSandbox(tmp_path / 'ws')
    agent = Agent(run_script('write.py').model(), capabilities=[sandbox, skills(tmp_path)])
    kept, idle = sandbox.workspace(conversation='kept'), sandbox.workspace(conversation='idle')
    for backend in (kept, idle):
        await Workspace(backend).write_bytes('upload.txt', UPLOAD)
    result = await agent.run('go', workspace=kept, conversation_id='kept')
    assert tool_returns(result.all_messages(), 'run_skill_script') == [
        'scripts/write.py exited with code 0.\nOutput:\nwrote out.txt'
    ]
    for backend in (kept, idle):
        idle_for(sandbox, backend, HOUR)
    assert kept.ref is not None
    folder = sandbox.folder(kept.ref)

    await USES[use](sandbox, kept, result.all_messages())
    removed = await sandbox.prune(older_than=60)

    assert removed == 1  # the idle one
    assert folder is not None
    assert (folder / 'upload.txt').read_bytes() == UPLOAD
    assert (folder / 'out.txt').read_text() == 'done'
    with pytest.raises(WorkspaceDeletedError, match='it was deleted'):
        await Workspace(idle).read_bytes('upload.txt')
    case(
        AREA,
        f'prune(older_than=60) just after {use} through a kept backend, beside a conversation idle for an hour',
        f'{removed} pruned, the idle one (its kept backend: "the workspace no longer exists (it was deleted)"); '
        'the one just used keeps its upload and outputs',
    )


async def test_a_workspace_made_before_use_was_recorded_is_judged_by_its_owner_file(tmp_path: Path) -> None:
    sandbox = SkillSandbox(tmp_path / 'ws')
    recent, old = sandbox.workspace(conversation='recent'), sandbox.workspace(conversation='old')
    for backend in (recent, old):
        await Workspace(backend).write_bytes('upload.txt', UPLOAD)
        marker(sandbox, backend).unlink()
    then = time.time() - HOUR
    os.utime(marker(sandbox, old).with_name('owner.json'), (then, then))

    assert await sandbox.prune(older_than=60) == 1

    assert await Workspace(recent).read_bytes('upload.txt') == UPLOAD
    with pytest.raises(WorkspaceDeletedError):
        await Workspace(old).read_bytes('upload.txt')
