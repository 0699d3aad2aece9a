"""`SearchIndex`: a library's skills as search documents, and the ranker over them, built at the first search.

Each skill is a `SearchDocument` (name, description, keywords and the start of its body); `ranking` builds the
lexical, hybrid or custom ranker over them. The bodies are read once per build, the index of a large folder library
is cached on disk (see `ranking.cache`), and skill embeddings are kept across rebuilds, so a change re-embeds only
the skills whose text changed.
"""

from __future__ import annotations

import hashlib
import os
import threading
import warnings
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import Any, cast

from opentelemetry import trace

from .._gc import gc_paused
from ..content import FolderContent
from ..errors import SkillError, SkillWarning
from ..lock.digest import DigestedContent
from ..ranking.cache import CACHE_MIN_SKILLS, LibraryCache, library_cache
from ..ranking.documents import SearchDocument, SearchHit
from ..ranking.embeddings import Embeddings
from ..ranking.lexical import RankingConfig, SkillIndex
from ..ranking.ranker import (
    Ranker,
    RankerFactory,
    SearchOptions,
    build_ranker,
    custom_ranker,
    lexical_index,
    with_bodies,
)
from ..skill import Skill

__all__ = ('SearchIndex',)

_RANKING = RankingConfig()
_TRACER = trace.get_tracer('skillshelf')
"""Index builds are spans of the global tracer provider (what `logfire.configure()` sets), inside the current trace."""


