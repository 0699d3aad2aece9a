"""What another local user can plant for the sandbox (issue #38, class 2): the default root in the temporary directory
has a name anyone can guess, and an agent running as root runs a workspace's commands as the user id its
`owner.json` names, in the folder its `workspace` names.

A real second Unix user plants the root before the sandbox first uses it (a folder of theirs holding a workspace that
names uid 0 and links to a root-owned folder, a link, a folder open to all, a `.lock` link to a root-owned file);
other tests plant in a root the agent's user left open, or change a workspace in the agent's own root. The sandbox is
then used as an application uses it: real bubblewrap, real agent runs. Each time the sandbox refuses with an error
naming the folder and what to do, the model is told the workspace cannot be used, nothing is written where the plant
pointed, and nothing ran.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.workspaces import WorkspaceRef

from skillshelf import Skills, SkillSandbox
from skillshelf.sandbox import PROVIDER, SandboxRootError, SandboxWorkspace, UnsafeWorkspaceError

from reliability.ledger import case
from sandbox_support import HostUser, needs_bwrap
from scripted_model import Script, call, tool_returns
from skill_files import write_skill
from warnings_said import said

pytestmark = needs_bwrap

AREA = 'Runs'
MARK = "import os\nopen('who.txt', 'w').write(str(os.getuid()))\nprint('ran as', os.getuid())\n"
"""The script a run tries: it leaves `who.txt`, naming its user, wherever its workspace really is."""
PLANTED = 'ab' * 16
"""The id of a workspace planted by hand."""


@pytest.fixture
def shared_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary directory every user may write in, sticky like `/tmp`, made the process's: `SkillSandbox()` keeps
    its default root there (pytest's own temporary folders stay where they are)."""
    tmp_path_factory.getbasetemp()
    folder = Path(tempfile.mkdtemp(prefix='skillshelf-shared-', dir='/tmp'))
    folder.chmod(0o1777)
    monkeypatch.setattr(tempfile, 'tempdir', str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def target(shared_tmp: Path) -> Path:
    """A folder of the agent's user that no one else may write to: where a plant points."""
    folder = shared_tmp / 'agent-only'
    folder.mkdir(mode=0o755)
    (folder / 'precious.txt').write_text('the agent user data', encoding='utf-8')
    return folder


def anonymous(text: str, user: HostUser) -> str:
    """`text` with the made-up user's name and id put generically, so the report reads the same every run."""
    return text.replace(f'user {user.uid} ({user.name})', 'user <id> (<another user>)')


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {path.name: (path.read_bytes(), path.stat().st_mtime_ns) for path in folder.iterdir()}


def library(base: Path) -> Path:
    return write_skill(
        base / 'lib', 'tool-kit', 'Run it.', description='Scripts.', files={'scripts/mark.py': MARK}
    ).parent


def plant_workspace(workspace: Path, target: Path, uid: int = 0) -> str:
    """The shell lines that plant a workspace for conversation `victim`, naming `uid`, linked to `target`."""
    at = shlex.quote(str(workspace))
    owner = shlex.quote(json.dumps({'conversation': 'victim', 'uid': uid}))
    return '\n'.join([
        f'mkdir -m 700 {at} {at}/etc',
        f"printf '127.0.0.1 localhost\\n' > {at}/etc/hosts",
        f"printf 'root:x:0:0::/:/bin/sh\\n' > {at}/etc/passwd",
        f"printf 'root:x:0:\\n' > {at}/etc/group",
        f'printf %s {owner} > {at}/owner.json',
        f'ln -s {shlex.quote(str(target))} {at}/workspace',
    ])  # fmt: skip


async def run_mark(sandbox: SkillSandbox, base: Path, workspace: SandboxWorkspace) -> tuple[str, list[str]]:
    """The model runs `scripts/mark.py` in `workspace`: its tool answer, and the warnings the developer got."""
    script = Script([
        [call('load_skill', name='tool-kit')],
        [call('run_skill_script', name='tool-kit', script='scripts/mark.py', args=[])],
    ])  # fmt: skip
    agent = Agent(script.model(), capabilities=[sandbox, Skills(library(base), scripts=True)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        result = await agent.run('go', workspace=workspace, conversation_id='victim')
    [reply] = tool_returns(result.all_messages(), 'run_skill_script')
    return reply, said(caught)


async def test_a_root_another_user_made_first_is_refused_and_nothing_runs_as_root(
    intruder: HostUser, shared_tmp: Path, target: Path, tmp_path: Path
) -> None:
    root = shared_tmp / f'skillshelf-workspaces-{os.getuid()}'
    intruder.run(f'mkdir -m 755 {shlex.quote(str(root))}\n' + plant_workspace(root / PLANTED, target))
    before = snapshot(target)
    sandbox = SkillSandbox()  # the default root: the one planted
    assert sandbox.folder_root == root
    ref = WorkspaceRef(provider=PROVIDER, id=PLANTED)

    reply, warned = await run_mark(sandbox, tmp_path, sandbox.workspace(conversation='victim', ref=ref))
    assert reply.endswith(f': {SandboxRootError.for_model}'), reply
    assert warned
    assert all(f'belongs to user {intruder.uid} ({intruder.name})' in text for text in warned), warned
    with pytest.raises(SandboxRootError, match=f"{root} belongs to user {intruder.uid} .*, not to the agent's"):
        await sandbox.workspace(conversation='victim', ref=ref).run(['id', '-u'])
    with pytest.raises(SandboxRootError, match='remove it'):  # reopened from the conversation's ref: refused at once
        await Agent('test', capabilities=[sandbox]).run('go', workspace=ref, conversation_id='victim')
    with pytest.raises(SandboxRootError):  # and no new conversation starts in it either
        await sandbox.workspace(conversation='new').write_bytes('/workspace/a.txt', b'x')
    assert snapshot(target) == before
    assert not (target / 'who.txt').exists()
    assert sorted(path.name for path in root.iterdir()) == [PLANTED]  # nothing added to the planted root
    case(
        AREA,
        'another local user makes the default sandbox root first, holding a workspace that names uid 0 and links to a '
        'root-owned folder',
        f'refused before anything ran, nothing written there; the model is told: {reply.split(": ", 1)[1]}',
    )


@pytest.mark.parametrize(
    'plant', ['a link to a folder of root', 'a folder open to everyone', 'a .lock link to a root-owned file']
)
async def test_a_root_planted_as_a_link_an_open_folder_or_with_a_lock_link_is_refused(
    intruder: HostUser, shared_tmp: Path, target: Path, plant: str
) -> None:
    root = shared_tmp / f'skillshelf-workspaces-{os.getuid()}'
    at = shlex.quote(str(root))
    lock_target = target / 'made-by-root'
    script = {
        'a link to a folder of root': f'ln -s {shlex.quote(str(target))} {at}',
        'a folder open to everyone': f'mkdir -m 777 {at}',
        'a .lock link to a root-owned file': f'mkdir -m 777 {at}\nln -s {shlex.quote(str(lock_target))} {at}/.lock',
    }[plant]
    intruder.run(script)
    before = snapshot(target)
    with pytest.raises(SandboxRootError) as refused:
        await SkillSandbox().workspace(conversation='new').write_bytes('/workspace/a.txt', b'x')
    message = str(refused.value)
    expected = 'is a symbolic link' if plant.startswith('a link') else f'belongs to user {intruder.uid}'
    assert expected in message, message
    assert str(root) in message
    assert 'SkillSandbox(root=...)' in message
    assert snapshot(target) == before
    assert not lock_target.exists()
    case(AREA, f'another local user plants the default sandbox root: {plant}', anonymous(message, intruder))


@pytest.mark.parametrize('plant', ['left open to others', 'holding a .lock link', 'in a folder others may write to'])
async def test_a_root_of_the_agents_own_user_that_others_could_plant_in_is_refused(
    shared_tmp: Path, target: Path, plant: str
) -> None:
    root = shared_tmp / 'roots' / 'workspaces'
    root.parent.mkdir(mode=0o777 if plant.startswith('in a folder') else 0o755)
    root.parent.chmod(0o777 if plant.startswith('in a folder') else 0o755)  # past the umask
    root.mkdir(mode=0o700)
    lock_target = target / 'made-through-the-lock'
    if plant == 'left open to others':
        root.chmod(0o777)
        (root / PLANTED).mkdir()  # what another user could put there
    elif plant == 'holding a .lock link':
        (root / '.lock').symlink_to(lock_target)
    before = snapshot(target)
    with pytest.raises(SandboxRootError) as refused:
        await SkillSandbox(root).workspace(conversation='new').write_bytes('/workspace/a.txt', b'x')
    message = str(refused.value)
    expected = {
        'left open to others': 'is open to other users (mode drwxrwxrwx)',
        'holding a .lock link': 'holds a .lock that cannot be opened safely',
        'in a folder others may write to': 'which other users may write to (mode drwxrwxrwx, not sticky)',
    }[plant]
    assert expected in message, message
    assert snapshot(target) == before
    assert not lock_target.exists()
    assert (root.stat().st_mode & 0o777) == (0o777 if plant == 'left open to others' else 0o700)  # not "fixed"
    case(AREA, f"a sandbox root of the agent's own user {plant}", message)


TAMPERING = ['names uid 0', 'has a workspace linked to a folder of root', "links etc/passwd to the host's shadow"]


@pytest.mark.parametrize('tampering', TAMPERING)
async def test_a_changed_workspace_in_the_agents_own_root_is_refused(
    shared_tmp: Path, target: Path, tmp_path: Path, tampering: str
) -> None:
    sandbox = SkillSandbox(tmp_path / 'ws')
    made = sandbox.workspace(conversation='victim')
    await made.write_bytes('/workspace/a.txt', b'x')
    assert made.ref is not None
    place = tmp_path / 'ws' / made.ref.id
    if tampering == 'names uid 0':
        (place / 'owner.json').write_text(json.dumps({'conversation': 'victim', 'uid': 0}), encoding='utf-8')
        os.chown(place / 'workspace', 0, 0)
    elif tampering.startswith('has a workspace'):
        shutil.rmtree(place / 'workspace')
        (place / 'workspace').symlink_to(target, target_is_directory=True)
    else:
        (place / 'etc' / 'passwd').unlink()
        (place / 'etc' / 'passwd').symlink_to('/etc/shadow')
    before = snapshot(target)

    reply, warned = await run_mark(sandbox, tmp_path, sandbox.workspace(conversation='victim', ref=made.ref))
    assert reply.endswith(f': {UnsafeWorkspaceError.for_model}'), reply
    assert warned
    assert all('is refused' in text for text in warned), warned
    with pytest.raises(UnsafeWorkspaceError, match=f'{place} is refused: .*Nothing ran there'):
        await sandbox.workspace(conversation='victim', ref=made.ref).run(['id', '-u'])
    with pytest.raises(UnsafeWorkspaceError):  # reopened from the conversation's ref: refused when the run selects it
        await Agent('test', capabilities=[sandbox]).run('go', workspace=made.ref, conversation_id='victim')
    assert snapshot(target) == before
    assert not (place / 'workspace' / 'who.txt').exists()
    problem = str(warned[0]).split(' is refused: ', 1)[1].split('. The sandbox', 1)[0]
    case(AREA, f'a workspace in the sandbox root {tampering}', f'refused ({problem}); the model is told: {reply}')


async def test_a_workspace_folder_given_to_another_user_is_refused(
    intruder: HostUser, tmp_path: Path, target: Path
) -> None:
    sandbox = SkillSandbox(tmp_path / 'ws')
    made = sandbox.workspace(conversation='victim')
    await made.write_bytes('/workspace/a.txt', b'x')
    assert made.ref is not None
    place = tmp_path / 'ws' / made.ref.id
    os.chown(place, intruder.uid, intruder.gid)
    with pytest.raises(
        UnsafeWorkspaceError, match=f'it belongs to user {intruder.uid} \\({intruder.name}\\)'
    ) as refused:
        await sandbox.workspace(conversation='victim', ref=made.ref).run(['id', '-u'])
    case(AREA, 'a workspace folder in the sandbox root owned by another user', anonymous(str(refused.value), intruder))
