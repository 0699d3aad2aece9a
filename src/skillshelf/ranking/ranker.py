"""Choosing and building a library's ranker: lexical BM25, or hybrid with embeddings.

`SearchOptions` is what a library was asked for, checked at construction; `lexical_index` builds (or loads)
the BM25 index every mode needs, and `build_ranker` is the one place that turns it into the ranker the
options choose.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, cast

from ..errors import SkillError
from .cache import LibraryCache, load_index, save_index
from .embeddings import Embeddings
from .hybrid import DEFAULT_HYBRID_THRESHOLD, DEFAULT_LEXICAL_WEIGHT, HybridIndex, document_text
from .lexical import RankingConfig, SearchDocument, SkillIndex
from .semantic import Encoder, check_available, shared_encoder

__all__ = ('SEARCH_MODES', 'Ranker', 'SearchMode', 'SearchOptions', 'build_ranker', 'lexical_index')

SearchMode = Literal['lexical', 'hybrid']
"""How `search_skills` ranks: BM25 alone, or BM25 added to embedding similarity."""
SEARCH_MODES: tuple[SearchMode, ...] = ('lexical', 'hybrid')

Ranker = SkillIndex | HybridIndex
"""What a library searches with."""


@dataclass(frozen=True)
class SearchOptions:
    """How a library ranks skills; checked when created, so a mistake fails at construction, not at a search.

    Raises:
        SkillError: an unknown `mode`, an `encoder` that is not callable, or a `lexical_weight` outside [0, 1].
        SemanticUnavailableError: hybrid search without an `encoder`, and the `[semantic]` extra is not installed.
    """

    mode: SearchMode = 'lexical'
    """`'lexical'` or `'hybrid'`; an `encoder` implies `'hybrid'`."""
    encoder: Encoder | None = None
    """Hybrid search's embedding model; `None` means the bundled one, loaded at the first search."""
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    """Hybrid only: the lexical score's share (0–1); the embedding similarity gets the rest."""

    def __post_init__(self) -> None:
        # The values come from users and agent specs: check them whatever their declared types say.
        mode, encoder, weight = cast(object, self.mode), cast(object, self.encoder), cast(object, self.lexical_weight)
        if mode not in SEARCH_MODES:
            raise SkillError(f"the search option must be 'lexical' or 'hybrid', not {mode!r}")
        if encoder is not None and not callable(encoder):
            raise SkillError(f'the encoder must be a callable from texts to embedding rows, not {encoder!r}')
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight <= 1:
            raise SkillError(f'lexical_weight must be a number from 0 to 1, not {weight!r}')
        object.__setattr__(self, 'lexical_weight', float(weight))
        if encoder is not None:
            object.__setattr__(self, 'mode', 'hybrid')
        elif mode == 'hybrid':
            check_available()


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
    index = SkillIndex([replace(d, body=body) for d, body in zip(headlines, bodies, strict=True)], config)
    if cache is not None:
        save_index(cache.index_file, index)
    return index


def build_ranker(
    lexical: SkillIndex,
    headlines: Sequence[SearchDocument],
    options: SearchOptions,
    embeddings: Embeddings,
    cache: LibraryCache | None,
) -> Ranker:
    """The ranker `options` choose over the skills of `lexical` (their `headlines` in the same order): that index,
    or a hybrid index over it with each skill embedded (only the skills `embeddings` does not hold yet).

    Raises:
        SemanticUnavailableError: the bundled model is needed and the `[semantic]` extra is not installed.
        SkillError: the encoder returned something other than one row per text (its own errors pass through).
    """
    if options.mode == 'lexical':
        return lexical
    encoder = shared_encoder() if options.encoder is None else options.encoder
    file = None if cache is None else cache.vectors_file(encoder)
    vectors = embeddings.of([document_text(headline) for headline in headlines], encoder, file)
    return HybridIndex.from_parts(
        lexical, vectors, encoder, lexical_weight=options.lexical_weight, threshold=DEFAULT_HYBRID_THRESHOLD
    )
