"""`SkillLibrary`: every skill an agent can load, checked for conflicts, kept up to date and searchable."""

from __future__ import annotations

import difflib
import threading
import warnings
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SkillError, SkillFormatError, SkillFormatWarning, SkillWarning
from ..markdown.frontmatter import SKILL_FILE, FormatDeviation
from ..ranking.documents import DEFAULT_THRESHOLD, SearchHit
from ..ranking.ranker import SearchMode, SearchOptions
from ..scan import Finding
from ..skill import Skill
from ..sources.base import SkippedSkill
from ..sources.commands import COMMAND_SUFFIX, is_command_skill
from .collection import Collection, Intake
from .index import SearchIndex
from .options import LibraryOptions
from .screening import Screen, flagged_messages

__all__ = ('SkillLibrary',)


@dataclass
class SkillLibrary:
    """Skills by name, in catalog order: Python skills first, then each source's skills (directories first).

    Build one with [`SkillLibrary.build`][skillshelf.SkillLibrary.build].
    """

    skills: dict[str, Skill[Any]]
    """Every usable skill, keyed by name."""
    skipped: list[SkippedSkill] = field(default_factory=list[SkippedSkill])
    """Entries that were not used, with the reason (broken, shadowed, missing directory)."""
    removed: dict[str, str] = field(default_factory=dict[str, str])
    """Skills that disappeared since construction (folder deleted, moved or broken), with the reason."""
    deviations: list[FormatDeviation] = field(default_factory=list[FormatDeviation])
    """How skills' `SKILL.md` files break the Agent Skills format in ways Claude Code or Codex tolerate: each skill
    loaded as they load it (under the name they give it), and each deviation emitted as a `SkillFormatWarning`."""
    refused: dict[str, str] = field(default_factory=dict[str, str])
    """Skills the lock refused (`LibraryOptions.lock`), by name, with why; each is in `skipped` too."""
    _intake: Intake = field(default_factory=Intake, init=False, repr=False)
    _versions: tuple[Hashable, ...] | None = field(default=None, init=False, repr=False)
    """Each source's version when it was last read; `None` for a library that reads no source."""
    _auto_reload: bool = field(default=True, init=False, repr=False)
    _search_index: SearchIndex = field(default_factory=lambda: SearchIndex(SearchOptions()), init=False, repr=False)
    _refresh_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _flagged: list[Finding] = field(default_factory=list[Finding], init=False, repr=False)
    """The critical findings of skills loaded anyway (`scan='warn'`), so a refresh warns only about new ones."""

    def __post_init__(self) -> None:
        self._search_index.use(self.skills, None)

    @classmethod
    def build(
        cls,
        skills: Sequence[Skill[Any]] = (),
        options: LibraryOptions | None = None,
        search: SearchOptions | None = None,
        *,
        reserved_tool_names: Iterable[str] = (),
    ) -> SkillLibrary:
        """Collect Python `skills`, then the skills of every directory and source `options` names (see
        [`LibraryOptions`][skillshelf.LibraryOptions]), searched as `search` says (see
        [`SearchOptions`][skillshelf.SearchOptions]).

        The first skill of a name wins (see `collection`); every entry that is not used is kept in `skipped` and
        emitted as a [`SkillWarning`][skillshelf.SkillWarning], or raised with `strict`. A `SKILL.md` that breaks
        the format in a way Claude Code or Codex tolerate is loaded as they load it, each deviation kept in
        `deviations` and emitted as a [`SkillFormatWarning`][skillshelf.SkillFormatWarning], or raised with `strict`.

        Raises:
            SkillConflictError: two Python skills share a name (or names that look alike), a Python skill and another
                skill do, or two skills (or a skill and one of `reserved_tool_names`) expose the same tool name.
            SkillError: with `strict`, any skipped entry or deviation from the format (a `SkillFormatError`); a source
                that cannot be read; a named directory that does not exist.
        """
        options = options or LibraryOptions()
        sources = options.read_sources()
        lock = options.read_lock()
        if lock is not None:
            for source in sources:  # a git source's periodic sync keeps to the lock (`GitSource.keep_to`)
                if callable(keep_to := getattr(source, 'keep_to', None)):
                    keep_to(frozenset(lock.lock.skills), str(lock.path))
        intake = Intake(
            tuple(skills),
            tuple(sources),
            options.selection,
            frozenset(reserved_tool_names),
            Screen(options.scan),
            lock=lock,
        )
        read = intake.collect()
        library = cls(read.skills, read.skipped, deviations=read.deviations, refused=read.refused)
        library._intake, library._auto_reload = intake, options.auto_reload
        library._versions = read.versions if sources else None
        library._search_index = SearchIndex(search or SearchOptions())
        library._search_index.use(read.skills, library._versions)
        for name in options.selection.unmatched(library.skills):
            warnings.warn(SkillWarning(f'`include` names {name!r}, but the library has no such skill'), stacklevel=2)
        for problem in library.skipped:
            if options.strict:
                raise SkillError(f'{problem.path}: {problem.problem}')
            warnings.warn(SkillWarning(f'skipped {problem.path}: {problem.problem}'), stacklevel=2)
        for deviation in library.deviations:
            if options.strict:
                raise SkillFormatError(
                    deviation.path,
                    f'{deviation.problem} (`strict` refuses what the Agent Skills format does not allow: fix the file, '
                    'or leave `strict` off to load it as Claude Code and Codex do)',
                )
            warnings.warn(SkillFormatWarning(str(deviation)), stacklevel=2)
        for message in flagged_messages(read.flagged):
            warnings.warn(SkillWarning(message), stacklevel=2)
        library._flagged = read.flagged
        return library

    @property
    def watches_files(self) -> bool:
        """Whether `refresh` has anything to check at the start of each run: sources, with `auto_reload`."""
        return self._auto_reload and bool(self._intake.sources)

    def refresh(self) -> bool:
        """Read the sources again if one changed since they were last read (a directory: a skill folder added,
        removed or renamed, a `SKILL.md` edited; checked with a few `stat` calls per skill, no reads).

        Python skills stay as they are. This never raises: an entry that is now broken is skipped with a
        [`SkillWarning`][skillshelf.SkillWarning] (even with `strict`, which applies at construction), a skill that
        disappeared is listed in `removed`, and a source that cannot be read keeps the previous skills, with a
        warning.

        Returns:
            Whether the skills (names, descriptions or origins) changed.

        Safe to call from several threads at once (runs check the library in worker threads): one check reads
        at a time, and a search index being built meanwhile is dropped once the new skills are in place.
        """
        with self._refresh_lock:
            if self._versions is None or not self._intake.changed(self._versions):
                return False
            try:
                fresh = self._intake.collect()
            except SkillError as error:
                self._versions = tuple(_current_versions(self._intake))
                warnings.warn(
                    SkillWarning(f'the skill directories or sources changed but were not read again: {error}'),
                    stacklevel=2,
                )
                return False
            return self._take(fresh)

    def _take(self, fresh: Collection) -> bool:
        known = {(problem.path, problem.problem) for problem in self.skipped}
        for problem in fresh.skipped:
            if (problem.path, problem.problem) not in known:
                warnings.warn(SkillWarning(f'skipped {problem.path}: {problem.problem}'), stacklevel=3)
        reported = set(self.deviations)
        for deviation in [deviation for deviation in fresh.deviations if deviation not in reported]:
            warnings.warn(SkillFormatWarning(str(deviation)), stacklevel=3)
        for message in flagged_messages([finding for finding in fresh.flagged if finding not in set(self._flagged)]):
            warnings.warn(SkillWarning(message), stacklevel=3)
        self._flagged = fresh.flagged
        changed = _changed(self.skills, fresh.skills)
        gone = sorted(self.skills.keys() - fresh.skills.keys())
        removed = {**self.removed, **{name: _gone(self.skills[name]) for name in gone}}
        for problem in fresh.skipped:
            name = _folder_name(problem.path)
            if name in removed:
                removed[name] = f'its {_file_of(self.skills.get(name))} is now skipped ({problem.problem})'
        self.removed = {name: reason for name, reason in removed.items() if name not in fresh.skills}
        self._search_index.use(
            fresh.skills, fresh.versions
        )  # after any index build in progress, which read the old skills
        self.skills, self.skipped, self._versions = fresh.skills, fresh.skipped, fresh.versions
        self.deviations, self.refused = fresh.deviations, fresh.refused
        return changed

    def get(self, name: str) -> Skill[Any] | None:
        """The skill called `name`, or `None`. Every use of a skill (loading it, reading its files, running its
        scripts) asks for it here: its first use scans its body and files (`LibraryOptions.scan`), and one the scan
        refuses is withheld from then on, listed in `removed` with the reason (so the catalog of the next run omits
        it), with a [`SkillWarning`][skillshelf.SkillWarning] naming each critical finding."""
        skill = self.skills.get(name)
        if skill is None or (reason := self._intake.screen.refused(skill)) is None:
            return skill
        with self._refresh_lock:
            if self.skills.get(name) is skill:  # a new dict, so a shelf renders its catalog again
                self.skills = {other: kept for other, kept in self.skills.items() if other != name}
                self.removed = {**self.removed, name: reason}
        return None

    def closest_names(self, name: str, limit: int = 3) -> list[str]:
        """Names that look like `name`, for "did you mean" hints."""
        return difflib.get_close_matches(name.strip().lower(), list(self.skills), n=limit, cutoff=0.6)

    @property
    def search_options(self) -> SearchOptions:
        """How the library is searched."""
        return self._search_index.options

    @property
    def search_mode(self) -> SearchMode:
        """How `search` ranks: `'lexical'` or `'hybrid'`."""
        return self._search_index.options.search

    def search(self, query: str, limit: int, threshold: float = DEFAULT_THRESHOLD) -> list[SearchHit]:
        """Rank the skills for `query`, leaving out those scoring below `threshold` (from 0 to 1); the index over the
        skills (bodies included) is built on first use.

        With hybrid search the first call also embeds the skills (and loads the default model, once per process).
        A failing encoder or custom ranker makes that search rank lexically, with a `SkillWarning`.
        """
        return self._search_index.search(query, limit, threshold)

    def prepare_search(self) -> None:
        """Build the search index now rather than at the first search: read and index the start of every skill's
        body and, with hybrid search, embed every skill.

        A library of 200 or more folder skills also saves the result in the on-disk cache, so calling this
        in a build or deploy step makes the first search of later processes fast too. It blocks; from async
        code, run it in a thread (`await asyncio.to_thread(library.prepare_search)`). A `refresh` that finds
        changed skills drops the index, and the next search builds it again.

        Raises:
            SkillError: the hybrid encoder returned something other than one row per text. Any error of the
                encoder itself is raised as it is (a search would instead rank lexically and warn).
        """
        self._search_index.prepare()

    def index_cache_path(self) -> Path | None:
        """The file this library's search index is cached in, or `None` when it is not cached (caching is off, or
        the library has fewer than `CACHE_MIN_SKILLS` folder skills). The file exists once the index is built."""
        return self._search_index.cache_path()

    def __len__(self) -> int:
        return len(self.skills)


