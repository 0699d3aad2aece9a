"""Files: opening untrusted ones (the one rule `SKILL.md` and resource reads share), and where and how cache files
are written.

A skill's files are read beneath a [`HeldFolder`][skillshelf.files.HeldFolder]: the folder as it was when it
was accepted. Each read opens the folder again, checks that it is still the same directory, and then opens
every component of the path relative to the one before without following a symlink, so a folder or
sub-folder swapped for a symlink while the read runs cannot redirect it. A symlink inside the folder is
followed only by walking its target again from the folder, and refused once it would leave it.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, ParamSpec, TypeVar

_P = ParamSpec('_P')
_R = TypeVar('_R')

_O_NONBLOCK = getattr(os, 'O_NONBLOCK', 0)
"""Opening a FIFO without it blocks until a writer appears: a hang, not an error."""
_O_NOFOLLOW = getattr(os, 'O_NOFOLLOW', 0)
"""A symlink at the opened path is refused, not followed: one swapped in after a caller's check cannot redirect the read."""
_O_DIRECTORY = getattr(os, 'O_DIRECTORY', 0)
REFUSES_SYMLINKS = _O_NOFOLLOW != 0
"""Whether `open_regular_file` refuses a symlink (not on Windows, which has no `O_NOFOLLOW`)."""
SYMLINK_REFUSED_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK})
"""What `open` reports for a refused symlink: `ELOOP` (Linux, macOS), `EMLINK` (FreeBSD)."""
WALKS_BENEATH = (
    REFUSES_SYMLINKS
    and _O_DIRECTORY != 0
    and {os.open, os.readlink, os.stat} <= os.supports_dir_fd
    and os.scandir in os.supports_fd
)
"""Whether reads beneath a held folder open each component relative to the last (POSIX). Without `dir_fd`
(Windows) the whole path is resolved and checked, then opened: a swap between the two is not caught there."""
MAX_SYMLINK_HOPS = 40
"""Symlinks followed in one read before it is refused as a loop (Linux's own limit)."""
_OFF = frozenset({'', '0', 'off', 'false', 'no', 'none'})
"""Values of `$SKILLSHELF_CACHE_DIR` that turn caching off."""


class NotRegularFileError(OSError):
    """The path is a FIFO, a device, a directory or anything else that is not a regular file."""


class FolderChangedError(OSError):
    """A held folder's path no longer names the directory that was accepted (or names nothing)."""


class OutsideFolderError(OSError):
    """A symlink inside a held folder leads outside it."""


class HardLinkedFileError(OSError):
    """A regular file with more than one hard link: its other names may lie anywhere, so its content may be a
    file from outside the folder."""

    remedy = 'allow them with the `allow_hard_links` option'
    """What the host can do about it, for the messages that refuse such a file (see `ReadPolicy`)."""


@dataclass(frozen=True)
class ReadPolicy:
    """How the files beneath an accepted folder may be read: decided once, from the library's options, and kept by
    every folder accepted under it (`HeldFolder.policy`) for every later read."""

    allow_hard_links: bool = False
    """Serve files that have other hard links (refused by default: their other names may lie outside the folder)."""

    def serves(self, info: os.stat_result) -> bool:
        """Whether the regular file whose `stat` is `info` may be read."""
        return self.allow_hard_links or info.st_nlink <= 1


DEFAULT_READ_POLICY = ReadPolicy()
"""Files with other hard links are refused."""


