"""`SkillLibrary`: every skill an agent can load, checked for conflicts and searchable."""

from __future__ import annotations

import difflib
import hashlib
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from opentelemetry import trace

from .confusables import skeleton
from .discovery import Fingerprint, SkippedSkill
from .errors import SkillConflictError, SkillError, SkillWarning
from .locations import LibraryDirectory, directories_fingerprint, library_directories, read_directory
from .markdown.frontmatter import SKILL_FILE
from .name_filter import NameFilter, name_patterns
from .ranking.cache import CACHE_MIN_SKILLS, LibraryCache, library_cache
from .ranking.embeddings import Embeddings
from .ranking.hybrid import DEFAULT_LEXICAL_WEIGHT
from .ranking.lexical import DEFAULT_THRESHOLD, RankingConfig, SearchDocument, SearchHit, SkillIndex
from .ranking.ranker import (
    Ranker,
    RankerFactory,
    SearchMode,
    SearchOptions,
    build_ranker,
    custom_ranker,
    lexical_index,
)
from .ranking.semantic import Encoder
from .skill import Skill
from .sources.base import SkillSource

__all__ = ('SkillLibrary', 'SkippedSkill', 'check_tool_names')


@dataclass
class SkillLibrary:
    """Skills by name, in catalog order: Python skills first, then each directory's skills by folder name.

    Build one with [`SkillLibrary.build`][skillshelf.SkillLibrary.build].
    """

    skills: dict[str, Skill[Any]]
    """Every usable skill, keyed by name."""
    skipped: list[SkippedSkill] = field(default_factory=list[SkippedSkill])
    """Skill folders that were not used, with the reason (broken, shadowed, missing directory)."""
    removed: dict[str, str] = field(default_factory=dict[str, str])
    """Directory skills that disappeared since construction (folder deleted, moved or broken), with the reason."""
    _index: SkillIndex | None = field(default=None, init=False, repr=False)
    """The lexical index; hybrid search falls back to it when the encoder fails."""
    _ranker: Ranker | None = field(default=None, init=False, repr=False)
    """What `search` ranks with: `_index`, a hybrid index over it, or the user's ranker."""
    _sources: _Sources | None = field(default=None, init=False, repr=False)
    _search: SearchOptions = field(default_factory=SearchOptions, init=False, repr=False)
    _embeddings: Embeddings = field(default_factory=Embeddings, init=False, repr=False, compare=False)
    """Kept across refreshes, so a rebuild embeds only the skills whose text changed."""
    _index_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)
    _refresh_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    @classmethod
    def build(
        cls,
        skills: Sequence[Skill[Any]] = (),
        directories: Sequence[str | Path] = (),
        *,
        strict: bool = False,
        reserved_tool_names: Iterable[str] = (),
        search: SearchMode = 'lexical',
        encoder: Encoder | None = None,
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
        ranker: RankerFactory | None = None,
        allow_hard_links: bool = False,
        trusted_directories: Sequence[str | Path] = (),
        sources: Sequence[SkillSource] = (),
        command_directories: Sequence[str | Path] = (),
        standard_directories: bool = False,
        include: str | Sequence[str] = (),
        exclude: str | Sequence[str] = (),
    ) -> SkillLibrary:
        """Collect Python `skills`, the skills found in `directories`, then those of each of `sources` (see
        [`SkillSource`][skillshelf.SkillSource]).

        When directories or sources hold skills with the same name, or names that look alike (`dеplоy` with Cyrillic
        letters beside `deploy`, see `confusables`), the first one wins and the later ones are reported in
        `skipped` (like `PATH` lookup). Every skipped folder is also emitted as a
        [`SkillWarning`][skillshelf.SkillWarning]. A skill's files with other hard links are refused unless
        `allow_hard_links` (their other names may lie outside the skill folder).

        `command_directories` hold Claude Code command files (`*.md`, each a skill named by its file; see
        `command_files`); they are read after `directories`. `standard_directories` then adds the usual locations
        (`.claude/skills`, `.agents/skills`, `.claude/commands` here, then `~/.claude/skills`, `~/.agents/skills`,
        `~/.codex/skills`, `~/.claude/commands`; see `locations`), each read only if it exists. Relative paths
        resolve against the working directory when the library is built.

        `include` and `exclude` (names or globs such as `'pdf-*'`) choose the skills kept; a skill both match is
        left out. Left-out skills are in no catalog, search or tool-name check, and their broken files are not
        reported; a plain name in `include` that matches no skill gets a warning.

        Skills in `trusted_directories` (each one of `directories`) get the Python tools their `SKILL.md`
        declares (`tools:`); importing them runs code, so elsewhere they are loaded without them, with a warning.

        `search='hybrid'` adds embedding similarity to the lexical ranking, with `encoder` (texts →
        L2-normalised rows) or else the `[semantic]` extra's model, loaded at the first
        search. Passing an `encoder` implies `search='hybrid'`. `ranker` replaces both with your own ranking (see
        [`Ranker`][skillshelf.Ranker]); should it fail, a search ranks lexically and warns.

        Raises:
            SkillConflictError: two Python skills share a name (or names that look alike), a Python skill and a
                directory skill do, or two skills (or a skill and a meta-tool) expose the same tool name.
            SkillError: with `strict=True`, any skipped folder; a source that cannot be read; or an unknown `search`, an `encoder` that is
                not callable, a `lexical_weight` outside [0, 1], a `ranker` that is not callable or comes with
                hybrid search, or a trusted directory not in `directories`; a
                named directory that does not exist; an `include` or `exclude` that is not names.
            SemanticUnavailableError: `search='hybrid'` without an `encoder`, and the `[semantic]` extra is
                not installed.
        """
        options = SearchOptions(search, encoder, lexical_weight, ranker)  # checked before any folder is read
        selection = NameFilter(name_patterns(include, 'include'), name_patterns(exclude, 'exclude'))
        if isinstance(directories, (str, Path)):  # one directory, not a sequence of one-letter names
            directories = [directories]
        if isinstance(command_directories, (str, Path)):
            command_directories = [command_directories]
        read = library_directories(directories, command_directories, standard_directories)
        where = _Sources(
            tuple(skills),
            read,
            frozenset(reserved_tool_names),
            allow_hard_links,
            _trusted(trusted_directories, [directory.path for directory in read if not directory.commands]),
            tuple(sources),
            selection=selection,
        )
        library = where.collect()
        library._search = options
        for name in selection.unmatched(library.skills):
            warnings.warn(SkillWarning(f'`include` names {name!r}, but the library has no such skill'), stacklevel=3)
        for problem in library.skipped:
            if strict:
                raise SkillError(f'{problem.path}: {problem.problem}')
            warnings.warn(SkillWarning(f'skipped {problem.path}: {problem.problem}'), stacklevel=3)
        return library

    @property
    def watches_files(self) -> bool:
        """Whether `refresh` has anything to check: directories or sources (a library of Python skills has not)."""
        return self._sources is not None and bool(self._sources.directories or self._sources.sources)

    def refresh(self) -> bool:
        """Read the library directories again if a skill folder was added, removed or renamed, or a `SKILL.md`
        was edited, since they were last read (checked with a few `stat` calls per skill, no reads).

        Python skills stay as they are. This never raises: a folder that is now broken is skipped with a
        [`SkillWarning`][skillshelf.SkillWarning] (even with `strict=True`, which applies at construction),
        a skill that disappeared is listed in `removed`, and a new name clash keeps the previous skills,
        with a warning.

        Returns:
            Whether the skills (names, descriptions or folders) changed.

        Safe to call from several threads at once (runs check the library in worker threads): one check reads
        at a time, and a search index being built meanwhile is dropped once the new skills are in place.
        """
        with self._refresh_lock:
            return self._refresh()

    def _refresh(self) -> bool:
        sources = self._sources
        if sources is None or not sources.changed():
            return False
        try:
            fresh = sources.collect()
        except SkillError as error:
            self._sources = replace(sources, fingerprint=directories_fingerprint(sources.directories))
            warnings.warn(
                SkillWarning(f'the skill directories or sources changed but were not read again: {error}'), stacklevel=2
            )
            return False
        known = {(problem.path, problem.problem) for problem in self.skipped}
        for problem in fresh.skipped:
            if (problem.path, problem.problem) not in known:
                warnings.warn(SkillWarning(f'skipped {problem.path}: {problem.problem}'), stacklevel=2)
        changed = _summary(fresh.skills) != _summary(self.skills)
        gone = sorted(self.skills.keys() - fresh.skills.keys())
        removed = {**self.removed, **dict.fromkeys(gone, 'its folder was deleted or moved')}
        for problem in fresh.skipped:
            name = _folder_name(problem.path)
            if name in removed:
                removed[name] = f'its SKILL.md is now skipped ({problem.problem})'
        self.removed = {name: reason for name, reason in removed.items() if name not in fresh.skills}
        with self._index_lock:  # after any index build in progress, which read the previous skills
            self.skills, self.skipped, self._sources = fresh.skills, fresh.skipped, fresh._sources
            self._index = self._ranker = None  # bodies may have changed even when descriptions did not
        return changed

    def get(self, name: str) -> Skill[Any] | None:
        """The skill called `name`, or `None`."""
        return self.skills.get(name)

    def closest_names(self, name: str, limit: int = 3) -> list[str]:
        """Names that look like `name`, for "did you mean" hints."""
        return difflib.get_close_matches(name.strip().lower(), list(self.skills), n=limit, cutoff=0.6)

    @property
    def search_mode(self) -> SearchMode:
        """How `search` ranks: `'lexical'` or `'hybrid'`."""
        return self._search.mode

    def search(self, query: str, limit: int, threshold: float = DEFAULT_THRESHOLD) -> list[SearchHit]:
        """Rank the skills for `query`, leaving out those scoring below `threshold` (from 0 to 1); the index over the
        skills (bodies included) is built on first use.

        With hybrid search the first call also embeds the skills (and loads the default model, once per process).
        """
        try:
            return list((self._ranker or self._prepared_ranker()).search(query, limit, threshold))
        except Exception as error:
            # An embedding model, API or custom ranker that fails must not end the agent's run: rank lexically this
            # time (the next search tries it again) and say why.
            if self._search.ranker is None and self._search.mode == 'lexical':
                raise
            what = 'hybrid search' if self._search.ranker is None else 'the custom ranker'
            warnings.warn(SkillWarning(f'{what} failed, so this search ranked lexically: {error}'), stacklevel=2)
            return self._fallback_index().search(query, limit, threshold)

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
        self._prepared_ranker()

    def _prepared_ranker(self) -> Ranker:
        with self._index_lock:  # concurrent first searches would each embed the whole library
            if self._ranker is not None:
                return self._ranker
            if not trace.get_current_span().is_recording():  # outside a trace (an uninstrumented run): no span
                return self._build_ranker()
            mode = 'custom' if self._search.ranker is not None else self._search.mode
            attributes = {'skillshelf.skills': len(self.skills), 'skillshelf.search_mode': mode}
            with _TRACER.start_as_current_span('skillshelf.index_build', attributes=attributes):
                return self._build_ranker()

    def _build_ranker(self) -> Ranker:
        skills = list(self.skills.values())
        headlines = _headlines(skills)
        if self._search.ranker is not None:
            chars = _RANKING.body_limit(len(skills))
            documents = [replace(d, body=_body(skill, chars)) for d, skill in zip(headlines, skills, strict=True)]
            self._ranker = custom_ranker(self._search.ranker, documents)
            return self._ranker
        cache = self._search_cache(skills, headlines)
        bodies = _BodyStarts(skills)  # read once: the index and the embeddings both take the start of each body
        index = self._lexical_index(headlines, bodies, cache)
        self._ranker = build_ranker(index, headlines, bodies, self._search, self._embeddings, cache)
        return self._ranker

    def _lexical_index(
        self, headlines: list[SearchDocument], bodies: Callable[[int], list[str]], cache: LibraryCache | None
    ) -> SkillIndex:
        if self._index is None:
            self._index = lexical_index(headlines, bodies, _RANKING, cache)
        return self._index

    def _fallback_index(self) -> SkillIndex:
        """The BM25 index that stands in when hybrid search or a custom ranker fails (built then, for the latter)."""
        with self._index_lock:
            if self._index is not None:
                return self._index
            skills = list(self.skills.values())
            headlines = _headlines(skills)
            return self._lexical_index(headlines, _BodyStarts(skills), self._search_cache(skills, headlines))

    def index_cache_path(self) -> Path | None:
        """The file this library's search index is cached in, or `None` when it is not cached (caching is off, or
        the library has fewer than `CACHE_MIN_SKILLS` folder skills). The file exists once the index is built."""
        skills = list(self.skills.values())
        cache = self._search_cache(skills, _headlines(skills))
        return None if cache is None else cache.index_file

    def _search_cache(self, skills: list[Skill[Any]], headlines: list[SearchDocument]) -> LibraryCache | None:
        """The cache files of this library's search, for a library of `CACHE_MIN_SKILLS` folder skills or more.

        The index's key covers each skill's text and folder, and the discovery fingerprint (a stat of every
        `SKILL.md`, so an edited body gives another key); a Python skill's instructions are hashed instead.
        """
        folders = [None if (folder := skill.folder) is None else os.path.abspath(folder) for skill in skills]
        if self._sources is None or len(folders) - folders.count(None) < CACHE_MIN_SKILLS:
            return None
        content = [
            f'{headline.name}\0{headline.description}\0{headline.keywords}\0{folder or _instructions_hash(skill)}'
            for skill, headline, folder in zip(skills, headlines, folders, strict=True)
        ]
        content.append(repr(self._sources.fingerprint))
        return library_cache(_RANKING, content, {os.path.dirname(folder) for folder in folders if folder is not None})

    def __len__(self) -> int:
        return len(self.skills)