def _current_versions(intake: Intake) -> list[Hashable]:
    """Each source's version now, for a source that changed but could not be read (so it is not read every run)."""
    versions: list[Hashable] = []
    for source in intake.sources:
        try:
            versions.append(source.version())
        except Exception:
            versions.append(None)
    return versions


def _changed(before: dict[str, Skill[Any]], after: dict[str, Skill[Any]]) -> bool:
    """Whether the skills' names (in order), descriptions or origins changed; a source that kept a skill as it was
    (a registry's incremental read) hands back the same object, which is not looked into."""
    if len(before) != len(after) or list(before) != list(after):
        return True
    return any(
        old is not new and (old.description, old.origin) != (new.description, new.origin)
        for old, new in zip(before.values(), after.values(), strict=True)
    )


def _gone(skill: Skill[Any]) -> str:
    """Why a skill that was read before is not read now (when its entry is not skipped instead)."""
    if skill.folder is not None:
        return 'its folder was deleted or moved'
    if is_command_skill(skill):
        return 'its file was deleted or moved'
    return 'its source no longer has it (removed or unpublished)'


def _folder_name(path: Path) -> str:
    """The name of the skill a skipped entry would have been: its folder's, or a command file's without `.md`."""
    if path.name == SKILL_FILE:
        return path.parent.name
    return path.name.removesuffix(COMMAND_SUFFIX) if path.suffix == COMMAND_SUFFIX else path.name


def _file_of(skill: Skill[Any] | None) -> str:
    """What holds a skill's frontmatter: a command file, or a `SKILL.md`."""
    return 'command file' if is_command_skill(skill) else SKILL_FILE
