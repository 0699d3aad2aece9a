"""The sandbox's root folder on the host: the agent user's own, closed to everyone else, and nothing under it reached
through a link.

Why: an agent running as root runs each workspace's commands as the user id its `owner.json` records, in the folder
its `workspace` names, and the default root (in the shared temporary directory) has a name anyone can guess. A local
user who made it first could plant a conversation folder naming uid 0, its workspace a link to a root-owned folder.
So:

- the root is created mode 0700 if missing; one found must be a real folder (not a link) owned by the agent's user
  and closed to group and others, inside folders no other user can rename it out of. Anything else is refused
  (`SandboxRootError`), never repaired: a planted root may hold anything;
- its files (`.lock`, `.next-uid`, each `owner.json`) are opened relative to the root's descriptor, not following a
  link;
- before a workspace is used, its folder, `owner.json`, `etc` files and `workspace` folder are checked: real, owned
  as the sandbox made them, and the user id recorded one the sandbox could have given out: from `UID_BASE`, below
  the root's counter, and no account of the host (`UnsafeWorkspaceError`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import secrets
import stat
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

from .errors import SandboxRootError, UnsafeWorkspaceError

__all__ = ('LAST_UID', 'UID_BASE', 'Owner', 'locked', 'opened_root', 'read_text', 'verified_owner', 'write_atomic')

UID_BASE = 1_900_000_000
"""The first user id given to a workspace when the agent runs as root (far from system and subordinate ranges)."""
LAST_UID = 4_294_967_294
"""The highest user id Linux gives out (`(uid_t) -1` means "unchanged")."""
COUNTER = '.next-uid'
"""The root's file holding the next user id to give out."""
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_ETC_FILES = ('hosts', 'passwd', 'group')
_WHAT_TO_DO = 'remove it (after checking what it holds), or give `SkillSandbox(root=...)` a folder of your own'


@dataclass(frozen=True)
class Owner:
    """What a workspace's `owner.json` records."""

    conversation: str | None
    """The conversation it belongs to, or `None` (made without one)."""
    uid: int | None
    """The user its commands run as (an agent running as root), else `None`."""


@contextlib.contextmanager
def opened_root(root: Path) -> Generator[int]:
    """A descriptor of the folder `root`, created (mode 0700) if missing, once it has proved safe (see the module
    docstring).

    Raises:
        SandboxRootError: it is a link, not a folder, another user's, open to others, or in a folder another user
            could rename it out of; or it cannot be created.
    """
    descriptor = _open_root(root)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def locked(root: Path, root_fd: int) -> Generator[None]:
    """The root's `.lock`, held: shared by every agent process (and thread) creating workspaces under it."""
    try:
        lock = os.open('.lock', os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=root_fd)
    except OSError as error:  # ELOOP: a link planted in its place
        raise SandboxRootError(f'the sandbox root {root} holds a .lock that cannot be opened safely ({error}): '
                               f'{_WHAT_TO_DO}') from None  # fmt: skip
    try:
        _require_own_file(os.fstat(lock), f'{root}/.lock', root)
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
    finally:
        os.close(lock)


def read_text(folder_fd: int, name: str) -> str | None:
    """The text of the regular file `name` in the folder `folder_fd`, not following a link; `None` if it is missing.

    Raises:
        OSError: it is a link (`ELOOP`) or cannot be read.
    """
    try:
        descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder_fd)
    except FileNotFoundError:
        return None
    with os.fdopen(descriptor, 'rb') as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise OSError(f'{name} is not a regular file')
        return file.read(1 << 16).decode('utf-8', 'replace')


def write_atomic(folder_fd: int, name: str, text: str) -> None:
    """Replace the file `name` in the folder `folder_fd` with `text` at once (a new file moved over it)."""
    partial = f'.{name}.{secrets.token_hex(4)}'
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with os.fdopen(os.open(partial, flags, 0o600, dir_fd=folder_fd), 'wb') as file:
        file.write(text.encode('utf-8'))
    os.replace(partial, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)


def verified_owner(root: Path, root_fd: int, identifier: str) -> Owner | None:
    """What the workspace `identifier` records, once its folders have proved to be as the sandbox made them (see the
    module docstring); `None` if it no longer exists (it was deleted).

    Raises:
        UnsafeWorkspaceError: a part of it is a link or another user's, or it names a user id the sandbox never gave
            out.
    """
    path = root / identifier
    try:
        folder = os.open(identifier, _FOLDER, dir_fd=root_fd)
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
        _check_uid(root_fd, path, owner.uid)
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
            folder = os.open(name, _FOLDER, dir_fd=root_fd)
            try:
                owner = _parse(read_text(folder, 'owner.json') or '')
            finally:
                os.close(folder)
            if owner is not None and owner.uid is not None and UID_BASE <= owner.uid <= LAST_UID:
                found.append(owner.uid)
    return found


