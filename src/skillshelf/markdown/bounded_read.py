"""Reading the bytes of a `SKILL.md`: a regular file inside its own folder, at most `MAX_SKILL_FILE_BYTES`.

Discovery reads a `SKILL.md` by its path; once a skill is known, its `SKILL.md` is read beneath the folder
discovery accepted (a `SkillFile` with a held folder), so a folder swapped for a symlink afterwards is refused
instead of followed.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..errors import SkillFormatError
from ..files import (
    REFUSES_SYMLINKS,
    SYMLINK_REFUSED_ERRNOS,
    FolderChangedError,
    HardLinkedFileError,
    HeldFolder,
    NotRegularFileError,
    OutsideFolderError,
    open_beneath,
    open_regular_file,
    read_at_most,
)

__all__ = ('MAX_SKILL_FILE_BYTES', 'SKILL_FILE', 'SkillFile', 'read_skill_file')

SKILL_FILE = 'SKILL.md'
MAX_SKILL_FILE_BYTES = 2 * 1024 * 1024
"""A `SKILL.md` larger than this is refused rather than read into every run's context."""


@dataclass(frozen=True)
class SkillFile:
    """The `SKILL.md` of a folder that was accepted: read beneath that folder, never through a path again."""

    folder: HeldFolder
    """The skill folder as discovery accepted it, with its read policy."""
    _read_ahead: list[tuple[bytes, tuple[int, ...]]] = field(
        default_factory=list[tuple[bytes, tuple[int, ...]]], init=False, repr=False, compare=False
    )

    def keep_for_next_read(self, raw: bytes, listed: os.stat_result) -> None:
        """Hand `raw`, the file's bytes just read, to the next `read_skill_file` of it, once, if the file is then
        still as `listed` (its `stat` before the read): discovery reads every `SKILL.md` for its frontmatter, and
        the first search reads every body again right after. A `stat` costs a fifth of a read."""
        self._read_ahead[:] = [(raw, _identity(listed))]

    def take_kept(self) -> bytes | None:
        """The bytes `keep_for_next_read` kept, once, if the file is unchanged since; else `None`."""
        if not self._read_ahead:
            return None
        raw, identity = self._read_ahead.pop()
        try:
            unchanged = _identity(os.stat(self.path)) == identity
        except OSError:
            return None
        return raw if unchanged else None

    def forget_kept(self) -> None:
        """Drop what `keep_for_next_read` kept."""
        self._read_ahead.clear()

    @cached_property  # asked for at every read, even one that reports nothing
    def path(self) -> str:
        """Where the file is, for messages."""
        return os.path.join(self.folder.path, SKILL_FILE)


def _identity(info: os.stat_result) -> tuple[int, ...]:
    """What tells a file apart from an edited or replaced one, as change detection does elsewhere."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def read_skill_file(skill_file: str | Path | SkillFile, opened: int | None = None) -> bytes:
    """The bytes of `skill_file`, refused beyond `MAX_SKILL_FILE_BYTES`; `opened` is the descriptor of a `SkillFile`'s
    folder, when the caller holds it open.

    Raises:
        SkillFormatError: the file cannot be opened or read, or is too large.
    """
    if isinstance(skill_file, SkillFile):
        if (kept := skill_file.take_kept()) is not None:
            return kept
        descriptor, size = _open_beneath(skill_file, opened)
        skill_file = skill_file.path
    else:
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


def _open_beneath(skill_file: SkillFile, opened: int | None) -> tuple[int, int]:
    try:
        return open_beneath(skill_file.folder, [SKILL_FILE], opened)
    except FolderChangedError:
        problem = (
            f'the skill folder changed after the library was read ({skill_file.folder.change()}); '
            'the library must be read again'
        )
    except OutsideFolderError:
        problem = 'the file is a symlink to outside its skill folder'
    except HardLinkedFileError:
        problem = (
            'the file has other hard links, so its content may be a file from outside the skill folder '
            f'({HardLinkedFileError.remedy})'
        )
    except OSError as error:
        raise _unreadable(skill_file.path, error) from error
    raise SkillFormatError(skill_file.path, problem)


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
