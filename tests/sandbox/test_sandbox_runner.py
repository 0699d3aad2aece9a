"""The sandbox's runner tells the truth and survives what scripts leave behind: skillshelf's bubblewrap sandbox
(`SkillSandbox`) with real `bwrap` and real agent runs.

- Cleaning up: a workspace of 200,000 files is deleted without holding up the event loop; a folder tree 1,500 deep
  that a script leaves is listed, removed and deleted without a crash and without leaking the folder; a workspace
  past its size limit runs nothing, but can still be listed, read and cleaned through the workspace.
- Honesty: the time limit holds a child that started a session of its own (`setsid`), and the model is told every
  process was killed only where that is true (not under pydantic-ai's `LocalWorkspace`); `bwrap` removed after the
  sandbox started gives the model a clear message and the developer a warning, not an exception ending the run; a
  Python named through a symlinked folder or a path with `..` runs scripts, and so does an agent started as
  `../venv/bin/python` from a folder the sandbox does not show (issue #38, class 7); a workspace used after it was
  deleted says it was deleted, to the application and to the model (class 10).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.workspaces import Workspace, WorkspaceRef

from skillshelf import SandboxLimits, ScriptLimits, Skills, SkillSandbox, SkillWarning
from skillshelf.sandbox import WorkspaceDeletedError, WorkspaceFullError
from skillshelf.sandbox.sandbox import SandboxWorkspace

from reliability.ledger import case
from sandbox_support import needs_bwrap, processes_naming, processes_of
from scripted_model import Script, call, tool_returns
from skill_files import write_skill

pytestmark = needs_bwrap

AREA = 'Runs'
FILES = 200_000
DEPTH = 1_500
DEEP = f"""import os
os.mkdir('deep')
os.chdir('deep')
for _ in range({DEPTH}):
    os.mkdir('level-of-the-tree')  # 1,500 of these make a path of 27,000 characters, past PATH_MAX
    os.chdir('level-of-the-tree')
with open('bottom.txt', 'w') as file:
    file.write('at the bottom')