@dataclass(frozen=True)
class _Sources:
    """Where a library's skills come from, and a signature of the directories when they were last read."""

    skills: tuple[Skill[Any], ...]
    directories: tuple[LibraryDirectory, ...]
    reserved_tool_names: frozenset[str]
    allow_hard_links: bool = False
    trusted: frozenset[str] = frozenset()
    """The real paths of the directories whose skills' declared tools are imported."""
    sources: tuple[SkillSource, ...] = ()
    fingerprint: Fingerprint = ()
    versions: tuple[object, ...] = ()
    """Each source's `version()` when it was last read."""
    selection: NameFilter = field(default_factory=NameFilter)
    """The skills kept (`include`, `exclude`); the others are dropped as soon as they are read."""

    def changed(self) -> bool:
        """Whether a directory or a source changed since they were read; a source whose version cannot be
        checked now counts as unchanged, with a warning."""
        if self.directories and directories_fingerprint(self.directories) != self.fingerprint:
            return True
        for source, version in zip(self.sources, self.versions, strict=True):
            try:
                if source.version() != version:
                    return True
            except Exception as error:  # a registry that is down must not end the run: keep the skills read last
                warnings.warn(SkillWarning(f'{source!r} could not be checked for changes: {error}'), stacklevel=4)
        return False

    def collect(self) -> SkillLibrary:
        """Read the directories (without warning) into a new library that remembers these sources."""
        by_name: dict[str, Skill[Any]] = {}
        names = _Names()
        for skill in filter(self._selects, self.skills):
            if (clash := names.clash(skill.name)) is not None:
                raise SkillConflictError(f'two Python skills are named {_alike(skill.name, clash)}; rename one')
            by_name[skill.name] = skill
        skipped: list[SkippedSkill] = []
        # Discovery looks at each file before reading it, so a change during the read triggers another.
        signature: list[object] = []
        for directory in self.directories:
            trusted = os.path.realpath(directory.path) in self.trusted
            found = read_directory(directory, allow_hard_links=self.allow_hard_links, trusted=trusted)
            signature.extend(found.fingerprint)
            skipped.extend(
                problem
                for problem in found.skipped  # a problem with the directory itself is always reported
                if problem.path == directory.path or self.selection.selects(_entry_name(problem.path))
            )
            for skill in filter(self._selects, found.skills):
                _add_directory_skill(by_name, names, skipped, skill)
        versions: list[object] = []
        for source in self.sources:
            try:
                versions.append(source.version())  # before the read, so a change during it triggers another
                read = source.read_skills()
            except Exception as error:  # the source's own code, or a server: say which source failed
                raise SkillError(f'the skill source {source!r} could not be read: {error}') from error
            skipped.extend(read.skipped)
            for skill in filter(self._selects, read.skills):
                _add_directory_skill(by_name, names, skipped, skill)
        check_tool_names(by_name.values(), set(self.reserved_tool_names))
        library = SkillLibrary(by_name, skipped)
        library._sources = replace(self, fingerprint=tuple(signature), versions=tuple(versions))  # pyright: ignore[reportPrivateUsage]
        return library

    def _selects(self, skill: Skill[Any]) -> bool:
        return self.selection.selects(skill.name)


