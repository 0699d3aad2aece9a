"""Listing and reading the files bundled with a skill, never anything outside its folder.

A skill folder is held when it is accepted (see `hold_skill_folder`): a symlinked folder must lead inside
the directory that holds it, and the directory's identity is kept. Every later read checks that the
folder is still that directory and opens each part of the path beneath it without following a symlink
swapped in on the way (see `files.open_beneath`): symlinks inside the folder are followed only while they
stay in it, hard-linked files are refused unless allowed, FIFOs and devices are never opened for reading.
The requested path is normalised first and refused if it is absolute, home-relative, parent-escaping or
hidden. Binary and oversized files get a message instead of their bytes.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path, PurePosixPath

from ._text import shown
from .errors import ResourceError
from .files import (
    WALKS_BENEATH,
    FolderChangedError,
    HardLinkedFileError,
    HeldFolder,
    NotRegularFileError,
    OutsideFolderError,
    hold_folder,
    open_beneath,
    open_subfolder,
    read_at_most,
)
from .markdown.bounded_read import SKILL_FILE

MAX_RESOURCE_BYTES = 256 * 1024
"""A resource larger than this is described, not returned: it would flood the model's context."""
MAX_LISTED_RESOURCES = 200
"""At most this many resources are listed for one skill, so a huge folder cannot flood `load_skill`."""
MAX_RESOURCE_DEPTH = 16
"""Sub-folders nested deeper than this inside a skill are not listed (their files can still be read)."""
MAX_SCANNED_ENTRIES = 20_000
"""At most this many directory entries are looked at to list one skill's resources."""
MAX_PATH_CHARACTERS = 1024
"""A requested path longer than this is refused without touching the file system."""


def hold_skill_folder(
    folder: str | Path, *, check_containment: bool = True, allow_hard_links: bool = False
) -> HeldFolder:
    """Accept `folder` as a skill folder whose files are read later (see `read_folder_resource`).

    With `check_containment`, a folder that is a symlink must lead inside the directory that holds it (its
    library directory): a skill folder swapped for a link to, say, `~/.ssh` is not accepted. A library
    directory that is itself a skill folder is held without it: the user named that directory. `allow_hard_links`
    is the read policy of its files (see `HeldFolder.allow_hard_links`).

    Raises:
        ResourceError: the folder is missing, not a folder, or a symlink to outside its library directory.
    """
    path = os.path.abspath(folder)
    try:
        return hold_folder(
            path, within=os.path.dirname(path) if check_containment else None, allow_hard_links=allow_hard_links
        )
    except OutsideFolderError:
        raise ResourceError(
            'the skill folder now points outside its library directory, so its files are not served'
        ) from None
    except (FileNotFoundError, NotADirectoryError):
        raise ResourceError('the skill folder no longer exists (it was deleted or moved)') from None
    except OSError:
        raise ResourceError('the skill folder can no longer be resolved') from None


def folder_changed(folder: HeldFolder) -> ResourceError:
    """The refusal of a read from a skill folder that is no longer the directory discovery accepted."""
    return ResourceError(
        f'the skill folder changed after the library was read ({folder.change()}); '
        'its files are not served until the library is read again'
    )


def list_folder_resources(folder: HeldFolder | Path) -> list[str]:
    """Relative POSIX paths of the files under `folder` that `read_folder_resource` would open, in walk
    order (each folder's files sorted, then its sub-folders), excluding `SKILL.md`, hidden files and names
    that are not valid UTF-8.

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
    listing = _Listing(held)
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
    found: list[str] = field(default_factory=list[str])
    """Listed paths so far."""
    scanned: int = 0
    """Directory entries looked at so far."""

    @property
    def done(self) -> bool:
        return len(self.found) >= MAX_LISTED_RESOURCES or self.scanned > MAX_SCANNED_ENTRIES

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
        return stat.S_ISREG(info.st_mode) and (self.folder.allow_hard_links or info.st_nlink == 1)


def read_folder_resource(folder: HeldFolder | Path, requested: str) -> str:
    """Read the text of the resource at `requested` (relative to `folder`).

    Raises:
        ResourceError: the path is not a plain relative path to a text file inside the folder, or the
            folder is no longer the one that was accepted.
    """
    relative = safe_relative_path(requested)
    held = folder if isinstance(folder, HeldFolder) else hold_skill_folder(folder)
    try:
        descriptor, size = open_beneath(held, relative.parts)
    except OSError as error:
        raise _refusal(held, requested, error) from None
    try:
        if size > MAX_RESOURCE_BYTES:
            raise ResourceError(
                f'{shown(requested)} is {size:,} bytes, over the {MAX_RESOURCE_BYTES:,}-byte limit for one read'
            )
        data = read_at_most(descriptor, MAX_RESOURCE_BYTES + 1)
    except OSError as error:
        raise ResourceError(f'{shown(requested)} cannot be read ({error.strerror or error})') from None
    finally:
        os.close(descriptor)
    if len(data) > MAX_RESOURCE_BYTES:
        raise ResourceError(f'{shown(requested)} grew past the {MAX_RESOURCE_BYTES:,}-byte limit for one read')
    return decode_text(requested, data)


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


def decode_text(requested: str, data: bytes) -> str:
    """Decode a resource as UTF-8 text, refusing binary content with a message instead of bytes."""
    if b'\x00' in data:
        raise ResourceError(
            f'{shown(requested)} is a binary file ({len(data):,} bytes); only text resources can be read'
        )
    try:
        return data.decode('utf-8-sig')
    except UnicodeDecodeError:
        raise ResourceError(f'{shown(requested)} is not UTF-8 text; only text resources can be read') from None


def safe_relative_path(requested: str) -> PurePosixPath:
    """Normalise a model-supplied path, refusing anything that is not a plain relative path.

    The path is NFKC-normalised first, so look-alike characters (`．．／`, `‥`) cannot smuggle
    a `..` past the check, and `\\` counts as a separator. Percent-escapes are not decoded: `%2e%2e`
    is a file name like any other and matches nothing outside the folder.

    Raises:
        ResourceError: absolute, home-relative, drive-qualified, parent-escaping, hidden, NUL-bearing,
            overlong or empty paths.
    """
    if len(requested) > MAX_PATH_CHARACTERS:
        raise ResourceError(f'the path is {len(requested):,} characters long; the limit is {MAX_PATH_CHARACTERS:,}')
    text = unicodedata.normalize('NFKC', requested).strip()
    if not text:
        raise ResourceError('the path is empty')
    if '\x00' in text:
        raise ResourceError('the path contains a NUL byte')
    text = text.replace('\\', '/')
    if text.startswith(('/', '~')) or (len(text) > 1 and text[1] == ':'):
        raise ResourceError(f'{shown(requested)} is not a path relative to the skill folder')
    parts = [part for part in PurePosixPath(text).parts if part not in ('', '.')]
    if not parts or '..' in parts:
        raise ResourceError(f'{shown(requested)} is not a path inside the skill folder')
    if any(part.startswith('.') for part in parts):
        raise ResourceError(f'{shown(requested)} is a hidden file; only the listed resources can be read')
    return PurePosixPath(*parts)


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
