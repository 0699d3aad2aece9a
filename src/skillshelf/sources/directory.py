"""`DirectorySource`: a library directory, one skill folder or a folder of skill folders, read by `discover`."""

from __future__ import annotations

import os
import stat
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from ..content.folder import open_skill_folder
from ..errors import ResourceError, SkillError, SkillFormatError, SkillWarning
from ..files import DEFAULT_READ_POLICY, ReadPolicy, takes_the_old_flag
from ..markdown.bounded_read import read_skill_file
from ..markdown.frontmatter import SKILL_FILE, FormatDeviation, SkillFile, parse_frontmatter
from ..skill import Skill
from .base import SkippedSkill, SourceSkills
from .declared_tools import add_declared_tools, untrusted_note
from .entries import entry_problem, ignored, os_reason
from .misplaced import is_folder, where_skills_are

__all__ = (
    'DirectorySource',
    'Fingerprint',
    'discover',
    'fingerprint',
    'path_key',
    'skill_folders',
)


Fingerprint = tuple[object, ...]
"""A signature of what discovery reads from library directories; see `fingerprint`."""


@dataclass(frozen=True)
class DirectorySource:
    """A library directory as a source: itself a skill folder if it holds a `SKILL.md`, else a folder of skill folders.

    Unlike other sources, reading it never raises: every entry is a skill or a reported skip, and a problem with
    the directory itself (missing, not a directory, unreadable) is a skip too, so a broken folder never hides the
    others. Its version is the listing `fingerprint`, which its reads report (see `SourceSkills.version`).
    """

    path: Path
    """The directory, absolute."""
    trusted: bool = False
    """Import the Python tools its skills declare (`python-tools:`); importing runs code from the folder."""
    policy: ReadPolicy = DEFAULT_READ_POLICY
    """How the files of its skill folders may be read."""
    optional: bool = False
    """A usual location (`.claude/skills`, ...): while it does not exist it holds nothing and nothing is reported."""
    reports_version: ClassVar[bool] = True

    def version(self) -> Fingerprint:
        """The directory's listing (see `fingerprint`): one `stat` per entry, no file read."""
        return fingerprint([self.path])

    def read_skills(self) -> SourceSkills:
        """The directory's skills (see `discover`), with the listing it began from as their version."""
        if self.optional and not os.path.lexists(self.path):
            return SourceSkills(version=self.version())
        # A usual location is the tools' own folder: an empty one is normal, and Codex keeps its system skills in
        # `~/.codex/skills/.system`, which is no advice to give.
        return discover(self.path, policy=self.policy, trusted=self.trusted, report_empty=not self.optional)


DirectorySource.__init__ = takes_the_old_flag(DirectorySource.__init__)