_RANKING = RankingConfig()
_TRACER = trace.get_tracer('skillshelf')
"""Index builds are spans of the global tracer provider (what `logfire.configure()` sets), inside the current trace."""


def _trusted(trusted_directories: Sequence[str | Path], directories: Sequence[Path]) -> frozenset[str]:
    """The real paths of `trusted_directories`, each of which must be one of the library `directories`."""
    if isinstance(trusted_directories, str):  # one directory, not a sequence of one-letter names
        trusted_directories = [trusted_directories]
    listed = {os.path.realpath(directory) for directory in directories}
    trusted = {os.path.realpath(Path(directory).expanduser()): directory for directory in trusted_directories}
    for real, directory in trusted.items():
        if real not in listed:
            raise SkillError(
                f'the trusted directory {str(directory)!r} is not one of the skill directories; list it in '
                '`directories` too (only the skills found directly in it get their declared tools)'
            )
    return frozenset(trusted)


def _headlines(skills: list[Skill[Any]]) -> list[SearchDocument]:
    """Each skill's searchable text without its body, which is read only when the index is built."""
    return [SearchDocument(skill.name, skill.description, skill.keywords) for skill in skills]


class _BodyStarts:
    """The start of each skill's body, for the index and then the embeddings: a start no longer than the last one read
    is cut from it, so the skills' files are read once per ranker build (and only what is asked for is kept)."""

    def __init__(self, skills: list[Skill[Any]]) -> None:
        self._skills = skills
        self._chars = -1
        self._starts: list[str] = []

    def __call__(self, chars: int) -> list[str]:
        if chars > self._chars:
            self._starts = [_body(skill, chars) for skill in self._skills]
        else:
            self._starts = [start[:chars] for start in self._starts]
        self._chars = chars
        return self._starts


