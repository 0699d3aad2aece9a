"""`FolderContent`: a skill folder's instructions and files, never read from outside the folder.

A skill folder is held when it is accepted (see `hold_skill_folder`): a symlinked folder must lead inside
the directory that holds it, and the directory's identity is kept. Every later read checks that the
folder is still that directory and opens each part of the path beneath it without following a symlink
swapped in on the way (see `files.open_beneath`): symlinks inside the folder are followed only while they
stay in it, hard-linked files are refused unless the folder's read policy allows them, FIFOs and devices are
never opened for reading. The requested path is normalised first and refused if it is absolute, home-relative,
parent-escaping or hidden (see `safe_relative_path`).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from .._text import shown
from ..errors import ResourceError, SkillFormatError
from ..files import (
    DEFAULT_READ_POLICY,
    WALKS_BENEATH,
    FolderChangedError,
    HardLinkedFileError,
    HeldFolder,
    NotRegularFileError,
    OutsideFolderError,
    ReadPolicy,
    hold_folder,
    open_beneath,
    open_subfolder,
    read_at_most,
)
from ..markdown.bounded_read import SKILL_FILE, SkillFile, read_skill_file
from ..markdown.frontmatter import body_of, read_body
from .base import MAX_LISTED_RESOURCES, MAX_RESOURCE_BYTES, decode_text, too_large
from .paths import safe_relative_path

__all__ = (
    'MAX_RESOURCE_DEPTH',
    'MAX_SCANNED_ENTRIES',
    'FolderContent',
    'folder_changed',
    'hold_skill_folder',
    'list_folder_resources',
    'open_skill_folder',
    'read_folder_bytes',
    'read_folder_resource',
)

MAX_RESOURCE_DEPTH = 16
"""Sub-folders nested deeper than this inside a skill are not listed (their files can still be read)."""
MAX_SCANNED_ENTRIES = 20_000
"""At most this many directory entries are looked at to list one skill's resources."""


@dataclass(frozen=True)
class FolderContent:
    """A skill folder's content: the body of its `SKILL.md` and the files beside it, read beneath the folder as it
    was accepted, by its read policy."""

    skill_file: SkillFile
    """The `SKILL.md` and the held folder it is read beneath."""
    locked: Mapping[str, str] | None = field(default=None, repr=False)
    """The SHA-256 of each file as a lock file records it (`Skills(lock=...)`), once the skill was checked against
    it: the whole instructions and every file read afterwards must still have those bytes, or they are refused (an
    edit after the check reaches neither the model nor a workspace). `None`: no lock."""

    @property
    def folder(self) -> HeldFolder:
        """The skill folder as it was accepted."""
        return self.skill_file.folder

    @property
    def origin(self) -> str:
        """The folder's path."""
        return self.skill_file.folder.path

    def instructions(self, max_chars: int | None = None) -> str:
        """The body of the `SKILL.md`, read now; the whole of it checked against the lock, if there is one.

        Raises:
            SkillFormatError: it cannot be read, or it is not the `SKILL.md` the lock records.
        """
        if self.locked is None or max_chars is not None:  # a start of the body only feeds the search index
            return read_body(self.skill_file, max_chars)
        raw = read_skill_file(self.skill_file)
        if hashlib.sha256(raw).hexdigest() != self.locked.get(SKILL_FILE):
            raise SkillFormatError(self.skill_file.path, _CHANGED.format(SKILL_FILE))
        return body_of(self.skill_file, raw)

    def list_files(self) -> list[str]:
        """The files `read_bytes` would open (see `list_folder_resources`)."""
        return list_folder_resources(self.skill_file.folder)

    def has_files(self) -> bool:
        """Whether `list_files` finds any."""
        return bool(self.list_files())

    def read_bytes(self, path: str, max_bytes: int) -> bytes:
        """One file's bytes, opened beneath the folder; refused past `max_bytes`, and when they are not the bytes
        the lock records."""
        data = read_folder_bytes(self.skill_file.folder, path, max_bytes)
        if self.locked is not None:
            relative = safe_relative_path(path).as_posix()
            if hashlib.sha256(data).hexdigest() != self.locked.get(relative):
                raise ResourceError(_CHANGED.format(shown(relative)))
        return data


_CHANGED = '{} changed since the lock file recorded it, so it is not served; tell the user'