def discover(
    directory: Path,
    *,
    policy: ReadPolicy = DEFAULT_READ_POLICY,
    trusted: bool = False,
    report_empty: bool = True,
    plugin: str = '',
) -> SourceSkills:
    """Read the skills in `directory`: itself if it holds a `SKILL.md`, else each immediate sub-folder.

    Entries are visited in sorted order, so that every process sees the same library, and the read's `version` is
    the directory's `fingerprint` as it was before any file was read. Every entry is a skill
    or is reported in `skipped` with the reason, and a broken one never hides the others: a folder without a
    `SKILL.md` or one that cannot be read, a `SKILL.md` that breaks the format, a dangling symlink or a symlink
    loop, a FIFO or device, and a file that looks like a skill outside its folder (`*.md`, `*.skill`, `*.zip`).
    Left alone, without a word: hidden entries (starting with `.`), the usual documents (`README.md`,
    `LICENSE.md`, `AGENTS.md`, ...; see `entries.DOCUMENTS`), a packed copy of a skill beside its folder (`pdf.zip` beside
    `pdf/`, as Vercel's library keeps them) and every other file (`Makefile`, `__init__.py`, ...). A directory that
    yields no skill at all is reported too (unless `report_empty` is false), saying where skills are if it can see
    any (hidden folders such as OpenAI's `skills/.curated`, or sub-folders of skill folders; see `where_skills_are`).

    A `SKILL.md` that breaks the format in a way Claude Code or Codex tolerate loads as they load it (see
    `read_frontmatter`), each deviation listed in `deviations`.

    A skill folder that is a symlink must lead inside the library directory: one that points elsewhere (`/`,
    `/etc`, another library) is skipped (list its target's parent as a library directory instead). Each skill
    keeps the folder as it was accepted here, and its files are only ever read beneath it (see `SkillFile`);
    a `SKILL.md` with other hard links is skipped unless `policy` allows them.

    The tools a `SKILL.md` declares (`tools:`) are imported only when the directory is `trusted`: importing runs
    code. Elsewhere such a skill is kept for its instructions alone, with a `SkillWarning`; in a trusted
    directory, a declared tool that cannot be imported skips its skill. The skills of a Claude Code `plugin` are
    named `plugin:name` (see `plugins`).
    """
    listing = _Listing.of(directory)
    found = SourceSkills(version=listing.fingerprint())
    read_ahead = _ReadAhead()
    if listing.info is None or not stat.S_ISDIR(listing.info.st_mode):
        problem = 'it is not a directory' if os.path.lexists(directory) else 'the directory does not exist'
        found.skipped.append(SkippedSkill(directory, problem))
    elif listing.is_skill_folder:
        _read_skill(
            found,
            str(directory),
            read_ahead.of(listing.own_file),
            is_entry=False,
            policy=policy,
            trusted=trusted,
            plugin=plugin,
        )
    elif listing.error is not None:
        found.skipped.append(SkippedSkill(directory, f'cannot list the directory ({os_reason(listing.error)})'))
    else:
        for entry, listed, problem in _candidates(listing, directory):
            if problem is not None:
                found.skipped.append(SkippedSkill(Path(entry.path), problem))
            else:
                _read_skill(
                    found,
                    entry.path,
                    read_ahead.of(listed),
                    is_entry=True,
                    policy=policy,
                    trusted=trusted,
                    plugin=plugin,
                )
        if report_empty and not found.skills:
            # A folder of skill folders is reported as an entry already; hidden folders are not, and without any
            # skip nothing at all would say why the directory holds no skill.
            advice = where_skills_are(directory, nested=not found.skipped)
            if advice or not found.skipped:
                found.skipped.append(SkippedSkill(directory, _no_skill(advice)))
    return found


def skill_folders(directory: Path) -> list[Path]:
    """The folders `discover` reads as skills in `directory`, in its order, without reading them: the directory itself
    if it holds a `SKILL.md`, else each entry that passes the checks made before its `SKILL.md` is read (`discover`
    reports the others, with why). The linter checks these, so that it and the library agree on what is a skill."""
    listing = _Listing.of(directory)
    if listing.info is None or not stat.S_ISDIR(listing.info.st_mode):
        return []
    if listing.is_skill_folder:
        return [directory]
    return [Path(entry.path) for entry, _, problem in _candidates(listing, directory) if problem is None]


def _candidates(
    listing: _Listing, directory: Path
) -> Iterator[tuple[os.DirEntry[str], os.stat_result | None, str | None]]:
    """Each entry of `directory`'s `listing` that is an attempt at a skill, with its `SKILL.md`'s `stat` and why it
    cannot be one (`None`: it may be, once its `SKILL.md` is read); the others are left alone (see `entries.ignored`)."""
    folders = {entry.name for entry, _ in listing.entries if is_folder(entry)}
    for entry, skill_file in listing.entries:
        if not ignored(entry, folders):
            yield entry, skill_file, entry_problem(entry, skill_file, directory)


def _no_skill(advice: str) -> str:
    return f'no skill was found in the directory; {advice}' if advice else 'no skill was found in the directory'


def fingerprint(directories: Sequence[Path]) -> Fingerprint:
    """A cheap signature of what discovery would read from `directories`: one `stat` per entry.

    It changes when a skill folder is added, removed or renamed (the directory listing), or a `SKILL.md`
    appears, disappears or is edited (its mtime, size and inode), so a library can tell that it should be
    read again without reading any file. Each directory is named by its absolute path, so `skills`,
    `./skills/` and `/home/me/skills` give one signature.
    """
    return tuple(part for directory in directories for part in _Listing.of(directory).fingerprint())


def path_key(path: str | Path) -> tuple[int, int, int] | None:
    """What a fingerprint keeps of the file or folder at `path` (its mtime, size and inode), `None` if nothing is
    there: a commands directory's fingerprint is made of these too (see `commands_fingerprint`)."""
    return _stat_key(_stat(path))


