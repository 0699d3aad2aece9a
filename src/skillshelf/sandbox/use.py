"""When a workspace was last used, and whether anything runs in it now: what `SkillSandbox.prune` goes by.

Each workspace has a file `<root>/<id>/used`, the agent user's, beside its `workspace` folder (so no command sees
it). Its modification time is the workspace's last use: every operation through a backend (a command or file
operation, opening it by ref, a run reopening it from its message history) sets it to now, and a command sets it
again when it ends. While a command or file operation runs, its backend holds a shared lock on the file (`flock`,
which every process of the host sees). `prune` takes the lock exclusively without waiting: a workspace whose lock is
held is in use and skipped; one it holds is moved out of the way before the lock is let go, so an operation starting
meanwhile waits, then finds it deleted.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import stat
from collections.abc import AsyncGenerator, Generator

from .errors import UnsafeWorkspaceError, WorkspaceDeletedError
from .private import FOLDER_FLAGS

__all__ = ('DELETED', 'USE_MARKER', 'idle_and_held', 'in_use', 'mark_used')

USE_MARKER = 'used'
"""The file beside a workspace's `workspace` folder whose modification time is its last use."""
_FLAGS = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
DELETED = 'the workspace no longer exists (it was deleted)'
"""What a deleted workspace's operations say."""


def mark_used(root_fd: int, identifier: str) -> None:
    """Record a use of the workspace `identifier` (under the root `root_fd`) now."""
    folder = os.open(identifier, FOLDER_FLAGS, dir_fd=root_fd)
    try:
        descriptor = _open(folder)
    finally:
        os.close(folder)
    try:
        os.utime(descriptor)
    finally:
        os.close(descriptor)


@contextlib.asynccontextmanager
async def in_use(workspace_folder: str) -> AsyncGenerator[None]:
    """The workspace whose `workspace` folder is `workspace_folder`, marked used now and when this ends, and held in
    use meanwhile (see the module docstring).

    Raises:
        WorkspaceDeletedError: it was deleted.
    """
    try:
        folder = os.open(os.path.dirname(workspace_folder), FOLDER_FLAGS)
    except FileNotFoundError:
        raise WorkspaceDeletedError(DELETED) from None
    try:
        descriptor = _open(folder)
    finally:
        os.close(folder)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # `prune` holds it for the moment it takes to move the workspace away
            await asyncio.to_thread(fcntl.flock, descriptor, fcntl.LOCK_SH)
        if not os.path.isdir(workspace_folder):
            raise WorkspaceDeletedError(DELETED)
        os.utime(descriptor)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.utime(descriptor)
        os.close(descriptor)


@contextlib.contextmanager
def idle_and_held(root_fd: int, identifier: str, cutoff: float) -> Generator[bool]:
    """Whether the workspace `identifier` was last used before `cutoff` (a time) and runs nothing; while it is
    `True`, nothing can start there. A workspace made before use was recorded was last used when its `owner.json`
    was written."""
    folder = os.open(identifier, FOLDER_FLAGS, dir_fd=root_fd)
    try:
        descriptor = _open(folder, backdate=True)
    finally:
        os.close(folder)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # a command or file operation runs there
            yield False
            return
        yield os.fstat(descriptor).st_mtime < cutoff
    finally:
        os.close(descriptor)


def _open(folder: int, *, backdate: bool = False) -> int:
    """The use marker of the workspace folder `folder`, refused if it is not the agent's own file; made if missing
    (with `backdate`, dated when `owner.json` was written, for a workspace made before use was recorded)."""
    try:
        descriptor = os.open(USE_MARKER, _FLAGS | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=folder)
        made = True
    except FileExistsError:
        descriptor = os.open(USE_MARKER, _FLAGS, dir_fd=folder)
        made = False
    try:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode) or found.st_uid != os.geteuid():
            raise UnsafeWorkspaceError(
                f'the sandbox workspace folder holds a {USE_MARKER} file the sandbox did not make: check it, then '
                'delete the workspace (`SkillSandbox.delete`)'
            )
        if made and backdate:
            with contextlib.suppress(FileNotFoundError):  # no owner.json yet: it is being made now
                written = os.stat('owner.json', dir_fd=folder, follow_symlinks=False).st_mtime
                os.utime(descriptor, (written, written))
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor
