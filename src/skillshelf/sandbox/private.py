"""A folder of the agent's user alone on a host other users share: the sandbox's root (see `root`) and the host's
folder of workspace user ids (see `uids`). It is used only once it has proved to be so, and the files in it are
opened relative to its descriptor, never through a link.

A missing one is created mode 0700. One found must be a real folder (not a link), the agent's user's, closed to
group and others, inside folders no other user can rename it out of. Anything else is refused (`SandboxRootError`),
never repaired: a planted folder may hold anything.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import secrets
import stat
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

from .errors import SandboxRootError

__all__ = ('PrivateFolder', 'locked', 'opened', 'read_text', 'user_name', 'write_atomic')

FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""How a folder is opened: a link in its place is refused, not followed."""


@dataclass(frozen=True)
class PrivateFolder:
    """One folder of the agent's user alone, and how its refusals name it."""

    path: Path
    """Where it is."""
    name: str
    """What it is called in messages, before its path: `'the sandbox root'`."""
    at_stake: str
    """What another user who made it, or could write in it, could do: `'plant workspaces there'`."""
    remedy: str
    """What to do with one that is refused."""
    elsewhere: str
    """Where it must be instead, when it cannot be made or a folder above it is not safe."""


@contextlib.contextmanager
def opened(folder: PrivateFolder) -> Generator[int]:
    """A descriptor of `folder`, created (mode 0700) if missing, once it has proved safe (see the module docstring).

    Raises:
        SandboxRootError: it is a link, not a folder, another user's, open to others, or in a folder another user
            could rename it out of; or it cannot be created.
    """
    descriptor = _open(folder)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def locked(folder: PrivateFolder, folder_fd: int) -> Generator[None]:
    """The folder's `.lock`, held: shared by every agent process (and thread) that changes what it holds."""
    try:
        lock = os.open('.lock', os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder_fd)
    except OSError as error:  # ELOOP: a link planted in its place
        raise SandboxRootError(
            f'{folder.name} {folder.path} holds a .lock that cannot be opened safely ({error}): {folder.remedy}'
        ) from None
    try:
        found = os.fstat(lock)
        if not stat.S_ISREG(found.st_mode) or found.st_uid != os.geteuid():
            raise SandboxRootError(
                f'{folder.name} {folder.path} holds {folder.path}/.lock, which is not its own file: {folder.remedy}'
            )
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
        descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=folder_fd)
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


def user_name(uid: int) -> str:
    """`user <uid> (<name>)`, or `user <uid>` for an id with no account."""
    try:
        return f'user {uid} ({pwd.getpwuid(uid).pw_name})'
    except KeyError:
        return f'user {uid}'


def _open(folder: PrivateFolder) -> int:
    path = folder.path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # the folders above are checked next, before it is made
        _check_parents(folder)
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
    except OSError as error:
        raise SandboxRootError(f'{folder.name} {path} cannot be created ({error}). {folder.elsewhere}') from None
    try:
        descriptor = os.open(path, FOLDER_FLAGS)
    except OSError as error:
        if os.path.islink(path):
            problem = f'is a symbolic link, not a folder of its own: someone may have planted it to {folder.at_stake}'
        else:
            problem = f'cannot be opened as a folder ({error.strerror})'
        raise SandboxRootError(f'{folder.name} {path} {problem}: {folder.remedy}') from None
    try:
        found = os.fstat(descriptor)
        if found.st_uid != os.geteuid():
            raise SandboxRootError(
                f"{folder.name} {path} belongs to {user_name(found.st_uid)}, not to the agent's, "
                f'{user_name(os.geteuid())}: another user may have made it first, to {folder.at_stake}: {folder.remedy}'
            )
        if found.st_mode & 0o077:
            raise SandboxRootError(
                f'{folder.name} {path} is open to other users (mode {stat.filemode(found.st_mode)}): they could '
                f'{folder.at_stake}: close it (`chmod 700`), or {folder.remedy}'
            )
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _check_parents(folder: PrivateFolder) -> None:
    """Refuse a folder inside one another user could rename it out of (and put their own in its place): every folder
    above it must be root's or the agent's user's, and writable by others only if sticky (as `/tmp` is)."""
    real = Path(os.path.realpath(folder.path.parent))
    for parent in (*reversed(real.parents), real):
        found = os.stat(parent)
        if found.st_uid not in (0, os.geteuid()):
            raise SandboxRootError(
                f'{folder.name} {folder.path} is inside {parent}, which belongs to {user_name(found.st_uid)}: they '
                f'could swap it for a folder of their own. {folder.elsewhere}'
            )
        if found.st_mode & 0o022 and not found.st_mode & stat.S_ISVTX:
            raise SandboxRootError(
                f'{folder.name} {folder.path} is inside {parent}, which other users may write to '
                f'(mode {stat.filemode(found.st_mode)}, not sticky): they could swap it for a folder of their own. '
                f'{folder.elsewhere}'
            )
