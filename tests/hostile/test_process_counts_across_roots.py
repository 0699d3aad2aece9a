"""One tenant's sandbox must not use up another's processes (issue #38, class 6): Linux counts a user's processes
host-wide, so the user ids an agent running as root gives its workspaces are unique on the host, not per sandbox root.

- Two `SkillSandbox`es with roots of their own (two tenants, two services) on one host give their conversations
  different user ids; a command of the first holding every process its cap allows (children blocked on a pipe) does
  not make a `fork` fail in a conversation of the second. Real bubblewrap, real processes.
- The host's folder of user ids decides which user a command runs as, so it is checked like the sandbox root: one
  another local user made first, a link in its place or a folder open to others is refused, and nothing runs.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from pydantic_ai.workspaces import Workspace

from skillshelf import SandboxLimits, SkillSandbox
from skillshelf.sandbox import SandboxRootError, uids
from skillshelf.sandbox.private import PrivateFolder

from reliability.ledger import case
from sandbox_support import HostUser, needs_bwrap, processes_of

pytestmark = [
    needs_bwrap,
    pytest.mark.skipif(os.geteuid() != 0, reason='only an agent running as root gives workspaces user ids'),
]

AREA = 'Runs'
LIMITS = SandboxLimits(max_processes=16)
HOLD = """import errno, os, time
r, w = os.pipe()
children = 0
try:
    while True:
        if os.fork() == 0:
            os.close(w)
            os.read(r, 1)  # blocked until the holder lets go
            os._exit(0)
        children += 1
except OSError as error:
    refused = errno.errorcode[error.errno]
open('holding.partial', 'w').write(f'{children} {refused}')
os.rename('holding.partial', 'holding')  # whole when seen
while not os.path.exists('release'):
    time.sleep(0.01)
os.close(w)
for _ in range(children):
    os.wait()
print('released', children)
"""
FORK = """import os
for _ in range(3):
    if os.fork() == 0:
        os._exit(0)
    os.wait()
print('forked 3')
"""


async def test_two_roots_give_different_uids_and_one_holding_its_processes_does_not_stop_the_other(
    tmp_path: Path,
) -> None:
    first, second = (SkillSandbox(tmp_path / name, limits=LIMITS) for name in ('tenant-a', 'tenant-b'))
    holder, neighbour = first.workspace(conversation='a'), second.workspace(conversation='b')
    uid_a, uid_b = [int((await backend.run(['id', '-u'])).stdout) for backend in (holder, neighbour)]
    assert uid_a != uid_b
    assert holder.ref is not None
    folder = first.folder(holder.ref)
    assert folder is not None

    held = asyncio.create_task(holder.run(['python3', '-c', HOLD], timeout=120))
    with anyio.fail_after(60):
        while not (folder / 'holding').exists() and not held.done():
            await asyncio.sleep(0.02)
    children, refused = (folder / 'holding').read_text().split()
    processes = len(processes_of(uid_a))
    try:
        forked = await neighbour.run(['python3', '-c', FORK], timeout=60)
    finally:
        (folder / 'release').touch()
    released = await held

    assert int(children) >= LIMITS.max_processes - 2  # the first holds its whole cap
    assert refused == 'EAGAIN'
    assert processes >= LIMITS.max_processes - 1
    assert (forked.exit_code, forked.stdout, forked.stderr) == (0, 'forked 3\n', '')
    assert (released.exit_code, released.stdout) == (0, f'released {children}\n')
    case(
        AREA,
        f'two sandbox roots on one host; a command in the first holds its {LIMITS.max_processes}-process cap',
        f'user ids {uid_a:,} and {uid_b:,}; the first holds {processes} processes (fork refused: {refused}); '
        f'the second forks 3 children: exit {forked.exit_code}, {forked.stdout.strip()!r}',
    )


@pytest.fixture
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder every user may write in, sticky like `/tmp`."""
    tmp_path_factory.getbasetemp()
    folder = Path(tempfile.mkdtemp(prefix='skillshelf-ids-', dir='/tmp'))
    folder.chmod(0o1777)
    yield folder
    for path in sorted(folder.rglob('*'), reverse=True):
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()
    folder.rmdir()


PLANTS = {
    'made first by another user': ('mkdir -m 700 {ids}\nprintf 0 > {ids}/next-uid', 'belongs to user {uid}'),
    'a link to a folder of root': ('ln -s /var/lib {ids}', 'is a symbolic link'),
}


@pytest.mark.parametrize('plant', [*PLANTS, 'open to other users'])
async def test_a_planted_folder_of_user_ids_is_refused_and_nothing_runs(
    tmp_path: Path, shared: Path, intruder: HostUser, monkeypatch: pytest.MonkeyPatch, plant: str
) -> None:
    ids = shared / 'skillshelf-ids'
    # the folder is fixed (`/var/lib/skillshelf`); the test plants one in a place another user can reach
    monkeypatch.setattr(uids, 'HOST_IDS', PrivateFolder(ids, uids.HOST_IDS.name, uids.HOST_IDS.at_stake,
                                                        uids.HOST_IDS.remedy, uids.HOST_IDS.elsewhere))  # fmt: skip
    if plant in PLANTS:
        script, expected = PLANTS[plant]
        intruder.run(script.format(ids=ids))
        expected = expected.format(uid=intruder.uid)
    else:  # an administrator's mistake, say
        ids.mkdir(mode=0o777)
        ids.chmod(0o777)
        expected = 'is open to other users'
    sandbox = SkillSandbox(tmp_path / 'ws')
    backend = sandbox.workspace(conversation='victim')

    with pytest.raises(SandboxRootError) as refused:
        await Workspace(backend).write_bytes('upload.txt', b'the upload')

    message = str(refused.value)
    assert message.startswith(f"the sandbox's folder of user ids {ids} {expected}"), message
    assert 'remove it after checking what it holds' in message
    assert backend.ref is None  # no workspace was made
    case(
        'Runs',
        f"the host's folder of workspace user ids is {plant}",
        message.replace(str(ids), '<folder>').replace(f'user {intruder.uid} ({intruder.name})', 'user <id> (<x>)'),
    )