print('made', {DEPTH}, 'levels')
"""
DETACH = """import subprocess, sys, time
# A child in a session of its own, named by the test's marker (the script's argument) so the test finds it on the
# host; the script says so only once the child says it runs, so the time limit always finds it there.
child = subprocess.Popen(
    [sys.executable, '-c', 'import time; print("running", flush=True); time.sleep(3600)', sys.argv[1]],
    stdout=subprocess.PIPE, start_new_session=True,
)
assert child.stdout is not None and child.stdout.readline() == b'running\\n'
print('detached a child', flush=True)
time.sleep(3600)
"""
DETACH_LIMIT = 5
"""Seconds: several times the slowest start of the script and its child seen with a core kept busy (1.6 s from the
start of the run), since a limit reached before the child runs would test nothing."""
HELLO = 'import sys\nprint("hello from", sys.version_info[0])\n'
SCRIPTS = {'deep.py': DEEP, 'detach.py': DETACH, 'hello.py': HELLO}


def library(root: Path) -> Path:
    files = {f'scripts/{name}': text for name, text in SCRIPTS.items()}
    return write_skill(root / 'lib', 'tool-kit', 'Run the scripts.', description='Scripts.', files=files).parent


def run(capabilities: list[AbstractCapability[Any]], *steps: list[Any]) -> Any:
    model = Script([[call('load_skill', name='tool-kit')], *steps])
    return Agent(model.model(), capabilities=capabilities).run_sync('go')


def script(name: str, *args: str) -> list[Any]:
    return [call('run_skill_script', name='tool-kit', script=f'scripts/{name}', args=list(args))]


async def test_deleting_a_workspace_of_200k_files_does_not_hold_up_the_event_loop(tmp_path: Path) -> None:
    sandbox = SkillSandbox(tmp_path / 'ws')
    backend = SandboxWorkspace(sandbox, conversation='big')
    await backend.write_bytes('/workspace/first.txt', b'one')
    assert backend.ref is not None
    folder = sandbox.folder(backend.ref)
    assert folder is not None
    for index in range(FILES):  # what a script extracting a big archive leaves
        shelf = folder / f'part-{index // 5000}'
        if index % 5000 == 0:
            shelf.mkdir()
        os.close(os.open(shelf / f'f{index}', os.O_CREAT | os.O_WRONLY, 0o600))
    gaps: list[float] = []

    async def ticker() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticking = asyncio.ensure_future(ticker())
    started = time.monotonic()
    assert await sandbox.delete(backend.ref)
    took = time.monotonic() - started
    ticking.cancel()
    assert not folder.exists()
    assert [entry.name for entry in (tmp_path / 'ws').iterdir() if not entry.name.startswith('.')] == []
    assert max(gaps) < 0.5, f'the loop was held up {max(gaps):.2f} s'
    case(
        AREA,
        f'a workspace of {FILES:,} files is deleted while the agent serves other runs',
        f'deleted in {took:.1f} s in a worker thread; the event loop was held up {max(gaps) * 1000:.0f} ms at most',
    )


def test_a_tree_1500_folders_deep_left_by_a_script_is_listed_removed_and_deleted(tmp_path: Path) -> None:
    sandbox = SkillSandbox(tmp_path / 'ws')
    skills = Skills(library(tmp_path), scripts=True, file_tools=True)
    result = run(
        [sandbox, skills],
        script('deep.py'),
        [call('list_files', path='deep')],
        script('hello.py'),
    )
    [made, measured] = tool_returns(result.all_messages(), 'run_skill_script')
    [listed] = tool_returns(result.all_messages(), 'list_files')
    assert made == f'scripts/deep.py exited with code 0.\nOutput:\nmade {DEPTH} levels'
    assert 'more folders not looked into' in listed or listed.endswith('holds no files.'), listed
    assert measured.startswith('scripts/hello.py exited with code 0.'), measured  # measuring the tree did not fail
    ref: WorkspaceRef = result.response.workspace_ref
    folder = sandbox.folder(ref)
    assert folder is not None

    async def remove_then_delete() -> bool:
        workspace = Workspace(SandboxWorkspace(sandbox, ref))
        await workspace.remove('deep')
        gone = not await workspace.exists('deep')
        subprocess.run([sys.executable, '-c', DEEP], cwd=folder, check=True, capture_output=True)  # leave it again
        return gone and await sandbox.delete(ref)

    assert asyncio.run(remove_then_delete())
    assert not folder.exists()
    assert [entry.name for entry in (tmp_path / 'ws').iterdir() if not entry.name.startswith('.')] == []
    case(
        AREA,
        f'a skill script leaves a folder tree {DEPTH} deep (a path past PATH_MAX)',
        f'listed ({listed.splitlines()[-1]}), measured, removed through the workspace, and the workspace deleted '
        'whole; nothing left on the host',
    )


async def test_a_full_workspace_can_still_be_listed_read_and_cleaned(tmp_path: Path) -> None:
    roomy = SkillSandbox(tmp_path / 'ws')
    backend = roomy.workspace(conversation=None)
    for name in 'abc':
        await Workspace(backend).write_bytes(name, b'x' * (900 << 10))
    # The same folder under a limit it is past, as a command that wrote faster than the size watch leaves it.
    tight = SkillSandbox(tmp_path / 'ws', limits=SandboxLimits(max_workspace_bytes=1 << 20))
    full = Workspace(tight.workspace(conversation=None, ref=backend.ref))
    with pytest.raises(WorkspaceFullError, match='remove files before running or writing anything more'):
        await full.run(['true'])
    assert {'a', 'b', 'c'} <= {entry.name for entry in await full.list_dir('.')}
    assert len(await full.read_bytes('a')) == 900 << 10
    await full.remove('b')
    await full.remove('c')
    assert (await full.run(['true'])).exit_code == 0  # under the limit again: commands run
    assert backend.ref is not None
    assert await roomy.delete(backend.ref)


def test_the_time_limit_holds_a_child_in_its_own_session_and_says_so_truly(tmp_path: Path) -> None:
    sandbox = SkillSandbox(tmp_path / 'ws')
    skills = Skills(library(tmp_path), scripts=True, script_limits=ScriptLimits(timeout=DETACH_LIMIT))
    marker = f'detached-child-{uuid.uuid4().hex}'
    result = run([sandbox, skills], script('detach.py', marker))
    [reply] = tool_returns(result.all_messages(), 'run_skill_script')
    assert reply.startswith(
        f'scripts/detach.py was stopped after {DETACH_LIMIT} s: it reached the time limit, and every process it '
        'started was killed'
    ), reply
    assert reply.endswith('Output:\ndetached a child'), f'the limit came before the child ran: {reply}'
    assert processes_naming(marker) == []  # the run returns only once they are gone: no waiting here
    folder = sandbox.folder(result.response.workspace_ref)
    assert folder is not None
    if os.geteuid() == 0:  # the workspace's own user: nothing of it runs on the host any more
        assert processes_of(folder.stat().st_uid) == []
    case(AREA, 'a skill script starts a child in a session of its own (setsid), then runs past its time limit', reply)


def test_a_local_workspace_is_not_said_to_have_killed_every_process(tmp_path: Path) -> None:
    (tmp_path / 'work').mkdir()
    limits = ScriptLimits(timeout=DETACH_LIMIT)
    skills = Skills(library(tmp_path), scripts=True, script_approval=False, script_limits=limits)
    marker = f'detached-child-{uuid.uuid4().hex}'
    result = run([LocalWorkspace(tmp_path / 'work'), skills], script('detach.py', marker))
    [reply] = tool_returns(result.all_messages(), 'run_skill_script')
    left = processes_naming(marker)  # the child the workspace left running, and only this test's
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert reply.endswith('Output:\ndetached a child'), f'the limit came before the child ran: {reply}'
    assert left, 'the child was not left running, so the message tested nothing'
    assert 'every process it started was killed' not in reply
    assert 'may still be running' in reply, reply
    case(AREA, "a script's setsid child under pydantic-ai's LocalWorkspace, past the time limit", reply)


def test_bubblewrap_removed_after_start_up_is_a_message_and_a_warning_not_a_crash(tmp_path: Path) -> None:
    bwrap = shutil.which('bwrap')
    assert bwrap is not None
    copy = tmp_path / 'bin' / 'bwrap'
    copy.parent.mkdir()
    shutil.copy2(bwrap, copy)
    sandbox = SkillSandbox(tmp_path / 'ws', bwrap=str(copy))
    skills = Skills(library(tmp_path), scripts=True)
    copy.unlink()  # the package was removed while the agent runs
    with pytest.warns(SkillWarning, match='bubblewrap .* is gone'):
        result = run([sandbox, skills], script('hello.py'))
    [reply] = tool_returns(result.all_messages(), 'run_skill_script')
    assert 'the sandbox that runs commands cannot start on this machine' in reply, reply
    assert str(tmp_path) not in reply
    case(AREA, 'bubblewrap is removed after the sandbox started', reply)


@pytest.mark.parametrize('form', ['symlinked folder', 'path with ..', 'relative path with .. through /tmp'])
def test_a_python_named_through_a_symlink_or_dotdot_runs_scripts(
    tmp_path: Path, form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    environment = Path(sys.prefix)
    link = tmp_path / 'link-to-env'
    link.symlink_to(environment, target_is_directory=True)
    python = {
        'symlinked folder': f'{link}/bin/python',
        'path with ..': f'{environment}/bin/../bin/python',
        # what `../venv/bin/python` is from a folder under /tmp, which the sandbox shows only as its own, empty /tmp
        'relative path with .. through /tmp': os.path.relpath(environment / 'bin' / 'python', tmp_path),
    }[form]
    monkeypatch.chdir(tmp_path)
    sandbox = SkillSandbox(tmp_path / 'ws', python=python)
    result = run([sandbox, Skills(library(tmp_path), scripts=True)], script('hello.py'))
    [reply] = tool_returns(result.all_messages(), 'run_skill_script')
    assert reply == f'scripts/hello.py exited with code 0.\nOutput:\nhello from {sys.version_info[0]}', reply
    case(AREA, f"the sandbox's python named through a {form}", reply)


STARTED_AS = """import json, sys
from pathlib import Path
from pydantic_ai import Agent
from scripted_model import Script, call, tool_returns
from skillshelf import Skills, SkillSandbox