def _open_root(root: Path) -> int:
    try:
        root.parent.mkdir(parents=True, exist_ok=True)  # the folders above a root the application names are its own
        _check_parents(root)
        with contextlib.suppress(FileExistsError):
            os.mkdir(root, 0o700)
    except OSError as error:
        raise SandboxRootError(f'the sandbox root {root} cannot be created ({error})') from None
    try:
        descriptor = os.open(root, _FOLDER)
    except OSError as error:
        if os.path.islink(root):
            problem = (
                'is a symbolic link, not a folder of its own: someone may have planted it to redirect the workspaces'
            )
        else:
            problem = f'cannot be opened as a folder ({error.strerror})'
        raise SandboxRootError(f'the sandbox root {root} {problem}: {_WHAT_TO_DO}') from None
    try:
        found = os.fstat(descriptor)
        if found.st_uid != os.geteuid():
            raise SandboxRootError(
                f"the sandbox root {root} belongs to {_user(found.st_uid)}, not to the agent's, {_user(os.geteuid())}: "
                f'another user may have made it first, to plant workspaces there: {_WHAT_TO_DO}'
            )
        if found.st_mode & 0o077:
            raise SandboxRootError(
                f'the sandbox root {root} is open to other users (mode {stat.filemode(found.st_mode)}): they could '
                f'plant workspaces there. Check what it holds, then remove it or close it (`chmod 700`), or give '
                '`SkillSandbox(root=...)` a folder of your own'
            )
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _check_parents(root: Path) -> None:
    """Refuse a root inside a folder another user could rename it out of (and put their own in its place): every
    folder above it must be root's or the agent's user's, and writable by others only if sticky (as `/tmp` is)."""
    real = Path(os.path.realpath(root.parent))
    for folder in (*reversed(real.parents), real):
        found = os.stat(folder)
        if found.st_uid not in (0, os.geteuid()):
            raise SandboxRootError(
                f'the sandbox root {root} is inside {folder}, which belongs to {_user(found.st_uid)}: they could '
                'swap the root for a folder of their own. Give `SkillSandbox(root=...)` a folder in one of your own'
            )
        if found.st_mode & 0o022 and not found.st_mode & stat.S_ISVTX:
            raise SandboxRootError(
                f'the sandbox root {root} is inside {folder}, which other users may write to '
                f'(mode {stat.filemode(found.st_mode)}, not sticky): they could swap the root for a folder of their '
                'own. Give `SkillSandbox(root=...)` a folder in one of your own'
            )


def _check_uid(root_fd: int, path: Path, uid: int | None) -> None:
    """The user id a workspace records must be one this root gave out: none for an agent not running as root; for
    one running as root, from `UID_BASE` and below the root's counter, and no account of the host (root's, a
    person's)."""
    if os.geteuid() != 0:
        if uid is not None:
            raise _unsafe(path, f'it names the user id {uid}, but this agent does not run as root to give one out')
        return
    if uid is None or not UID_BASE <= uid <= LAST_UID:
        raise _unsafe(path, f'it names the user id {uid}, which the sandbox never gives out (it gives ids from '
                            f'{UID_BASE:,} on)')  # fmt: skip
    try:
        counter = int(read_text(root_fd, COUNTER) or LAST_UID + 1)
    except (OSError, ValueError):  # a lost counter is counted again from the workspaces (see `recorded_uids`)
        counter = LAST_UID + 1
    if uid >= counter:
        raise _unsafe(path, f'it names the user id {uid}, which the sandbox has not given out yet')
    try:
        account = pwd.getpwuid(uid).pw_name
    except KeyError:
        return
    raise _unsafe(path, f'it names the user id {uid}, the host account {account!r}')


def _check_etc(folder: int, path: Path) -> None:
    """The sandbox's `/etc` files are bound into it as they are found: a link there would show a host file."""
    try:
        etc = os.open('etc', _FOLDER, dir_fd=folder)
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
        raise _unsafe(path, f'{part} belongs to {_user(found.st_uid)}, not to {_user(owner)}')
    if closed and found.st_mode & 0o077:
        raise _unsafe(path, f'{part} is open to other users (mode {stat.filemode(found.st_mode)})')


def _require_own_file(found: os.stat_result, path: str, root: Path) -> None:
    if not stat.S_ISREG(found.st_mode) or found.st_uid != os.geteuid():
        raise SandboxRootError(f'the sandbox root {root} holds {path}, which is not its own file: {_WHAT_TO_DO}')


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


def _user(uid: int) -> str:
    try:
        return f'user {uid} ({pwd.getpwuid(uid).pw_name})'
    except KeyError:
        return f'user {uid}'
