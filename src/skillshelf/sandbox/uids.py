"""The user ids the workspaces of an agent running as root run as: one counter for the whole host.

Linux counts a user's processes host-wide, whatever sandbox root, service or tenant started them: two workspaces
with one id share one process cap, and a conversation holding its processes makes every `fork` in the other fail.
So ids are not counted per root but in one file for the host, `/var/lib/skillshelf/next-uid` (`HOST_IDS`), under a
lock every agent process of the host shares, from `UID_BASE` on, and never given out twice.

That folder decides which user a command runs as, so it is checked like a sandbox root (see `private`): root's own,
closed to others, no link followed; a local user who could write there could have the sandbox run commands as an id
of theirs. A counter that was lost (its folder removed) starts again after every id the root in use records, and
ids given out in other roots may then be given again.

Containers share the host's kernel, so its process counts, but each has its own `/var/lib`: agents in several
containers of one host keep unique ids when the containers share this folder (one volume at `/var/lib/skillshelf`)
or map their users apart (user namespace remapping).
"""

from __future__ import annotations

import pwd
from collections.abc import Callable
from pathlib import Path

from pydantic_ai.workspaces import WorkspaceError

from .private import PrivateFolder, locked, opened, read_text, write_atomic

__all__ = ('HOST_IDS', 'LAST_UID', 'UID_BASE', 'next_uid', 'uid_problem')

UID_BASE = 1_900_000_000
"""The first user id given to a workspace (far from system and subordinate ranges)."""
LAST_UID = 4_294_967_294
"""The highest user id Linux gives out (`(uid_t) -1` means "unchanged")."""
HOST_IDS = PrivateFolder(
    Path('/var/lib/skillshelf'),
    name="the sandbox's folder of user ids",
    at_stake='choose the user ids workspaces run as',
    remedy='remove it after checking what it holds (the sandbox makes it again)',
    elsewhere=(
        "It must be a folder of root's alone on a writable file system (in a container, a volume at "
        '/var/lib/skillshelf), with no folder above it that another user owns or may write to'
    ),
)
"""Where the host's counter of workspace user ids is kept (root's alone)."""
_COUNTER = 'next-uid'


def next_uid(recorded: Callable[[], list[int]]) -> int:
    """The next user id no workspace of the host was given, counted at once (under the host's lock); a lost counter
    starts after the ids `recorded` gives (those of the root in use).

    Raises:
        SandboxRootError: the folder of user ids is not safe to use.
        WorkspaceError: every id has been given out.
    """
    with opened(HOST_IDS) as folder, locked(HOST_IDS, folder):
        try:
            uid = int(read_text(folder, _COUNTER) or '')
        except (OSError, ValueError):  # first use, or the counter was lost: start after every id recorded
            uid = max(recorded(), default=UID_BASE - 1) + 1
        uid = max(uid, UID_BASE)
        if uid > LAST_UID:
            raise WorkspaceError(f'every user id from {UID_BASE:,} on has been given to a workspace of this host')
        write_atomic(folder, _COUNTER, str(uid + 1))
    return uid


def uid_problem(uid: int | None, *, as_root: bool) -> str | None:
    """Why a workspace recording `uid` was not made by this sandbox, or `None` if it could have been: no id for an
    agent not running as root; for one running as root, an id from `UID_BASE` that the host's counter has passed,
    and no account of the host (root's, a person's).

    Raises:
        SandboxRootError: the folder of user ids is not safe to use.
    """
    if not as_root:
        return (
            None if uid is None else f'it names the user id {uid}, but this agent does not run as root to give one out'
        )
    if uid is None or not UID_BASE <= uid <= LAST_UID:
        return f'it names the user id {uid}, which the sandbox never gives out (it gives ids from {UID_BASE:,} on)'
    with opened(HOST_IDS) as folder:
        try:
            counter = int(read_text(folder, _COUNTER) or LAST_UID + 1)
        except (OSError, ValueError):  # a lost counter is counted again (see `next_uid`)
            counter = LAST_UID + 1
    if uid >= counter:
        return f'it names the user id {uid}, which the sandbox has not given out yet'
    try:
        account = pwd.getpwuid(uid).pw_name
    except KeyError:
        return None
    return f'it names the user id {uid}, the host account {account!r}'
