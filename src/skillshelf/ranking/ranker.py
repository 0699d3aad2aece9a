"""Choosing and building a library's ranker: lexical BM25, hybrid with embeddings, or the user's own.

`SearchOptions` is what a library was asked for, checked at construction; `lexical_index` builds (or loads)
the BM25 index every built-in mode needs, `build_ranker` is the one place that turns it into the ranker the
options choose, and `custom_ranker` builds a user's `Ranker` and checks what it returns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, cast

from .._imports import import_object
from ..errors import SkillError
from .cache import LibraryCache, load_index, save_index
from .documents import DEFAULT_THRESHOLD, SearchDocument, SearchHit
from .embeddings import Embeddings
from .hybrid import (
    DEFAULT_LEXICAL_WEIGHT,
    EMBEDDED_BODY_CHARS,
    HybridIndex,
    dense_shares,
    document_text,
    indexed_words,
)
from .lexical import RankingConfig, SkillIndex
from .semantic import Encoder, check_available, shared_encoder

__all__ = (
    'MAX_SEARCH_LIMIT',
    'SEARCH_MODES',
    'Ranker',
    'RankerFactory',
    'SearchMode',
    'SearchOptions',
    'build_ranker',
    'custom_ranker',
    'lexical_index',
    'with_bodies',
)

SearchMode = Literal['lexical', 'hybrid']
"""How `search_skills` ranks: BM25 alone, or BM25 added to embedding similarity."""
SEARCH_MODES: tuple[SearchMode, ...] = ('lexical', 'hybrid')
MAX_SEARCH_LIMIT = 20
"""The most results one search returns."""


class Ranker(Protocol):
    """What a library searches with: the built-in `SkillIndex` and `HybridIndex`, or your own (an embedding API, a
    re-ranker), built by a `RankerFactory` from the library's `SearchDocument`s."""

    def search(self, query: str, limit: int, threshold: float) -> Sequence[SearchHit]:
        """The best `limit` skills for `query`, best first, none scoring below `threshold`.

        Scores are from 0 to 1 and comparable across queries: the model sees them, and the threshold (an option of
        `Skills`) applies to them. An exception makes that search rank lexically, with a warning.
        """
        ...


RankerFactory = Callable[[Sequence[SearchDocument]], Ranker]
"""Builds a `Ranker` over a library's skills, given their `SearchDocument`s (with the start of each body), in
catalog order; a class whose constructor takes the documents is one. Called at the first search, and again after a
refresh that changed the skills."""


@dataclass(frozen=True)
class SearchOptions:
    """How a library's skills are searched; checked when created, so a mistake fails at construction, not at a search.

    Raises:
        SkillError: an option has the wrong type or is out of range (the message names it), an import path cannot
            be imported, or a `ranker` comes with hybrid search.
        SemanticUnavailableError: hybrid search without an `encoder`, and the `[semantic]` extra is not installed.
    """

    search: SearchMode = 'lexical'
    """How `search_skills` ranks: `'lexical'` (BM25) or `'hybrid'` (BM25 plus embeddings, see `encoder`); an
    `encoder` implies `'hybrid'`."""
    encoder: Encoder | str | None = None
    """Hybrid search's embedding model (texts → L2-normalised rows), or its import path; default: the `[semantic]`
    extra's all-MiniLM-L6-v2, loaded at the first search."""
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    """Hybrid only: the lexical score's share (0–1) for a short skill; the embedding similarity gets the rest, less
    for a longer skill, whose embedding tells only what its start says (see `hybrid.SHORT_TEXT_WORDS`)."""
    ranker: RankerFactory | str | None = None
    """Your own ranking instead of `search`'s: a callable (a class will do) building a `Ranker` from the library's
    `SearchDocument`s, or its import path."""
    search_limit: int = 5
    """Default number of `search_skills` results (at most `MAX_SEARCH_LIMIT`)."""
    search_threshold: float = DEFAULT_THRESHOLD
    """The score (0 to 1) a skill needs to be a `search_skills` result: higher finds fewer near-misses, and nothing
    more often."""

    def __post_init__(self) -> None:
        # The values come from users and agent specs: check them whatever their declared types say.
        if isinstance(self.encoder, str):
            object.__setattr__(self, 'encoder', import_object(self.encoder, 'encoder'))
        if isinstance(self.ranker, str):
            object.__setattr__(self, 'ranker', import_object(self.ranker, 'ranker'))
        mode, encoder = cast(object, self.search), cast(object, self.encoder)
        if mode not in SEARCH_MODES:
            raise SkillError(f"the `search` option must be 'lexical' or 'hybrid', not {mode!r}")
        if encoder is not None and not callable(encoder):
            raise SkillError(f'the encoder must be a callable from texts to embedding rows, not {encoder!r}')
        object.__setattr__(self, 'lexical_weight', _fraction(self.lexical_weight, 'lexical_weight'))
        object.__setattr__(self, 'search_threshold', _fraction(self.search_threshold, 'search_threshold'))
        limit = cast(object, self.search_limit)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise SkillError(
                f'the `search_limit` option must be a whole number from 1 to {MAX_SEARCH_LIMIT}, not {limit!r}'
            )
        if self.ranker is not None and not callable(cast(object, self.ranker)):
            raise SkillError(
                'the ranker must be a callable that builds a Ranker from the documents (a class will do), '
                f'not {self.ranker!r}'
            )
        if self.ranker is not None and (encoder is not None or mode == 'hybrid'):
            raise SkillError("a custom ranker replaces the built-in search: leave out `search='hybrid'` and `encoder`")
        if encoder is not None:
            object.__setattr__(self, 'search', 'hybrid')
        elif mode == 'hybrid':
            check_available()