def _body(skill: Skill[Any], chars: int) -> str:
    """The start of a skill's instructions, for the index; one that can no longer be read is indexed without."""
    if chars <= 0:
        return ''
    try:
        return skill.load_instructions(chars)
    except (SkillError, OSError):
        return ''


def _instructions_hash(skill: Skill[Any]) -> str:
    """What stands for a Python skill's instructions in the index cache key (a folder skill's are in the
    discovery fingerprint)."""
    return hashlib.sha256(skill.load_instructions().encode('utf-8', 'surrogatepass')).hexdigest()


def _summary(skills: dict[str, Skill[Any]]) -> list[tuple[str, str, str | None]]:
    return [(name, skill.description, skill.origin) for name, skill in skills.items()]


def _folder_name(path: Path) -> str:
    return path.parent.name if path.name == SKILL_FILE else path.name


def _entry_name(path: Path) -> str:
    """The skill name a skipped entry would have had (its folder's, or a command file's), for `include`/`exclude`."""
    return path.stem if path.suffix == '.md' and path.name != SKILL_FILE else _folder_name(path)


class _Names:
    """The names taken so far, by skeleton, so that a name is refused when it is taken or only looks like one that
    is (see `confusables.skeleton`)."""

    def __init__(self) -> None:
        self._by_skeleton: dict[str, str] = {}

    def clash(self, name: str) -> str | None:
        """The taken name that `name` is or looks like; `None` if there is none, and then `name` is taken."""
        key = skeleton(name)
        if (taken := self._by_skeleton.get(key)) is not None:
            return taken
        self._by_skeleton[key] = name
        return None


