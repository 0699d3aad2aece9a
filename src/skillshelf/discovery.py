"""Finding `SKILL.md` skill folders in library directories."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._gc import gc_paused
from .errors import SkillFormatError
from .frontmatter_cache import FrontmatterCache
from .markdown.frontmatter import SKILL_FILE, parse_head, warn_notes
from .prefetch import prefetch, stat_each, stat_or_none
from .ranking.lexical import RankingConfig
from .resources import ResourceError, skill_root
from .skill import Skill, file_stamp, folder_skill


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
    look = _Look.of(directory)
    if look.info is None or not stat.S_ISDIR(look.info.st_mode):
        problem = 'it is not a directory' if os.path.lexists(directory) else 'the directory does not exist'
        found.skipped.append(SkippedSkill(directory, problem))
    elif look.own_file is not None:
        skill_file, info = look.own_file
        absolute = os.path.abspath(skill_file)
        _read_into(found, directory, skill_file, absolute, info, _body_chars(1), check_containment=False)
    elif look.listing_error is not None:
        error = look.listing_error
        found.skipped.append(SkippedSkill(directory, f'cannot list the directory ({error.strerror or error})'))
    else:
        cache = FrontmatterCache(directory)
        body_chars = _body_chars(sum(1 for _, _, info in look.entries if info is not None))
        prefetch([file for entry, file, info in look.entries if _unread(entry, file, info, cache)])
        # Joined once, not an `abspath` per skill (0.05 s at 100k): an entry name holds no separator.
        absolute_directory = os.path.join(os.path.abspath(directory), '')
        for entry, skill_file, info in look.entries:
            if info is not None or (_is_folder(entry) and os.path.lexists(skill_file)):
                absolute = absolute_directory + entry.name + _IN_FOLDER
                # A real sub-folder is inside the library by construction; only a symlinked one needs resolving.
                link = entry.is_symlink()
                _read_into(
                    found, entry.path, skill_file, absolute, info, body_chars, check_containment=link, cache=cache
                )
        cache.save()
    found.fingerprint = look.fingerprint()
    return found


@dataclass
class _Look:
    """What one look at a library directory sees before any file is read: the `stat`s that discovery uses
    and that `fingerprint` compares, taken in one place so the two always agree."""

    info: os.stat_result | None
    """The directory's own `stat`."""
    own_file: tuple[str, os.stat_result | None] | None
    """The directory's own `SKILL.md` and its `stat`, when the directory is itself a skill folder."""
    entries: list[tuple[os.DirEntry[str], str, os.stat_result | None]]
    """Each listed entry, the `SKILL.md` path inside it, and that file's `stat` (`None`: no folder or no file)."""
    listing_error: OSError | None
    key: str
    """The directory as given, which names it in the fingerprint."""

    @classmethod
    def of(cls, directory: Path) -> _Look:
        look = cls(stat_or_none(directory), None, [], None, str(directory))
        if _has_skill_file(directory):
            skill_file = os.path.join(directory, SKILL_FILE)
            look.own_file = (skill_file, stat_or_none(skill_file))
            return look
        try:
            listing = _listing(directory)
        except OSError as error:
            look.listing_error = error
            return look
        # Every entry's `SKILL.md` is looked at, even a file's: that `stat` fails (not a folder), as it should.
        skill_files = [entry.path + _IN_FOLDER for entry in listing]
        look.entries = list(zip(listing, skill_files, stat_each(skill_files), strict=True))
        return look

    def fingerprint(self) -> Fingerprint:
        parts: list[object] = [(self.key, _stat_key(self.info))]
        if self.own_file is not None:
            parts.append(_stat_key(self.own_file[1]))
        parts.extend((entry.name, _stat_key(info)) for entry, _, info in self.entries)
        return tuple(parts)


def _read_into(
    found: Discovery,
    folder: str | Path,
    skill_file: str,
    absolute_file: str,
    info: os.stat_result | None,
    body_chars: int,
    *,
    check_containment: bool,
    cache: FrontmatterCache | None = None,
) -> None:
    if check_containment:
        try:
            skill_root(Path(folder))
        except ResourceError:
            target = _describe_target(Path(folder))
            found.skipped.append(
                SkippedSkill(
                    Path(folder),
                    f'the skill folder is a symlink to {target}, outside the library directory; '
                    'skills are only read from inside a library (add its parent as a library directory instead)',
                )
            )
            return
    try:
        if cache is not None:
            front, body_start = cache.parse(skill_file, info, body_chars)
        else:
            front, body_start = parse_head(skill_file, body_chars)
    except SkillFormatError as error:
        found.skipped.append(SkippedSkill(error.path or Path(folder), error.problem))
        return
    warn_notes(front, stacklevel=5)
    stamp = None if info is None else file_stamp(absolute_file, info)
    found.skills.append(folder_skill(folder, front, stamp, body_start))


def _unread(entry: os.DirEntry[str], skill_file: str, info: os.stat_result | None, cache: FrontmatterCache) -> bool:
    """Whether discovery will read this `SKILL.md` and may open it unchecked: a symlinked folder is first
    checked to stay inside the library."""
    return info is not None and not entry.is_symlink() and not cache.knows(skill_file)


def _body_chars(skills: int) -> int:
    """How much of each body to keep from discovery's read: what the search index of this many skills reads."""
    return RankingConfig().body_limit(skills)


def _describe_target(folder: Path) -> str:
    try:
        return str(folder.resolve())
    except (OSError, RuntimeError):
        return 'a path that cannot be resolved'


@gc_paused()
def fingerprint(directories: Sequence[Path]) -> Fingerprint:
    """A cheap signature of what discovery would read from `directories`: one `stat` per entry.

    It changes when a skill folder is added, removed or renamed (the directory listing), or a
    `SKILL.md` appears, disappears or is edited (its mtime, size and inode), so a library can tell
    that it should be read again without reading any file.
    """
    return tuple(part for directory in directories for part in _Look.of(directory).fingerprint())


_IN_FOLDER = os.sep + SKILL_FILE
"""A folder's path plus this is its `SKILL.md`: `os.path.join` costs a tenth of a second per 100k folders."""


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


def _stat_key(info: os.stat_result | None) -> tuple[int, int, int] | None:
    return None if info is None else (info.st_mtime_ns, info.st_size, info.st_ino)