def _fraction(value: object, option: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise SkillError(f'the `{option}` option must be a number from 0 to 1, not {value!r}')
    return float(value)


def lexical_index(
    headlines: Sequence[SearchDocument],
    read_bodies: Callable[[int], Sequence[str]],
    config: RankingConfig,
    cache: LibraryCache | None,
) -> SkillIndex:
    """The BM25 index of skills given by their `headlines` (name, description, keywords): from the cache file
    when it holds these skills, else built, with `read_bodies(chars)` giving the start of each skill's body
    (and then saved)."""
    names = [headline.name for headline in headlines]
    if cache is not None and (cached := load_index(cache.index_file, config)) is not None and cached.names == names:
        return cached
    bodies = read_bodies(config.body_limit(len(headlines)))
    index = SkillIndex(with_bodies(headlines, bodies), config)
    if cache is not None:
        save_index(cache.index_file, index)
    return index


def build_ranker(
    lexical: SkillIndex,
    headlines: Sequence[SearchDocument],
    read_bodies: Callable[[int], Sequence[str]],
    options: SearchOptions,
    embeddings: Embeddings,
    cache: LibraryCache | None,
) -> Ranker:
    """The ranker `options` choose over the skills of `lexical` (their `headlines` in the same order): that index,
    or a hybrid index over it with each skill embedded (only the skills `embeddings` does not hold yet), its
    headline followed by the start of its body (`read_bodies(chars)`).

    Raises:
        SemanticUnavailableError: the default model is needed and the `[semantic]` extra is not installed, or the
            model is neither cached nor downloadable.
        SkillError: the encoder returned something other than one row per text (its own errors pass through).
    """
    if options.search == 'lexical':
        return lexical
    encoder = shared_encoder() if options.encoder is None else cast(Encoder, options.encoder)
    file = None if cache is None else cache.vectors_file(encoder)
    body_chars = lexical.config.body_limit(len(headlines))
    bodies = read_bodies(max(body_chars, EMBEDDED_BODY_CHARS))
    documents = with_bodies(headlines, bodies)
    vectors = embeddings.of([document_text(document) for document in documents], encoder, file)
    words = [indexed_words(document, body_chars) for document in documents]
    return HybridIndex.from_parts(lexical, vectors, encoder, dense_shares(words, options.lexical_weight))


def with_bodies(headlines: Sequence[SearchDocument], bodies: Sequence[str]) -> list[SearchDocument]:
    """Each of `headlines` with its body from `bodies`, in order (built directly: `dataclasses.replace` per skill
    costs a quarter of a second at 100,000 skills)."""
    return [SearchDocument(d.name, d.description, d.keywords, body) for d, body in zip(headlines, bodies, strict=True)]


def custom_ranker(factory: RankerFactory, documents: Sequence[SearchDocument]) -> Ranker:
    """The user's ranker over `documents`, its results checked at every search (see `_CheckedRanker`).

    Raises:
        SkillError: the factory returned something without a `search` method (its own errors pass through).
    """
    ranker = cast(object, factory(documents))  # the user's code: check what it returned
    if not callable(getattr(ranker, 'search', None)):
        raise SkillError(f'the ranker factory {factory!r} returned {ranker!r}, which has no `search` method')
    return _CheckedRanker(cast(Ranker, ranker), frozenset(document.name for document in documents))


@dataclass(frozen=True)
class _CheckedRanker:
    """A user's ranker whose hits are checked, so a mistake in it is an error that names it (and that search ranks
    lexically) rather than an unknown name or a score the model cannot read; kept to `limit` and `threshold`."""

    ranker: Ranker
    names: frozenset[str]

    def search(self, query: str, limit: int, threshold: float) -> list[SearchHit]:
        hits: list[SearchHit] = []
        for hit in cast('Sequence[object]', self.ranker.search(query, limit, threshold)):
            if not isinstance(hit, SearchHit) or hit.name not in self.names:
                raise SkillError(f'the ranker returned {hit!r}: a search must return SearchHits of the skills given')
            score = cast(object, hit.score)
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
                raise SkillError(f'the ranker gave {hit.name!r} the score {score!r}; scores must be from 0 to 1')
            if score >= threshold:
                hits.append(hit)
        return sorted(hits, key=lambda hit: -hit.score)[:limit]