def _alike(name: str, taken: str) -> str:
    """`name` and `taken` in words: one name, or two that look alike."""
    return repr(name) if name == taken else f'{taken!r} and {name!r}, which look alike (characters of another script)'


def _add_directory_skill(
    by_name: dict[str, Skill[Any]], names: _Names, skipped: list[SkippedSkill], skill: Skill[Any]
) -> None:
    taken = names.clash(skill.name)
    if taken is None:
        by_name[skill.name] = skill
        return
    existing = by_name[taken]
    if existing.origin is None and taken == skill.name:
        raise SkillConflictError(f'the Python skill {taken!r} and the folder {skill.origin} share a name; rename one')
    if existing.origin is None:
        raise SkillConflictError(
            f'the Python skill {taken!r} and the folder {skill.origin} have names that look alike ({skill.name!r}: '
            'characters of another script); rename one'
        )
    if taken == skill.name:
        problem = f'shadowed by {existing.origin} (the earlier directory wins)'
    else:
        problem = (
            f'its name {skill.name!r} looks like {taken!r} of {existing.origin} (characters of another script), '
            'so it could pass for that skill; the earlier one wins (rename this one)'
        )
    skipped.append(SkippedSkill(Path(skill.origin or skill.name), problem))


def check_tool_names(skills: Iterable[Skill[Any]], reserved: set[str]) -> None:
    """Refuse a tool name that two skills share, or that a meta-tool (`reserved`) has.

    Raises:
        SkillConflictError: naming the skills and the tool.
    """
    owners: dict[str, str] = {}
    for skill in skills:
        for tool_name in skill.tool_names:
            if tool_name in reserved:
                raise SkillConflictError(
                    f'skill {skill.name!r} has a tool named {tool_name!r}, which is a skillshelf meta-tool; rename it'
                )
            if tool_name in owners:
                raise SkillConflictError(
                    f'skills {owners[tool_name]!r} and {skill.name!r} both have a tool named {tool_name!r}; '
                    'tool names must be unique across skills (rename one, or use `toolset.prefixed(...)`)'
                )
            owners[tool_name] = skill.name