class SearchIndex:
    """The ranker over one set of skills, built at the first search and dropped when the skills are replaced.

    Safe to use from several threads (runs search in worker threads): one build at a time, and a build that was
    under way when the skills were replaced is dropped.
    """

    def __init__(self, options: SearchOptions) -> None:
        self.options = options
        """How the skills are ranked."""
        self._skills: Mapping[str, Skill[Any]] = {}
        self._versions: tuple[Hashable, ...] | None = None
        self._lexical: SkillIndex | None = None
        """The lexical index; hybrid search falls back to it when the encoder fails."""
        self._ranker: Ranker | None = None
        """What `search` ranks with: `_lexical`, a hybrid index over it, or the user's ranker."""
        self._embeddings = Embeddings()
        """Kept across rebuilds, so a rebuild embeds only the skills whose text changed."""
        self._lock = threading.Lock()

    def use(self, skills: Mapping[str, Skill[Any]], versions: tuple[Hashable, ...] | None) -> None:
        """Index `skills` from now on (their sources read at `versions`; `None` for skills defined in Python only,
        whose index is never cached). Waits for a build in progress, which read the previous skills."""
        with self._lock:
            self._skills, self._versions = skills, versions
            self._lexical = self._ranker = None  # bodies may have changed even when descriptions did not

    @property
    def lexical(self) -> SkillIndex | None:
        """The BM25 index, once built (for measurements)."""
        return self._lexical

    def search(self, query: str, limit: int, threshold: float) -> list[SearchHit]:
        """The skills ranked for `query`, none below `threshold`; the ranker is built on first use."""
        try:
            return list((self._ranker or self.prepare()).search(query, limit, threshold))
        except Exception as error:
            # An embedding model, API or custom ranker that fails must not end the agent's run: rank lexically this
            # time (the next search tries it again) and say why.
            if self.options.ranker is None and self.options.search == 'lexical':
                raise
            what = 'hybrid search' if self.options.ranker is None else 'the custom ranker'
            warnings.warn(SkillWarning(f'{what} failed, so this search ranked lexically: {error}'), stacklevel=3)
            return self._fallback().search(query, limit, threshold)

    def prepare(self) -> Ranker:
        """The ranker, built now if it is not yet (see `SkillLibrary.prepare_search`)."""
        with self._lock:  # concurrent first searches would each embed the whole library
            if self._ranker is not None:
                return self._ranker
            if not trace.get_current_span().is_recording():  # outside a trace (an uninstrumented run): no span
                return self._build()
            mode = 'custom' if self.options.ranker is not None else self.options.search
            attributes = {'skillshelf.skills': len(self._skills), 'skillshelf.search_mode': mode}
            with _TRACER.start_as_current_span('skillshelf.index_build', attributes=attributes):
                return self._build()

    def cache_path(self) -> Path | None:
        """The file the index is cached in, or `None` when it is not cached (see `SkillLibrary.index_cache_path`)."""
        skills = list(self._skills.values())
        cache = self._cache(skills, _headlines(skills))
        return None if cache is None else cache.index_file

    def _build(self) -> Ranker:
        skills = list(self._skills.values())
        try:
            return self._build_ranker(skills)
        finally:
            _forget_read_ahead(skills)

    def _build_ranker(self, skills: list[Skill[Any]]) -> Ranker:
        headlines = _headlines(skills)
        if self.options.ranker is not None:
            chars = _RANKING.body_limit(len(skills))
            documents = with_bodies(headlines, [_body(skill, chars) for skill in skills])
            self._ranker = custom_ranker(cast(RankerFactory, self.options.ranker), documents)
            return self._ranker
        cache = self._cache(skills, headlines)
        bodies = _BodyStarts(skills)  # read once: the index and the embeddings both take the start of each body
        lexical = self._lexical_index(headlines, bodies, cache)
        self._ranker = build_ranker(lexical, headlines, bodies, self.options, self._embeddings, cache)
        return self._ranker

    @gc_paused()  # like `Intake.collect`; not around an encoder or a custom ranker, which are not ours
    def _lexical_index(
        self, headlines: list[SearchDocument], bodies: Callable[[int], list[str]], cache: LibraryCache | None
    ) -> SkillIndex:
        if self._lexical is None:
            self._lexical = lexical_index(headlines, bodies, _RANKING, cache)
        return self._lexical

    def _fallback(self) -> SkillIndex:
        """The BM25 index that stands in when hybrid search or a custom ranker fails (built then, for the latter)."""
        with self._lock:
            if self._lexical is not None:
                return self._lexical
            skills = list(self._skills.values())
            headlines = _headlines(skills)
            return self._lexical_index(headlines, _BodyStarts(skills), self._cache(skills, headlines))

    def _cache(self, skills: list[Skill[Any]], headlines: list[SearchDocument]) -> LibraryCache | None:
        """The cache files of this index, for a library of `CACHE_MIN_SKILLS` folder skills or more.

        The key covers each skill's text and folder, and every source's version (a directory's listing stats every
        `SKILL.md`, so an edited body gives another key); a Python skill's instructions are hashed instead.
        """
        # The folder's path as a string: `Skill.folder` builds a `Path` per skill (a second at 100,000 skills).
        folders = [_folder(skill) for skill in skills]
        if self._versions is None or len(folders) - folders.count(None) < CACHE_MIN_SKILLS:
            return None
        content = [
            f'{headline.name}\0{headline.description}\0{headline.keywords}\0{folder or _instructions_hash(skill)}'
            for skill, headline, folder in zip(skills, headlines, folders, strict=True)
        ]
        content.append(repr(self._versions))
        return library_cache(_RANKING, content, {os.path.dirname(folder) for folder in folders if folder is not None})


def _folder(skill: Skill[Any]) -> str | None:
    """`os.path.abspath(skill.folder)`, without the `Path`; `None` for a skill without a folder."""
    return os.path.abspath(skill.content.origin) if isinstance(skill.content, FolderContent) else None


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


def _forget_read_ahead(skills: list[Skill[Any]]) -> None:
    """Drop the `SKILL.md` bytes discovery kept for a first read of each body that this build did not make (a cached
    index reads no body), so they are not held for the life of the process."""
    for skill in skills:
        if isinstance(skill.content, FolderContent):
            skill.content.skill_file.forget_kept()


def _body(skill: Skill[Any], chars: int) -> str:
    """The start of a skill's instructions, for the index; one that can no longer be read is indexed without."""
    if chars <= 0:
        return ''
    try:
        return skill.load_instructions(chars)
    except (SkillError, OSError):
        return ''


def _instructions_hash(skill: Skill[Any]) -> str:
    """What stands for the instructions of a skill without a folder in the index cache key (a folder skill's are in
    its source's version): the digests its content gives where it gives them (an MCP server's listing: reading the
    instructions would fetch every such skill at the first search), else the instructions' own hash."""
    if isinstance(skill.content, DigestedContent):
        return repr(sorted(skill.content.file_digests().items()))
    return hashlib.sha256(skill.load_instructions().encode('utf-8', 'surrogatepass')).hexdigest()
