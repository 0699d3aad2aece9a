"""Listing and reading the files bundled with a skill, never anything outside its folder.

Every read is checked when it happens, not when the skill was discovered: the requested path is
normalised and refused if it is absolute, home-relative, parent-escaping or hidden; the skill folder
must still resolve inside its library directory; the file must resolve (symlinks followed) inside the
skill folder; and it is opened without following a symlink swapped in after that check, and without
blocking on a FIFO or device. Binary and oversized files get a message instead of their bytes.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from itertools import islice
from pathlib import Path, PurePosixPath

from .files import NotRegularFileError, open_regular_file
from .markdown.frontmatter import SKILL_FILE

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
_SHOWN_CHARACTERS = 80


class ResourceError(Exception):
    """A resource cannot be read; the message is written for the model."""


def shown(text: str) -> str:
    """`repr(text)`, shortened so a message never echoes an enormous argument back to the model."""
    if len(text) <= _SHOWN_CHARACTERS:
        return repr(text)
    return f'{text[: _SHOWN_CHARACTERS - 1]!r}… ({len(text):,} characters)'


def skill_root(folder: Path) -> Path:
    """The resolved skill folder, checked to still lie inside the directory that holds it.

    A skill folder swapped for a symlink to somewhere else after discovery (say `~/.ssh`) would
    otherwise turn every resource read into a read of that place.

    Raises:
        ResourceError: the folder is gone, cannot be resolved or now points outside its library directory.
    """
    try:
        root = folder.resolve()
        library = Path(os.path.abspath(folder)).parent.resolve()
    except (OSError, RuntimeError):
        raise ResourceError('the skill folder can no longer be resolved') from None
    if root == library or not root.is_relative_to(library):
        raise ResourceError('the skill folder now points outside its library directory, so its files are not served')
    if not root.is_dir():
        raise ResourceError('the skill folder no longer exists (it was deleted or moved)')
    return root


def list_folder_resources(folder: Path) -> list[str]:
    """Relative POSIX paths of the regular files under `folder`, sorted, excluding `SKILL.md`, hidden files and
    names that are not valid UTF-8.

    Symlinks are followed only when they stay inside the folder, and symlinked directories are never
    entered. The walk is iterative and bounded (`MAX_RESOURCE_DEPTH` levels, `MAX_SCANNED_ENTRIES`
    entries), so a deep or huge folder cannot exhaust the stack or stall `load_skill`. A folder that
    vanished or moved outside its library lists nothing.
    """
    try:
        root = skill_root(folder)
    except ResourceError:
        return []
    found: list[str] = []
    scanned = 0
    pending: list[tuple[Path, int]] = [(root, 0)]
    while pending:
        directory, depth = pending.pop()
        try:
            with os.scandir(directory) as scan:
                entries = sorted(islice(scan, MAX_SCANNED_ENTRIES - scanned + 1), key=lambda entry: entry.name)
        except OSError:
            continue
        subdirectories: list[Path] = []
        for entry in entries:
            scanned += 1
            if scanned > MAX_SCANNED_ENTRIES:
                return found
            if entry.name.startswith('.'):
                continue
            path = Path(entry.path)
            if _is_real_directory(entry):
                if depth < MAX_RESOURCE_DEPTH:
                    subdirectories.append(path)
                continue
            relative = path.relative_to(root).as_posix()
            if relative == SKILL_FILE or not _is_text_name(relative) or not _is_inside(path, root):
                continue
            if not _is_regular(path):
                continue
            found.append(relative)
            if len(found) >= MAX_LISTED_RESOURCES:
                return found
        pending.extend((subdirectory, depth + 1) for subdirectory in reversed(subdirectories))
    return found


def read_folder_resource(folder: Path, requested: str) -> str:
    """Read the text of the resource at `requested` (relative to `folder`).

    Raises:
        ResourceError: the path is not a plain relative path to a text file inside the folder.
    """
    relative = safe_relative_path(requested)
    root = skill_root(folder)
    try:
        target = root.joinpath(*relative.parts).resolve()
    except (OSError, RuntimeError):
        raise ResourceError(f'{shown(requested)} cannot be resolved (a symlink loop)') from None
    if not target.is_relative_to(root):
        raise ResourceError(f'{shown(requested)} points outside the skill folder')
    try:
        descriptor, size = open_regular_file(target)
    except FileNotFoundError:
        raise ResourceError(f'no resource {shown(requested)}') from None
    except NotRegularFileError:
        raise ResourceError(f'{shown(requested)} is not a file') from None
    except OSError as error:
        if error.errno == errno.ELOOP:  # Python 3.13+ resolves a loop without raising; open() reports it
            raise ResourceError(f'{shown(requested)} cannot be resolved (a symlink loop)') from None
        raise ResourceError(f'{shown(requested)} cannot be read ({error.strerror or error})') from None
    try:
        if size > MAX_RESOURCE_BYTES:
            raise ResourceError(
                f'{shown(requested)} is {size:,} bytes, over the {MAX_RESOURCE_BYTES:,}-byte limit for one read'
            )
        data = _read_at_most(descriptor, MAX_RESOURCE_BYTES + 1)
    except OSError as error:
        raise ResourceError(f'{shown(requested)} cannot be read ({error.strerror or error})') from None
    finally:
        os.close(descriptor)
    if len(data) > MAX_RESOURCE_BYTES:
        raise ResourceError(f'{shown(requested)} grew past the {MAX_RESOURCE_BYTES:,}-byte limit for one read')
    return decode_text(requested, data)


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


def _read_at_most(descriptor: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(descriptor, min(65536, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b''.join(chunks)


def _is_inside(path: Path, root: Path) -> bool:
    """Whether `path`, with every symlink resolved, is `root` or lies below it."""
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):
        return False


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


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False