@dataclass
class _Listing:
    """One look at a library directory before any file is read: the `stat`s that `fingerprint` compares."""

    key: str
    """The directory's absolute path, which names it in the fingerprint."""
    info: os.stat_result | None
    """The directory's own `stat`, `None` if there is nothing there."""
    is_skill_folder: bool = False
    """Whether the directory holds a `SKILL.md` (of any kind, so that a broken one is reported)."""
    own_file: os.stat_result | None = None
    """The `stat` of the directory's own `SKILL.md`, when it is a skill folder."""
    entries: list[tuple[os.DirEntry[str], os.stat_result | None]] = field(
        default_factory=list[tuple[os.DirEntry[str], os.stat_result | None]]
    )
    """Each visible entry by name, with the `stat` of the `SKILL.md` inside it (`None`: no such file)."""
    error: OSError | None = None
    """Why the directory could not be listed."""

    @classmethod
    def of(cls, directory: Path) -> _Listing:
        listing = cls(os.path.abspath(directory), _stat(directory))
        skill_file = os.path.join(directory, SKILL_FILE)
        if os.path.lexists(skill_file):
            listing.is_skill_folder, listing.own_file = True, _stat(skill_file)
            return listing
        try:
            with os.scandir(directory) as scan:
                visible = sorted((entry for entry in scan if not entry.name.startswith('.')), key=lambda e: e.name)
        except OSError as error:
            listing.error = error
            return listing
        listing.entries = [(entry, _stat(os.path.join(entry.path, SKILL_FILE))) for entry in visible]
        return listing

    def fingerprint(self) -> Fingerprint:
        parts: list[object] = [(self.key, _stat_key(self.info))]
        if self.is_skill_folder:
            parts.append(_stat_key(self.own_file))
        parts.extend((entry.name, _stat_key(info)) for entry, info in self.entries)
        return tuple(parts)


def _read_skill(
    found: SourceSkills,
    folder: str,
    keep: Callable[[SkillFile, bytes], None],
    *,
    is_entry: bool,
    policy: ReadPolicy,
    trusted: bool,
    plugin: str,
) -> None:
    """Accept `folder` (an entry of the library, or the library itself) and read its `SKILL.md` beneath it."""
    try:
        held, opened = open_skill_folder(folder, check_containment=is_entry, policy=policy)
    except ResourceError as error:
        found.skipped.append(SkippedSkill(Path(folder), str(error)))
        return
    skill_file = SkillFile(held)
    deviations: list[FormatDeviation] = []
    try:
        raw = read_skill_file(skill_file, opened)
        front = parse_frontmatter(skill_file, raw, deviations)
    except SkillFormatError as error:
        found.skipped.append(SkippedSkill(error.path or Path(folder), error.problem))
        return
    finally:
        if opened is not None:
            os.close(opened)
    keep(skill_file, raw)
    skill = Skill.from_frontmatter(skill_file, front, trusted=trusted, plugin=plugin)
    if front.python_tools and not trusted:
        warnings.warn(SkillWarning(untrusted_note(Path(skill_file.path), front.python_tools)), stacklevel=2)
    elif front.python_tools:
        try:
            add_declared_tools(skill, front.python_tools)
        except SkillError as error:
            found.skipped.append(SkippedSkill(Path(skill_file.path), str(error)))
            return
    found.skills.append(skill)
    found.deviations.extend(deviations)


@dataclass
class _ReadAhead:
    """The `SKILL.md` bytes one discovery keeps for the first read of each body: the first search reads every body
    right after (0.07 s of a 0.7 s cold start at 2,651 skills). Bounded, so a huge library costs no more memory."""

    budget: int = 32 * 2**20
    """Bytes still to keep; past it, bodies are read again from their files."""

    def of(self, listed: os.stat_result | None) -> Callable[[SkillFile, bytes], None]:
        """What keeps the bytes of a `SKILL.md` whose `stat` in the listing was `listed`."""

        def keep(skill_file: SkillFile, raw: bytes) -> None:
            if listed is not None and len(raw) <= self.budget:
                self.budget -= len(raw)
                skill_file.keep_for_next_read(raw, listed)

        return keep


def _stat(path: str | Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _stat_key(info: os.stat_result | None) -> tuple[int, int, int] | None:
    return None if info is None else (info.st_mtime_ns, info.st_size, info.st_ino)
