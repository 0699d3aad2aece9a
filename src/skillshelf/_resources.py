"""Listing and reading the files bundled with a skill, never anything outside its folder."""

from __future__ import annotations

import os
import stat
import unicodedata
from pathlib import Path, PurePosixPath

from ._markdown import SKILL_FILE

MAX_RESOURCE_BYTES = 256 * 1024
"""A resource larger than this is described, not returned: it would flood the model's context."""
MAX_LISTED_RESOURCES = 200
"""At most this many resources are listed for one skill, so a huge folder cannot flood `load_skill`."""


class ResourceError(Exception):
    """A resource cannot be read; the message is written for the model."""


def list_folder_resources(folder: Path) -> list[str]:
    """Relative POSIX paths of the regular files under `folder`, sorted, excluding `SKILL.md` and hidden files.

    Symlinks are followed only when they stay inside the folder, and directory loops are never entered.
    """
    root = folder.resolve()
    found: list[str] = []
    for directory, subdirectories, files in os.walk(root, followlinks=False):
        subdirectories[:] = sorted(name for name in subdirectories if not name.startswith('.'))
        for name in sorted(files):
            if name.startswith('.'):
                continue
            path = Path(directory, name)
            relative = path.relative_to(root).as_posix()
            if relative == SKILL_FILE or not _is_inside(path, root) or not path.is_file():
                continue
            found.append(relative)
            if len(found) >= MAX_LISTED_RESOURCES:
                return found
    return found


def read_folder_resource(folder: Path, requested: str) -> str:
    """Read the text of the resource at `requested` (relative to `folder`).

    Raises:
        ResourceError: the path is not a plain relative path to a text file inside the folder.
    """
    relative = safe_relative_path(requested)
    root = folder.resolve()
    candidate = root.joinpath(*relative.parts)
    if not _is_inside(candidate, root):
        raise ResourceError(f'{requested!r} points outside the skill folder')
    try:
        info = candidate.stat()
    except OSError:
        raise ResourceError(f'no resource {requested!r}') from None
    if not stat.S_ISREG(info.st_mode):
        raise ResourceError(f'{requested!r} is not a file')
    if info.st_size > MAX_RESOURCE_BYTES:
        raise ResourceError(
            f'{requested!r} is {info.st_size:,} bytes, over the {MAX_RESOURCE_BYTES:,}-byte limit for one read'
        )
    try:
        data = candidate.read_bytes()
    except OSError as error:
        raise ResourceError(f'{requested!r} cannot be read ({error.strerror or error})') from None
    return decode_text(requested, data)


def decode_text(requested: str, data: bytes) -> str:
    """Decode a resource as UTF-8 text, refusing binary content with a message instead of bytes."""
    if b'\x00' in data:
        raise ResourceError(f'{requested!r} is a binary file ({len(data):,} bytes); only text resources can be read')
    try:
        return data.decode('utf-8-sig')
    except UnicodeDecodeError:
        raise ResourceError(f'{requested!r} is not UTF-8 text; only text resources can be read') from None


def safe_relative_path(requested: str) -> PurePosixPath:
    """Normalise a model-supplied path, refusing anything that is not a plain relative path.

    Raises:
        ResourceError: absolute, home-relative, parent-escaping, NUL-bearing or empty paths.
    """
    text = unicodedata.normalize('NFKC', requested).strip()
    if not text:
        raise ResourceError('the path is empty')
    if '\x00' in text:
        raise ResourceError('the path contains a NUL byte')
    text = text.replace('\\', '/')
    if text.startswith(('/', '~')) or (len(text) > 1 and text[1] == ':'):
        raise ResourceError(f'{requested!r} is not a path relative to the skill folder')
    parts = [part for part in PurePosixPath(text).parts if part not in ('', '.')]
    if not parts or '..' in parts:
        raise ResourceError(f'{requested!r} is not a path inside the skill folder')
    return PurePosixPath(*parts)


def _is_inside(path: Path, root: Path) -> bool:
    """Whether `path`, with every symlink resolved, is `root` or lies below it."""
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):
        return False
