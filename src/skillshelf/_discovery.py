"""Finding `SKILL.md` skill folders in library directories."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._errors import SkillFormatError
from ._frontmatter_cache import FrontmatterCache
from ._markdown import SKILL_FILE, parse_frontmatter, warn_notes
from ._resources import ResourceError, skill_root
from ._skill import Skill, file_stamp, folder_skill


@dataclass(frozen=True)
class SkippedSkill:
    """A `SKILL.md` that could not be used, and why."""

    path: Path
    """The file (or directory) at fault."""
    problem: str
    """What is wrong with it."""


Fingerprint = tuple[object, ...]
"""A signature of what discovery reads from library directories; see `fingerprint`."""


@dataclass
class Discovery:
    """What one library directory holds."""

    skills: list[Skill[Any]]
    """Valid skills, ordered by folder name."""
    skipped: list[SkippedSkill]
    """Folders with a `SKILL.md` that failed to parse."""
    fingerprint: Fingerprint = ()
    """`fingerprint([directory])` as it was when the directory was read: each file was looked at before it was read."""


def discover(directory: Path) -> Discovery:
    """Read the skills in `directory`: itself if it holds a `SKILL.md`, else each immediate sub-folder that does.

    Folders are visited in sorted order so that every process sees the same library; hidden folders
    (starting with `.`) are ignored. A broken skill is reported in `skipped` and never hides the others,
    and so is a `SKILL.md` that cannot even be looked at (a symlink loop, a dangling link, a FIFO).
    A skill folder that is a symlink must stay inside the library directory: one that points elsewhere
    is skipped (list its target's parent as a library directory instead).
    """
    found = Discovery(skills=[], skipped=[])
    info = _stat(directory)
    parts: list[object] = [(str(directory), _stat_key(info))]
    if info is None or not stat.S_ISDIR(info.st_mode):
        problem = 'it is not a directory' if os.path.lexists(directory) else 'the directory does not exist'
        found.skipped.append(SkippedSkill(directory, problem))
    elif _has_skill_file(directory):
        skill_file = os.path.join(directory, SKILL_FILE)
        file_info = _stat(skill_file)
        parts.append(_stat_key(file_info))
        _read_into(found, directory, skill_file, file_info, check_containment=False)
    else:
        _read_folders(found, directory, parts)
    found.fingerprint = tuple(parts)
    return found


def _read_folders(found: Discovery, directory: Path, parts: list[object]) -> None:
    try:
        entries = _listing(directory)
    except OSError as error:
        found.skipped.append(SkippedSkill(directory, f'cannot list the directory ({error.strerror or error})'))
        return
    cache = FrontmatterCache(directory)
    for entry in entries:
        skill_file = os.path.join(entry.path, SKILL_FILE)
        info = _skill_file_stat(entry, skill_file)
        parts.append((entry.name, _stat_key(info)))
        if info is not None or (_is_folder(entry) and os.path.lexists(skill_file)):
            # A real sub-folder is inside the library by construction; only a symlinked one needs resolving.
            folder = directory / entry.name
            _read_into(found, folder, skill_file, info, check_containment=entry.is_symlink(), cache=cache)
    cache.save()


def _read_into(
    found: Discovery,
    folder: Path,
    skill_file: str,
    info: os.stat_result | None,
    *,
    check_containment: bool,
    cache: FrontmatterCache | None = None,
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
    try:
        front = cache.parse(skill_file, info) if cache is not None else parse_frontmatter(Path(skill_file))
    except SkillFormatError as error:
        found.skipped.append(SkippedSkill(error.path or folder, error.problem))
        return
    warn_notes(front, stacklevel=5)
    found.skills.append(folder_skill(folder, front, None if info is None else file_stamp(skill_file, info)))


def _describe_target(folder: Path) -> str:
    try:
        return str(folder.resolve())
    except (OSError, RuntimeError):
        return 'a path that cannot be resolved'


def fingerprint(directories: Sequence[Path]) -> Fingerprint:
    """A cheap signature of what discovery would read from `directories`: one `stat` per entry.

    It changes when a skill folder is added, removed or renamed (the directory listing), or a
    `SKILL.md` appears, disappears or is edited (its mtime, size and inode), so a library can tell
    that it should be read again without reading any file.
    """
    parts: list[object] = []
    for directory in directories:
        parts.append((str(directory), _stat_key(_stat(directory))))
        if _has_skill_file(directory):
            parts.append(_stat_key(_stat(os.path.join(directory, SKILL_FILE))))
            continue
        try:
            entries = _listing(directory)
        except OSError:
            continue
        for entry in entries:
            skill_file = os.path.join(entry.path, SKILL_FILE)
            parts.append((entry.name, _stat_key(_skill_file_stat(entry, skill_file))))
    return tuple(parts)


def _listing(directory: Path) -> list[os.DirEntry[str]]:
    """The directory's entries in name order, hidden ones left out."""
    with os.scandir(directory) as scan:
        return sorted((entry for entry in scan if not entry.name.startswith('.')), key=lambda entry: entry.name)


def _has_skill_file(folder: Path) -> bool:
    """Whether `folder` has a `SKILL.md` entry of any kind, even a broken symlink, so problems get reported."""
    return os.path.lexists(os.path.join(folder, SKILL_FILE))


def _is_folder(entry: os.DirEntry[str]) -> bool:
    """Whether the listed `entry` is a folder (or a link to one); the listing already knows about real folders."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _skill_file_stat(entry: os.DirEntry[str], skill_file: str) -> os.stat_result | None:
    """The `stat` of `skill_file` inside the listed `entry`, or `None` when `entry` is no folder or has none."""
    return _stat(skill_file) if _is_folder(entry) else None


def _stat(path: str | Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _stat_key(info: os.stat_result | None) -> tuple[int, int, int] | None:
    return None if info is None else (info.st_mtime_ns, info.st_size, info.st_ino)
