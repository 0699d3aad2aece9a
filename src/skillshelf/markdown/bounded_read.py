"""Reading the bytes of a `SKILL.md`: a regular file inside its own folder, at most `MAX_SKILL_FILE_BYTES`."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from ..errors import SkillFormatError
from ..files import REFUSES_SYMLINKS, SYMLINK_REFUSED_ERRNOS, NotRegularFileError, open_regular_file, read_at_most

__all__ = ('MAX_SKILL_FILE_BYTES', 'read_skill_file')

MAX_SKILL_FILE_BYTES = 2 * 1024 * 1024
"""A `SKILL.md` larger than this is refused rather than read into every run's context."""


def read_skill_file(skill_file: str | Path) -> bytes:
    """The bytes of `skill_file`, refused beyond `MAX_SKILL_FILE_BYTES`.

    Raises:
        SkillFormatError: the file cannot be opened or read, or is too large.
    """
    descriptor, size = _open_skill_file(skill_file)
    try:
        if size > MAX_SKILL_FILE_BYTES:
            raise SkillFormatError(skill_file, f'the file is {size:,} bytes; the limit is {MAX_SKILL_FILE_BYTES:,}')
        raw = read_at_most(descriptor, MAX_SKILL_FILE_BYTES + 1)
    except OSError as error:
        raise SkillFormatError(skill_file, f'cannot read the file ({_reason(error)})') from error
    finally:
        os.close(descriptor)
    if len(raw) > MAX_SKILL_FILE_BYTES:
        raise SkillFormatError(skill_file, f'the file grew past the limit of {MAX_SKILL_FILE_BYTES:,} bytes')
    return raw


def _open_skill_file(skill_file: str | Path) -> tuple[int, int]:
    """Open `skill_file` for reading if it is a regular file inside its own folder; returns the descriptor (the
    caller closes it) and the file's size.

    FIFOs, devices and directories are refused without blocking on them, and a `SKILL.md` that is a
    symlink to a file outside its folder is refused, so a skill cannot make the library read other files.
    """
    if not REFUSES_SYMLINKS:  # no O_NOFOLLOW (Windows): always check where the path leads
        return _open_symlinked_skill_file(skill_file)
    try:
        return open_regular_file(skill_file)
    except OSError as error:
        if error.errno not in SYMLINK_REFUSED_ERRNOS:
            raise _unreadable(skill_file, error) from error
        # `SKILL.md` is a symlink (or a loop): resolve it, and check that it stays in its folder.
        return _open_symlinked_skill_file(skill_file)


def _open_symlinked_skill_file(skill_file: str | Path) -> tuple[int, int]:
    try:
        path = Path(skill_file)
        folder, target = path.parent.resolve(), path.resolve()
    except (OSError, RuntimeError) as error:
        raise SkillFormatError(skill_file, f'cannot read the file ({_reason(error)})') from error
    if not target.is_relative_to(folder):
        raise SkillFormatError(skill_file, f'the file is a symlink to {target}, outside its skill folder')
    try:
        return open_regular_file(target)
    except OSError as error:
        raise _unreadable(skill_file, error) from error


def _unreadable(skill_file: str | Path, error: OSError) -> SkillFormatError:
    if isinstance(error, NotRegularFileError):
        return SkillFormatError(skill_file, 'it is not a regular file')
    return SkillFormatError(skill_file, f'cannot read the file ({_reason(error)})')


def _reason(error: BaseException) -> str:
    if isinstance(error, RuntimeError) or (isinstance(error, OSError) and error.errno == errno.ELOOP):
        return 'a symlink loop'  # Python < 3.13 raises RuntimeError from resolve(), later versions ELOOP from open()
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__