def hold_skill_folder(
    folder: str | Path, *, check_containment: bool = True, policy: ReadPolicy = DEFAULT_READ_POLICY
) -> HeldFolder:
    """Accept `folder` as a skill folder whose files are read later (see `read_folder_resource`).

    With `check_containment`, a folder that is a symlink must lead inside the directory that holds it (its
    library directory): a skill folder swapped for a link to, say, `~/.ssh` is not accepted. A library
    directory that is itself a skill folder is held without it: the user named that directory. `policy` says how
    its files may be read.

    Raises:
        ResourceError: the folder is missing, not a folder, or a symlink to outside its library directory.
    """
    path = os.path.abspath(folder)
    try:
        return hold_folder(path, within=os.path.dirname(path) if check_containment else None, policy=policy)
    except OutsideFolderError:
        raise ResourceError(
            'the skill folder now points outside its library directory, so its files are not served'
        ) from None
    except (FileNotFoundError, NotADirectoryError):
        raise ResourceError('the skill folder no longer exists (it was deleted or moved)') from None
    except OSError:
        raise ResourceError('the skill folder can no longer be resolved') from None


def open_skill_folder(
    folder: str | Path, *, check_containment: bool = True, policy: ReadPolicy = DEFAULT_READ_POLICY
) -> tuple[HeldFolder, int | None]:
    """`hold_skill_folder`, with the folder open when that is one system call: a real directory opened without
    following a symlink is the directory accepted (holding it and then opening it took three, for every skill folder
    of a library). Else, as for a symlink, `None` (the caller closes a descriptor it gets).

    Raises:
        ResourceError: as `hold_skill_folder`.
    """
    if WALKS_BENEATH:
        path = os.path.abspath(folder)
        try:
            descriptor = open_subfolder(None, path)
        except OSError:
            pass  # a symlink, a file, gone, unreadable: held (or refused) as before, with its reason
        else:
            try:
                info = os.fstat(descriptor)
            except OSError:
                os.close(descriptor)  # held (or refused) as before too
            else:
                return HeldFolder(path, info.st_dev, info.st_ino, policy), descriptor
    return hold_skill_folder(folder, check_containment=check_containment, policy=policy), None


def folder_changed(folder: HeldFolder) -> ResourceError:
    """The refusal of a read from a skill folder that is no longer the directory discovery accepted."""
    return ResourceError(
        f'the skill folder changed after the library was read ({folder.change()}); '
        'its files are not served until the library is read again'
    )


def list_folder_resources(folder: HeldFolder | Path, limit: int = MAX_LISTED_RESOURCES) -> list[str]:
    """Relative POSIX paths of the files under `folder` that `read_folder_resource` would open, in walk
    order (each folder's files sorted, then its sub-folders), excluding `SKILL.md`, hidden files and names
    that are not valid UTF-8; at most `limit` of them (a publisher asks for one more than a skill may have, to
    refuse a folder with too many rather than drop files).

    The walk opens each sub-folder beneath the one before, like a read, and never enters a symlinked
    folder; it is bounded (`MAX_RESOURCE_DEPTH` levels, `MAX_SCANNED_ENTRIES` entries), so a deep or huge
    folder cannot stall `load_skill`. A folder that vanished or changed lists nothing.
    """
    try:
        held = folder if isinstance(folder, HeldFolder) else hold_skill_folder(folder)
        if WALKS_BENEATH:
            root: int | str = held.open()
        else:
            held.check()
            root = held.path
    except (ResourceError, FolderChangedError):
        return []
    listing = _Listing(held, limit)
    try:
        listing.visit(root, '', 0)
    finally:
        if isinstance(root, int):
            os.close(root)
    return listing.found


