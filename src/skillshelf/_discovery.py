"""Finding `SKILL.md` skill folders in library directories."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._errors import SkillFormatError
from ._frontmatter_cache import FrontmatterCache
from ._markdown import SKILL_FILE, parse_frontmatter, warn_notes
from ._resources import ResourceError, skill_root
from ._skill import Skill, folder_skill


@dataclass(frozen=True)
class SkippedSkill:
    """A `SKILL.md` that could not be used, and why."""

    path: Path
    """The file (or directory) at fault."""
    problem: str
    """What is wrong with it."""


@dataclass
class Discovery:
    """What one library directory holds."""

    skills: list[Skill[Any]]
    """Valid skills, ordered by folder name."""
    skipped: list[SkippedSkill]
    """Folders with a `SKILL.md` that failed to parse."""


def discover(directory: Path) -> Discovery:
    """Read the skills in `directory`: itself if it holds a `SKILL.md`, else each immediate sub-folder that does.

    Folders are visited in sorted order so that every process sees the same library; hidden folders
    (starting with `.`) are ignored. A broken skill is reported in `skipped` and never hides the others,
    and so is a `SKILL.md` that cannot even be looked at (a symlink loop, a dangling link, a FIFO).
    A skill folder that is a symlink must stay inside the library directory: one that points elsewhere
    is skipped (list its target's parent as a library directory instead).
    """
    found = Discovery(skills=[], skipped=[])
    try:
        is_directory = directory.is_dir()
    except OSError as error:  # pragma: no cover - is_dir() swallows most errors itself
        found.skipped.append(SkippedSkill(directory, f'cannot open the directory ({error.strerror or error})'))
        return found
    if not is_directory:
        problem = 'it is not a directory' if os.path.lexists(directory) else 'the directory does not exist'
        found.skipped.append(SkippedSkill(directory, problem))
        return found
    if _has_skill_file(directory):
        _read_into(found, directory, check_containment=False)
        return found
    try:
        with os.scandir(directory) as scan:
            entries = sorted((entry for entry in scan if not entry.name.startswith('.')), key=lambda entry: entry.name)
    except OSError as error:
        found.skipped.append(SkippedSkill(directory, f'cannot list the directory ({error.strerror or error})'))
        return found
    cache = FrontmatterCache(directory)
    for entry in entries:
        child = directory / entry.name
        if _is_skill_folder(entry, child):
            # A real sub-folder is inside the library by construction; only a symlinked one needs resolving.
            _read_into(found, child, check_containment=entry.is_symlink(), cache=cache)
    cache.save()
    return found


def _has_skill_file(folder: Path) -> bool:
    """Whether `folder` has a `SKILL.md` entry of any kind, even a broken symlink, so problems get reported."""
    return os.path.lexists(folder / SKILL_FILE)


def _is_skill_folder(entry: os.DirEntry[str], path: Path) -> bool:
    """Whether the listed `entry` (at `path`) is a folder with a `SKILL.md`; the listing already knows a real folder."""
    try:
        return entry.is_dir() and _has_skill_file(path)
    except OSError:
        return False


def _read_into(
    found: Discovery, folder: Path, *, check_containment: bool, cache: FrontmatterCache | None = None
) -> None:
    if check_containment:
        try:
            skill_root(folder)
        except ResourceError:
            target = _describe_target(folder)
            found.skipped.append(
                SkippedSkill(
                    folder,
                    f'the skill folder is a symlink to {target}, outside the library directory; '
                    'skills are only read from inside a library (add its parent as a library directory instead)',
                )
            )
            return
    skill_file = folder / SKILL_FILE
    try:
        front = cache.parse(skill_file) if cache is not None else parse_frontmatter(skill_file)
    except SkillFormatError as error:
        found.skipped.append(SkippedSkill(error.path or folder, error.problem))
        return
    warn_notes(front, stacklevel=5)
    found.skills.append(folder_skill(folder, front))


def _describe_target(folder: Path) -> str:
    try:
        return str(folder.resolve())
    except (OSError, RuntimeError):
        return 'a path that cannot be resolved'


Fingerprint = tuple[object, ...]


def fingerprint(directories: Sequence[Path]) -> Fingerprint:
    """A cheap signature of what discovery would read from `directories`: one `stat` per entry.

    It changes when a skill folder is added, removed or renamed (the directory listing), or a
    `SKILL.md` appears, disappears or is edited (its mtime, size and inode), so a library can tell
    that it should be read again without reading any file.
    """
    parts: list[object] = []
    for directory in directories:
        parts.append((str(directory), _stat_key(directory)))
        if _has_skill_file(directory):
            parts.append(_stat_key(directory / SKILL_FILE))
            continue
        try:
            names = sorted(name for name in os.listdir(directory) if not name.startswith('.'))
        except (OSError, ValueError):
            continue
        parts.extend((name, _stat_key(directory / name / SKILL_FILE)) for name in names)
    return tuple(parts)


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)
