"""Which entries of a library directory are attempts at a skill, and why one cannot be a skill folder: read from
the listing before any `SKILL.md` is (see `directory.discover`)."""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from ..markdown.bounded_read import SKILL_FILE
from .misplaced import holds_skills

__all__ = ('DOCUMENTS', 'PACKED_SUFFIXES', 'SKILL_LIKE_FILES', 'entry_problem', 'ignored', 'os_reason')

SKILL_LIKE_FILES = frozenset({'.md', '.markdown', '.skill', '.zip'})
"""Suffixes of the files that look like a skill left out of its folder (a lone `pdf-forms.md`) or still packed
(`pdf-forms.skill`, `pdf-forms.zip`): such a file in a library directory is reported, not ignored."""
PACKED_SUFFIXES = frozenset({'.skill', '.zip'})
"""Suffixes of a packed skill: beside a folder of the same name (Vercel's `skills/react-best-practices.zip`) it is
that skill's copy for upload, and says nothing."""
DOCUMENTS = re.compile(
    r'(?:agents|authors|changelog|changes|claude|code_of_conduct|contributing|contributors|history|licen[cs]e|'
    r'notice|readme|security)(?![a-z0-9])',
    re.IGNORECASE,
)
"""Markdown files a library directory may hold beside its skill folders without a warning, matched at the start
of the name: a repository's documents (`README.md`, `README-zh.md`, `LICENSE.md`, `AGENTS.md`, ...)."""


def entry_problem(entry: os.DirEntry[str], skill_file: os.stat_result | None, library: Path) -> str | None:
    """Why the listed `entry` cannot be a skill folder, before its `SKILL.md` (whose `stat` is `skill_file`) is
    read; `None` if it may be one."""
    if skill_file is not None and _is_real_folder(entry):
        return None  # what every check below finds for a folder holding a `SKILL.md`, without a `stat`
    try:
        info = os.stat(entry.path)  # follows a symlink: what matters is what it leads to
    except OSError as error:
        return _broken_link(entry, error)
    if stat.S_ISREG(info.st_mode):
        return f'{_kind(entry)} a file, not a skill folder (a folder holding a {SKILL_FILE})'
    if not stat.S_ISDIR(info.st_mode):
        return f'{_kind(entry)} a special file (a FIFO, socket or device), not a skill folder'
    if entry.is_symlink() and (problem := _outside(entry, library) or _alias(entry, library)) is not None:
        return problem
    if skill_file is not None:
        return None
    try:
        os.lstat(os.path.join(entry.path, SKILL_FILE))
    except FileNotFoundError:
        if holds_skills(entry.path):
            return (
                f'the folder has no {SKILL_FILE}, so it is not a skill (skills in its sub-folders are not read); it '
                f'holds skill folders: list {entry.path!r} as a directory'
            )
        return f'the folder has no {SKILL_FILE}, so it is not a skill (skills in its sub-folders are not read)'
    except OSError as error:
        return f'cannot read the folder ({os_reason(error)})'
    return None


def ignored(entry: os.DirEntry[str], folders: set[str]) -> bool:
    """Whether `entry` is a file that is no attempt at a skill: not skill-like (see `SKILL_LIKE_FILES`), one of the
    usual documents (see `DOCUMENTS`), or a packed copy of a skill whose folder is beside it (`pdf.zip` and `pdf/`,
    one of `folders`). Folders and special files are never ignored."""
    try:
        if entry.is_dir() or not entry.is_file():
            return False
    except OSError:
        return False
    stem, suffix = os.path.splitext(entry.name)
    if suffix.lower() in PACKED_SUFFIXES and stem in folders:
        return True
    return suffix.lower() not in SKILL_LIKE_FILES or DOCUMENTS.match(entry.name) is not None


def _kind(entry: os.DirEntry[str]) -> str:
    return 'it is a symlink to' if entry.is_symlink() else 'it is'


def _broken_link(entry: os.DirEntry[str], error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return 'it is a symlink loop'
    if error.errno in (errno.ENOENT, errno.ENOTDIR) and entry.is_symlink():
        return f'it is a symlink to {_link_target(entry)}, which does not exist'
    return f'cannot look at it ({os_reason(error)})'


def _outside(entry: os.DirEntry[str], library: Path) -> str | None:
    """Why the symlinked folder `entry` is not read: it leads outside the library directory (or to the
    library itself); `None` if it leads inside."""
    target = os.path.realpath(entry.path)
    root = os.path.realpath(library)
    if target == root:
        return 'the skill folder is a symlink to the library directory itself'
    if not target.startswith(os.path.join(root, '')):
        return (
            f'the skill folder is a symlink to {target}, outside the library directory; skills are only read from '
            'inside a library (add its parent as a library directory instead)'
        )
    return None


def _alias(entry: os.DirEntry[str], library: Path) -> str | None:
    """Why the symlinked folder `entry` is not read: it leads to another visible entry of the same library, which is
    read itself (an alias would load the same skill twice, or shadow it under the alias's name); `None` if not."""
    target = os.path.realpath(entry.path)
    sibling = os.path.basename(target)
    if os.path.dirname(target) != os.path.realpath(library) or sibling.startswith('.') or sibling == entry.name:
        return None
    return f'the skill folder is a symlink to {sibling!r} beside it, which is read itself; the alias is not read'


def _link_target(entry: os.DirEntry[str]) -> str:
    try:
        return os.readlink(entry.path)
    except OSError:
        return 'a path that cannot be read'


def _is_real_folder(entry: os.DirEntry[str]) -> bool:
    """Whether `entry` is a folder and not a symlink to one, as the listing saw it (no system call on Linux)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def os_reason(error: OSError) -> str:
    """An OS error in words for a skip message."""
    return error.strerror or str(error) or type(error).__name__