def takes_the_old_flag(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """`function`, which takes `policy=ReadPolicy(...)`, still taking the flag the policy replaced there for this
    release, with a `DeprecationWarning`: the flag lives on the policy alone, not threaded through every caller."""
    where = function.__qualname__.removesuffix('.__init__')

    @functools.wraps(function)
    def taking_the_flag(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if 'allow_hard_links' in kwargs:
            warnings.warn(
                f'{where}(allow_hard_links=...) is deprecated: pass policy=ReadPolicy(allow_hard_links=...) '
                '(ReadPolicy from skillshelf)',
                DeprecationWarning,
                stacklevel=2,
            )
            kwargs['policy'] = ReadPolicy(bool(kwargs.pop('allow_hard_links')))
        return function(*args, **kwargs)

    return taking_the_flag


_ANY_FILE = ReadPolicy(allow_hard_links=True)
"""The policy of `open_regular_file`, which opens a file by its path, beneath no folder."""


def open_regular_file(target: str | Path) -> tuple[int, int]:
    """Open `target` read-only, without blocking and without following a symlink at its last component.

    Returns:
        The open descriptor (the caller closes it) and the file's size.

    Raises:
        NotRegularFileError: `target` is not a regular file (nothing is left open).
        OSError: `target` cannot be opened (missing, a symlink, unreadable, ...).
    """
    descriptor = os.open(target, os.O_RDONLY | _O_NONBLOCK | _O_NOFOLLOW)
    return _checked_file(descriptor, _ANY_FILE)


@dataclass(frozen=True)
class HeldFolder:
    """A folder as it was accepted: its path, the identity of the directory the path named then, and how the files
    beneath it may be read."""

    path: str
    """The folder as given; it may be a symlink that was accepted."""
    device: int
    """`st_dev` of the directory."""
    inode: int
    """`st_ino` of the directory."""
    policy: ReadPolicy = DEFAULT_READ_POLICY
    """How the files beneath it may be read, decided once, when the folder is accepted, for every later read."""

    def open(self) -> int:
        """Open the folder (the caller closes the descriptor), checking it is still the accepted directory.

        Raises:
            FolderChangedError: the path is gone, or names another directory or something else.
        """
        try:
            descriptor = os.open(self.path, os.O_RDONLY | _O_DIRECTORY)
        except OSError as error:
            raise FolderChangedError(error.errno, 'the folder cannot be opened') from None
        if self.matches(os.fstat(descriptor)):
            return descriptor
        os.close(descriptor)
        raise FolderChangedError(errno.ESTALE, 'the path now names another directory')

    def check(self) -> None:
        """Check by path that the folder is still the accepted directory (platforms without `dir_fd`).

        Raises:
            FolderChangedError: the path is gone, or names another directory or something else.
        """
        try:
            info = os.stat(self.path)
        except OSError as error:
            raise FolderChangedError(error.errno, 'the folder cannot be found') from None
        if not self.matches(info):
            raise FolderChangedError(errno.ESTALE, 'the path now names another directory')

    def change(self) -> str:
        """What became of the folder's path, in words for a message (after `FolderChangedError`)."""
        if not os.path.lexists(self.path):
            return 'it was deleted or moved'
        real, parent = os.path.realpath(self.path), os.path.realpath(os.path.dirname(self.path))
        if real == parent or not real.startswith(os.path.join(parent, '')):
            return 'it now points outside its library directory'
        if os.path.islink(self.path):
            return 'it is now a symlink to another folder'
        return 'it was replaced by another folder'

    def matches(self, info: os.stat_result) -> bool:
        """Whether `info` (a `stat` result) is of the accepted directory."""
        return stat.S_ISDIR(info.st_mode) and (info.st_dev, info.st_ino) == (self.device, self.inode)


def hold_folder(
    path: str | os.PathLike[str],
    *,
    within: str | os.PathLike[str] | None = None,
    policy: ReadPolicy = DEFAULT_READ_POLICY,
) -> HeldFolder:
    """Accept the directory at `path`; a symlink there is followed, and with `within` it must lead strictly
    beneath that directory. A real directory is accepted with one `lstat`. `policy` says how the files beneath it
    may be read.

    Raises:
        OutsideFolderError: `path` is a symlink that leads outside `within` (or to `within` itself).
        FolderChangedError: the symlink changed while it was checked.
        OSError: `path` is missing, dangling, a loop or not a directory.
    """
    path = os.fspath(path)
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        info = os.stat(path)
        if within is not None:
            _check_link_within(path, info, os.fspath(within))
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, 'not a directory')
    return HeldFolder(path, info.st_dev, info.st_ino, policy)


def _check_link_within(path: str, info: os.stat_result, within: str) -> None:
    real, library = os.path.realpath(path), os.path.realpath(within)
    if real == library or not real.startswith(os.path.join(library, '')):
        raise OutsideFolderError(errno.EXDEV, 'the folder is a symlink to outside its parent')
    resolved = os.stat(real)  # the checked path, not a later swap, must be the directory that was looked at
    if (resolved.st_dev, resolved.st_ino) != (info.st_dev, info.st_ino):
        raise FolderChangedError(errno.ESTALE, 'the symlink changed while it was checked')


def open_beneath(folder: HeldFolder, parts: Sequence[str], opened: int | None = None) -> tuple[int, int]:
    """Open the regular file at `parts` (names relative to `folder`, no `..`) read-only, never leaving `folder`
    (`opened`: the folder's descriptor, when the caller holds it open).

    Symlinks on the way are followed by walking their targets from the folder again, at most
    `MAX_SYMLINK_HOPS` of them; a target that climbs above the folder or is an absolute path outside it
    is refused.

    Returns:
        The open descriptor (the caller closes it) and the file's size.

    Raises:
        FolderChangedError: `folder` is no longer the accepted directory.
        OutsideFolderError: a symlink on the way leads outside `folder`.
        NotRegularFileError: the path names a directory, FIFO, device, ...
        HardLinkedFileError: the file has other hard links and the folder does not allow them.
        OSError: missing (`ENOENT`, `ENOTDIR`), a symlink loop (`ELOOP`), unreadable, ...
    """
    if not WALKS_BENEATH:
        return _open_by_path(folder, parts)
    if opened is not None:
        return _walk(folder, opened, list(parts))
    root = folder.open()
    try:
        return _walk(folder, root, list(parts))
    finally:
        os.close(root)


def read_beneath(folder: HeldFolder, parts: Sequence[str], max_bytes: int) -> bytes:
    """The first `max_bytes` bytes of the file at `parts` beneath `folder` (see `open_beneath`, which lists
    what is raised); ask for a byte more than a limit to tell a file that is too large."""
    descriptor, _ = open_beneath(folder, parts)
    try:
        return read_at_most(descriptor, max_bytes)
    finally:
        os.close(descriptor)


def read_at_most(descriptor: int, limit: int) -> bytes:
    """Read from `descriptor` until its end or `limit` bytes."""
    chunks: list[bytes] = []
    size = 0
    while size < limit and (chunk := os.read(descriptor, min(65536, limit - size))):
        chunks.append(chunk)
        size += len(chunk)
    return b''.join(chunks)


def open_subfolder(parent: int | None, name: str) -> int:
    """Open the real directory `name` inside the open directory `parent` (`None`: `name` is a path); a symlink is
    refused (`ELOOP` or `ENOTDIR`)."""
    return os.open(name, os.O_RDONLY | _O_NOFOLLOW | _O_DIRECTORY, dir_fd=parent)


def _walk(folder: HeldFolder, root: int, parts: list[str]) -> tuple[int, int]:
    """`open_beneath` from the open `root`: `opened` holds the directories below it, innermost last."""
    opened: list[int] = []
    pending = [part for part in reversed(parts) if part not in ('', '.')]
    hops = 0
    try:
        while pending:
            name = pending.pop()
            if name == '..':  # only a symlink's target brings these
                if not opened:
                    raise OutsideFolderError(errno.EXDEV, 'a symlink climbs above the folder')
                os.close(opened.pop())
                continue
            here = opened[-1] if opened else root
            final = not pending
            try:
                descriptor = os.open(
                    name, os.O_RDONLY | _O_NOFOLLOW | (_O_NONBLOCK if final else _O_DIRECTORY), dir_fd=here
                )
            except OSError as error:
                if error.errno not in SYMLINK_REFUSED_ERRNOS and error.errno != errno.ENOTDIR:
                    raise
                target = _link_target(name, here, error)
                hops += 1
                if hops > MAX_SYMLINK_HOPS:
                    raise OSError(errno.ELOOP, 'a symlink loop') from None
                if os.path.isabs(target):
                    target = _inside_path(folder, target)
                    while opened:
                        os.close(opened.pop())
                pending.extend(part for part in reversed(target.split('/')) if part not in ('', '.'))
                continue
            if final:
                return _checked_file(descriptor, folder.policy)
            opened.append(descriptor)
        raise NotRegularFileError(errno.EISDIR, 'the path names a directory')
    finally:
        for descriptor in opened:
            os.close(descriptor)


def _link_target(name: str, directory: int, refused: OSError) -> str:
    """The target of the symlink `name` in `directory`; `refused` is raised again if `name` is no symlink
    (a file where a folder was expected)."""
    try:
        return os.readlink(name, dir_fd=directory)
    except OSError:
        raise refused from None


def _inside_path(folder: HeldFolder, target: str) -> str:
    """An absolute symlink target as a path relative to `folder`, if it names a place inside it.

    The folder's real path is worked out now and checked to be the held directory; the result is walked
    from the held directory all the same, so a wrong guess can only miss, never leave the folder.
    """
    for base in (os.path.realpath(folder.path), os.path.abspath(folder.path)):
        prefix = os.path.join(base, '')
        if target.startswith(prefix) and _is_held_at(base, folder):
            return target[len(prefix) :]
    raise OutsideFolderError(errno.EXDEV, 'a symlink leads outside the folder')


def _is_held_at(path: str, folder: HeldFolder) -> bool:
    try:
        return folder.matches(os.stat(path))
    except OSError:
        return False


def _open_by_path(folder: HeldFolder, parts: Sequence[str]) -> tuple[int, int]:
    """`open_beneath` where there is no `dir_fd`: resolve, check, then open (racy, but never unchecked)."""
    folder.check()
    try:
        root = Path(folder.path).resolve()
        target = root.joinpath(*parts).resolve()
    except RuntimeError:
        raise OSError(errno.ELOOP, 'a symlink loop') from None
    if not target.is_relative_to(root):
        raise OutsideFolderError(errno.EXDEV, 'a symlink leads outside the folder')
    descriptor = os.open(target, os.O_RDONLY | _O_NONBLOCK)
    return _checked_file(descriptor, folder.policy)


def _checked_file(descriptor: int, policy: ReadPolicy) -> tuple[int, int]:
    """The open `descriptor` and its size if it is a regular file; else it is closed and the reason raised."""
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(errno.EINVAL, 'not a regular file')
        if not policy.serves(info):
            raise HardLinkedFileError(errno.EPERM, f'the file has {info.st_nlink} hard links')
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor, info.st_size


def write_atomically(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Create or replace `path` with what `write` writes to the file it is given, so that a reader never sees half
    a file. A cache is only a cache: if the file cannot be written, nothing is left behind and nothing is raised."""
    temporary: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix='.tmp', delete=False) as file:
            temporary = file.name
            write(file)
        os.replace(temporary, path)
    except OSError:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)


def cache_directory() -> Path | None:
    """Where skillshelf keeps its caches (search indexes, embeddings, git checkouts): `$SKILLSHELF_CACHE_DIR`, else
    `$XDG_CACHE_HOME/skillshelf`, else `~/.cache/skillshelf`; `None` when caching is turned off."""
    configured = os.environ.get('SKILLSHELF_CACHE_DIR')
    if configured is not None:
        return None if configured.strip().lower() in _OFF else Path(configured).expanduser()
    base = os.environ.get('XDG_CACHE_HOME') or str(Path.home() / '.cache')
    return Path(base) / 'skillshelf'
