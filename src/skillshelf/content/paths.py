"""The one check of a path to a skill's file, wherever it comes from (the model, a package, a registry row)."""

from __future__ import annotations

import unicodedata
from pathlib import PurePosixPath

from .._text import shown
from ..errors import ResourceError

__all__ = ('MAX_PATH_CHARACTERS', 'safe_relative_path')

MAX_PATH_CHARACTERS = 1024
"""A requested path longer than this is refused without touching the file system."""


def safe_relative_path(requested: str) -> PurePosixPath:
    """Normalise a path to a skill's file, refusing anything that is not a plain relative path.

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
