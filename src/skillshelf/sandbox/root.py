"""The sandbox's root folder on the host, and the workspaces in it: checked before use, no link followed.

Why: an agent running as root runs each workspace's commands as the user id its `owner.json` records, in the folder
its `workspace` names, and the default root (in the shared temporary directory) has a name anyone can guess. A local
user who made it first could plant a conversation folder naming uid 0, its workspace a link to a root-owned folder.
So:

- the root must be the agent user's own and closed to others (see `private`: created so if missing, anything else
  refused with `SandboxRootError`, never repaired: a planted root may hold anything);
- its files (`.lock`, each `owner.json`) are opened relative to the root's descriptor, not following a link;
- before a workspace is used, its folder, `owner.json`, `etc` files and `workspace` folder are checked: real, owned
  as the sandbox made them, and the user id recorded one the sandbox could have given out (see `uids`: from
  `UID_BASE`, below the host's counter, and no account of the host) (`UnsafeWorkspaceError`).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

from .errors import UnsafeWorkspaceError
from .private import FOLDER_FLAGS, PrivateFolder, locked, opened, read_text, user_name
from .uids import LAST_UID, UID_BASE, uid_problem

__all__ = ('Owner', 'locked_root', 'opened_root', 'recorded_uids', 'sandbox_root', 'verified_owner')

_ETC_FILES = ('hosts', 'passwd', 'group')


@dataclass(frozen=True)
class Owner:
    """What a workspace's `owner.json` records."""

    conversation: str | None
    """The conversation it belongs to, or `None` (made without one)."""
    uid: int | None
    """The user its commands run as (an agent running as root), else `None`."""


def sandbox_root(root: Path) -> PrivateFolder:
    """The sandbox root `root`, as a folder of the agent's user alone (see `private`)."""
    return PrivateFolder(
        root,
        name='the sandbox root',
        at_stake='plant workspaces there',
        remedy='remove it (after checking what it holds), or give `SkillSandbox(root=...)` a folder of your own',
        elsewhere='Give `SkillSandbox(root=...)` a folder in one of your own',
    )


@contextlib.contextmanager
def opened_root(root: Path) -> Generator[int]:
    """A descriptor of the folder `root`, created (mode 0700) if missing, once it has proved safe (see `private`).

    Raises:
        SandboxRootError: it is a link, not a folder, another user's, open to others, or in a folder another user
            could rename it out of; or it cannot be created.
    """
    with opened(sandbox_root(root)) as descriptor:
        yield descriptor


def locked_root(root: Path, root_fd: int) -> contextlib.AbstractContextManager[None]:
    """The root's `.lock`, held: shared by every agent process (and thread) creating workspaces under it."""
    return locked(sandbox_root(root), root_fd)


def verified_owner(root: Path, root_fd: int, identifier: str) -> Owner | None:
    """What the workspace `identifier` records, once its folders have proved to be as the sandbox made them (see the
    module docstring); `None` if it no longer exists (it was deleted).

    Raises:
        UnsafeWorkspaceError: a part of it is a link or another user's, or it names a user id the sandbox never gave
            out.
    """
    path = root / identifier
    try:
        folder = os.open(identifier, FOLDER_FLAGS, dir_fd=root_fd)
    except FileNotFoundError:
        return None
    except OSError:  # ELOOP, ENOTDIR: a link or a file in a workspace's place
        raise _unsafe(path, 'it is a link or a file, not a folder') from None
    try:
        _require(os.fstat(folder), path, 'it', os.geteuid(), folder=True, closed=True)
        try:
            text = read_text(folder, 'owner.json')
            if text is None:
                return None
            _require(
                os.stat('owner.json', dir_fd=folder, follow_symlinks=False),
                path,
                'its owner.json',
                os.geteuid(),
                folder=False,
            )
        except OSError as error:
            raise _unsafe(path, f'its owner.json cannot be read safely ({error})') from None
        owner = _parse(text)
        if owner is None:
            raise _unsafe(path, 'its owner.json is not one the sandbox wrote')
        if (problem := uid_problem(owner.uid, as_root=os.geteuid() == 0)) is not None:
            raise _unsafe(path, problem)
        try:
            workspace = os.stat('workspace', dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return None
        _require(
            workspace, path, 'its workspace folder', owner.uid if owner.uid is not None else os.geteuid(), folder=True
        )
        _check_etc(folder, path)
        return owner
    finally:
        os.close(folder)


def recorded_uids(root_fd: int) -> list[int]:
    """The user ids the workspaces under the root record (to start counting after them when the counter is lost)."""
    found: list[int] = []
    for name in os.listdir(root_fd):
        with contextlib.suppress(OSError, ValueError):
            folder = os.open(name, FOLDER_FLAGS, dir_fd=root_fd)
            try:
                owner = _parse(read_text(folder, 'owner.json') or '')
            finally:
                os.close(folder)
            if owner is not None and owner.uid is not None and UID_BASE <= owner.uid <= LAST_UID:
                found.append(owner.uid)
    return found


def _check_etc(folder: int, path: Path) -> None:
    """The sandbox's `/etc` files are bound into it as they are found: a link there would show a host file."""
    try:
        etc = os.open('etc', FOLDER_FLAGS, dir_fd=folder)
    except OSError as error:
        raise _unsafe(path, f'its etc folder cannot be opened safely ({error.strerror})') from None
    try:
        _require(os.fstat(etc), path, 'its etc folder', os.geteuid(), folder=True)
        for name in _ETC_FILES:
            found = os.stat(name, dir_fd=etc, follow_symlinks=False)
            if not stat.S_ISREG(found.st_mode) or found.st_uid != os.geteuid():
                raise _unsafe(path, f'its etc/{name} is not a file the sandbox wrote')
    except FileNotFoundError:
        raise _unsafe(path, 'a file of its etc folder is missing') from None
    finally:
        os.close(etc)


def _require(found: os.stat_result, path: Path, part: str, owner: int, *, folder: bool, closed: bool = False) -> None:
    """`part` of the workspace `path` (as `found` says) must be a real folder (`folder`) or regular file of `owner`,
    and, if `closed`, closed to others."""
    if not (stat.S_ISDIR(found.st_mode) if folder else stat.S_ISREG(found.st_mode)):
        kind = 'a link' if stat.S_ISLNK(found.st_mode) else 'not a folder' if folder else 'not a regular file'
        raise _unsafe(path, f'{part} is {kind}, not what the sandbox made')
    if found.st_uid != owner:
        raise _unsafe(path, f'{part} belongs to {user_name(found.st_uid)}, not to {user_name(owner)}')
    if closed and found.st_mode & 0o077:
        raise _unsafe(path, f'{part} is open to other users (mode {stat.filemode(found.st_mode)})')


def _parse(text: str) -> Owner | None:
    try:
        owner = json.loads(text)
    except ValueError:
        return None
    if not isinstance(owner, dict):
        return None
    conversation, uid = owner.get('conversation'), owner.get('uid')  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if conversation is not None and not isinstance(conversation, str):
        return None
    if uid is not None and (not isinstance(uid, int) or isinstance(uid, bool)):
        return None
    return Owner(conversation, uid)


def _unsafe(path: Path, problem: str) -> UnsafeWorkspaceError:
    return UnsafeWorkspaceError(
        f'the sandbox workspace {path} is refused: {problem}. The sandbox did not make it so; someone may have '
        'planted or changed it. Nothing ran there: check it, then delete it (`SkillSandbox.delete`)'
    )