@dataclass
class _Listing:
    """One bounded walk of a skill folder for `list_folder_resources`."""

    folder: HeldFolder
    """The folder being listed; files with other hard links are listed only if its read policy allows them."""
    limit: int = MAX_LISTED_RESOURCES
    """At most this many paths are listed."""
    found: list[str] = field(default_factory=list[str])
    """Listed paths so far."""
    scanned: int = 0
    """Directory entries looked at so far."""

    @property
    def done(self) -> bool:
        return len(self.found) >= self.limit or self.scanned > MAX_SCANNED_ENTRIES

    def visit(self, directory: int | str, prefix: str, depth: int) -> None:
        """List `directory` (open, or a path without `dir_fd`), then its real sub-folders, depth first; the
        recursion is at most `MAX_RESOURCE_DEPTH` deep, so no more descriptors than that are open at once."""
        try:
            with os.scandir(directory) as scan:
                entries = sorted(islice(scan, MAX_SCANNED_ENTRIES - self.scanned + 1), key=lambda entry: entry.name)
        except OSError:
            return
        subfolders: list[str] = []
        for entry in entries:
            self.scanned += 1
            if self.done:
                return
            if entry.name.startswith('.'):
                continue
            if _is_real_directory(entry):
                if depth < MAX_RESOURCE_DEPTH:
                    subfolders.append(entry.name)
                continue
            relative = prefix + entry.name
            if relative != SKILL_FILE and _is_text_name(relative) and self._readable(entry, relative):
                self.found.append(relative)
                if self.done:
                    return
        for name in subfolders:
            if self.done:
                return
            self._visit_subfolder(directory, name, f'{prefix}{name}/', depth + 1)

    def _visit_subfolder(self, parent: int | str, name: str, prefix: str, depth: int) -> None:
        if isinstance(parent, str):
            self.visit(os.path.join(parent, name), prefix, depth)
            return
        try:
            child = open_subfolder(parent, name)
        except OSError:
            return  # swapped for a symlink or removed since it was listed
        try:
            self.visit(child, prefix, depth)
        finally:
            os.close(child)

    def _readable(self, entry: os.DirEntry[str], relative: str) -> bool:
        """Whether a read of `relative` would open a file: a symlink is walked as a read walks it."""
        try:
            if entry.is_symlink():
                descriptor, _ = open_beneath(self.folder, relative.split('/'))
                os.close(descriptor)
                return True
            info = entry.stat(follow_symlinks=False)
        except OSError:
            return False
        return stat.S_ISREG(info.st_mode) and self.folder.policy.serves(info)


def read_folder_resource(folder: HeldFolder | Path, requested: str) -> str:
    """Read the text of the resource at `requested` (relative to `folder`), at most `MAX_RESOURCE_BYTES` bytes.

    Raises:
        ResourceError: the path is not a plain relative path to a text file inside the folder, or the
            folder is no longer the one that was accepted.
    """
    return decode_text(requested, read_folder_bytes(folder, requested, MAX_RESOURCE_BYTES))


def read_folder_bytes(folder: HeldFolder | Path, requested: str, max_bytes: int) -> bytes:
    """The bytes of the file at `requested` (relative to `folder`), refused past `max_bytes`.

    Raises:
        ResourceError: the path is not a plain relative path to a file inside the folder, the file is larger
            than `max_bytes`, or the folder is no longer the one that was accepted.
    """
    relative = safe_relative_path(requested)
    held = folder if isinstance(folder, HeldFolder) else hold_skill_folder(folder)
    try:
        descriptor, size = open_beneath(held, relative.parts)
    except OSError as error:
        raise _refusal(held, requested, error) from None
    try:
        if size > max_bytes:
            raise too_large(requested, size, max_bytes)
        data = read_at_most(descriptor, max_bytes + 1)
    except OSError as error:
        raise ResourceError(f'{shown(requested)} cannot be read ({error.strerror or error})') from None
    finally:
        os.close(descriptor)
    if len(data) > max_bytes:
        raise ResourceError(f'{shown(requested)} grew past the {max_bytes:,}-byte limit for one read')
    return data


def _refusal(folder: HeldFolder, requested: str, error: OSError) -> ResourceError:
    """Why `open_beneath` refused `requested`, for the model (never with a host path)."""
    if isinstance(error, FolderChangedError):
        return folder_changed(folder)
    if isinstance(error, OutsideFolderError):
        return ResourceError(f'{shown(requested)} points outside the skill folder')
    if isinstance(error, HardLinkedFileError):
        return ResourceError(
            f'{shown(requested)} has other hard links, so its content may be a file from outside the skill '
            'folder; hard-linked files are not served'
        )
    if isinstance(error, NotRegularFileError):
        return ResourceError(f'{shown(requested)} is not a file')
    if isinstance(error, (FileNotFoundError, NotADirectoryError)):
        return ResourceError(f'no resource {shown(requested)}')
    if error.errno == errno.ELOOP:
        return ResourceError(f'{shown(requested)} cannot be resolved (a symlink loop)')
    return ResourceError(f'{shown(requested)} cannot be read ({error.strerror or error})')


def _is_text_name(relative: str) -> bool:
    """Whether a file name is valid Unicode: undecodable bytes (surrogates) would break the model request."""
    try:
        relative.encode('utf-8')
    except UnicodeEncodeError:
        return False
    return True


def _is_real_directory(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False
