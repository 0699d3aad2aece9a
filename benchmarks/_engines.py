"""The ranking methods compared: skillshelf's engine and the baselines, behind one `Searcher` shape, and `patched`,
which swaps a function of the engine for one run (how the ablation and the tuning switch a part of it off)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

import bm25s
import numpy as np
from _datasets import Doc

import skillshelf.ranking.tokenize as tokenizer
from skillshelf.ranking.documents import DEFAULT_THRESHOLD, SearchDocument
from skillshelf.ranking.lexical import RankingConfig, SkillIndex


class Searcher(Protocol):
    def search(self, query: str, limit: int) -> list[tuple[int, float]]: ...


@dataclass
class Method:
    name: str
    description: str
    build: Callable[[Sequence[Doc]], Searcher]
    threshold: float | None = None
    """The method's own score threshold for abstention; `None` for methods without one (the baselines)."""


class Skillshelf:
    """skillshelf's engine, as `search_skills` runs it; `threshold=0` keeps the hits below its score threshold,
    so a benchmark can apply the threshold itself and show what it costs."""

    def __init__(
        self, docs: Sequence[Doc], config: RankingConfig | None = None, threshold: float = DEFAULT_THRESHOLD
    ) -> None:
        self.index = SkillIndex([SearchDocument(d.name, d.description, '', d.body) for d in docs], config)
        self.threshold = threshold

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        return self.index.rank(query, limit, self.threshold)


class PlainBM25:
    """bm25s with its default tokenizer (English stop words, no stemming) over name + description + body."""

    def __init__(self, docs: Sequence[Doc]) -> None:
        texts = [f'{d.name} {d.description} {d.body}' for d in docs]
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize(texts, stopwords='en', show_progress=False), show_progress=False)

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        tokenized: list[list[str]] = bm25s.tokenize([query], stopwords='en', return_ids=False, show_progress=False)  # pyright: ignore[reportAssignmentType]
        tokens = [t for t in tokenized[0] if t in self.retriever.vocab_dict]
        if not tokens:
            return []
        scores = self.retriever.get_scores(tokens)
        order = np.argsort(-scores, kind='stable')[:limit]
        return [(int(i), float(scores[i])) for i in order if scores[i] > 0]


class KeywordOverlap:
    """pydantic-ai's local tool search (`keywords_search_fn`): count of shared alphanumeric tokens over
    name + description, ties kept in library order. Uses pydantic-ai's own tokenizer."""

    def __init__(self, docs: Sequence[Doc]) -> None:
        from pydantic_ai.toolsets._tool_search import _tokenize  # pyright: ignore[reportPrivateUsage]

        self._tokenize = _tokenize
        self.terms = [_tokenize(f'{d.name} {d.description}') for d in docs]

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        terms = self._tokenize(query)
        if not terms:
            return []
        scored = [(len(terms & doc_terms), i) for i, doc_terms in enumerate(self.terms)]
        scored = [item for item in scored if item[0] > 0]
        scored.sort(key=lambda item: item[0], reverse=True)
        return [(i, float(score)) for score, i in scored[:limit]]


def methods(config: RankingConfig | None = None) -> list[Method]:
    return [
        Method(
            'skillshelf',
            'field-weighted BM25 + stemming + CJK bigrams',
            lambda docs: Skillshelf(docs, config, threshold=0),
            DEFAULT_THRESHOLD,
        ),
        Method('bm25_plain', 'bm25s over name+description+body', PlainBM25),
        Method('keyword', "pydantic-ai's keyword overlap", KeywordOverlap),
    ]


@contextmanager
def patched(module: ModuleType, **replacements: Any) -> Iterator[None]:
    """`module`'s functions replaced for the run; the word → terms cache is emptied before and after."""
    originals = {name: getattr(module, name) for name in replacements}
    for name, value in replacements.items():
        setattr(module, name, value)
    tokenizer._TERMS.clear()  # pyright: ignore[reportPrivateUsage]
    try:
        yield
    finally:
        for name, value in originals.items():
            setattr(module, name, value)
        tokenizer._TERMS.clear()  # pyright: ignore[reportPrivateUsage]