library, root = Path(sys.argv[1]), Path(sys.argv[2])
model = Script([
    [call('load_skill', name='tool-kit')],
    [call('write_file', path='note.txt', content='kept')],
    [call('read_file', path='note.txt')],
    [call('run_skill_script', name='tool-kit', script='scripts/hello.py', args=[])],
])
capabilities = [SkillSandbox(root), Skills(library, scripts=True, file_tools=True)]
messages = Agent(model.model(), capabilities=capabilities).run_sync('go').all_messages()
replies = {tool: tool_returns(messages, tool)[0] for tool in ('write_file', 'read_file', 'run_skill_script')}
print(json.dumps({'executable': sys.executable, **replies}))
"""


def test_an_agent_started_as_a_relative_python_through_tmp_runs_file_operations_and_scripts(tmp_path: Path) -> None:
    start = tmp_path / 'start'  # under /tmp: inside the sandbox /tmp is its own, and this folder is not there
    start.mkdir()
    python = os.path.relpath(Path(sys.prefix) / 'bin' / 'python', start)
    support = Path(__file__).resolve().parents[1] / 'support'
    finished = subprocess.run(
        [python, '-c', STARTED_AS, str(library(tmp_path)), str(tmp_path / 'ws')],
        cwd=start, env={**os.environ, 'PYTHONPATH': str(support)}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert finished.returncode == 0, finished.stderr
    replies = json.loads(finished.stdout.splitlines()[-1])
    assert replies['executable'].startswith(str(start)), replies  # the agent's interpreter path holds the `..`
    assert '/../' in replies['executable']
    assert 'note.txt' in replies['write_file'], replies
    assert 'kept' in replies['read_file'], replies
    assert (
        replies['run_skill_script']
        == f'scripts/hello.py exited with code 0.\nOutput:\nhello from {sys.version_info[0]}'
    )
    case(
        AREA,
        'the agent is started as a relative python with .. through a folder the sandbox does not show',
        f'write_file: {replies["write_file"]} read_file: {replies["read_file"]} run_skill_script: '
        f'{replies["run_skill_script"]}',
    )


async def test_a_deleted_workspace_says_it_was_deleted_to_the_application_and_the_model(tmp_path: Path) -> None:
    sandbox = SkillSandbox(tmp_path / 'ws')
    kept = sandbox.workspace(conversation='c')
    await kept.write_bytes('/workspace/a.txt', b'one')
    assert kept.ref is not None
    assert await sandbox.delete(kept.ref)
    operations = [
        kept.run(['true']),
        kept.read_bytes('/workspace/a.txt'),
        kept.write_bytes('/workspace/b.txt', b'two'),
        kept.list_dir('/workspace'),
    ]
    for operation in operations:
        with pytest.raises(WorkspaceDeletedError, match=r'the workspace no longer exists \(it was deleted\)'):
            await operation
    with pytest.raises(WorkspaceDeletedError):  # reopened by its ref, as the application keeps it
        await sandbox.workspace(conversation='c', ref=kept.ref).run(['true'])

    model = Script([
        [call('load_skill', name='tool-kit')],
        [call('run_skill_script', name='tool-kit', script='scripts/hello.py', args=[])],
        [call('read_file', path='a.txt')],
    ])  # fmt: skip
    agent = Agent(model.model(), capabilities=[sandbox, Skills(library(tmp_path), scripts=True, file_tools=True)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        result = await agent.run('go', workspace=kept, conversation_id='c')
    # the application deleted it: no warning that the developer must act (the copy of the skill's files is noted)
    assert not [warning for warning in caught if "the run's workspace cannot be used" in str(warning.message)]
    [ran] = tool_returns(result.all_messages(), 'run_skill_script')
    [read] = tool_returns(result.all_messages(), 'read_file')
    assert ran == f"Cannot run 'scripts/hello.py' of 'tool-kit': {WorkspaceDeletedError.for_model}", ran
    assert WorkspaceDeletedError.for_model.rstrip('.') in read, read
    assert 'could not start' not in ran + read
    case(
        AREA,
        'a workspace is used after the application deleted it',
        f'the application gets WorkspaceDeletedError; the model is told: {ran}',
    )
