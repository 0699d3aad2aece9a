"""Ranking skills for `search_skills`: field-weighted BM25 with stemming and CJK-aware terms.

Two BM25 indexes are summed: one over the whole skill, where the name, description and keywords are
repeated so they weigh more than the body (BM25F by repetition), and one over the headline only (name,
description, keywords), so a skill whose headline matches beats one that mentions the words in
passing. Scores are absolute: a skill's score is divided by the best score the query could reach in
this library, so one threshold works for every query and library and "nothing fits" can be told apart
from a weak match.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._bm25 import BM25Matrix
from ._tokenize import split_identifier, tokenize

__all__ = ('DEFAULT_THRESHOLD', 'RankingConfig', 'SearchDocument', 'SearchHit', 'SkillIndex')

DEFAULT_THRESHOLD = 0.1
"""Hits reaching less than a tenth of the best score the query could get are left out.

On the dev files this drops no right answer at rank 1 (see `benchmarks/README.md`); it removes matches
that share only a common word with the query. Lexical scores cannot tell a near-miss request from a real one.
"""


@dataclass(frozen=True)
class SearchDocument:
    """The searchable text of one skill."""

    name: str
    """The skill name; hyphens, underscores, dots and camelCase split it into words."""
    description: str
    """The skill description."""
    keywords: str = ''
    """Extra words the author declared (frontmatter `keywords`, `tags`, `triggers`, `when_to_use`)."""
    body: str = ''
    """The instructions (the `SKILL.md` body); only its beginning is indexed (`RankingConfig.body_chars`)."""


@dataclass(frozen=True)
class SearchHit:
    """One ranked result."""

    name: str
    """The skill's name."""
    score: float
    """Relevance in [0, 1]: the share of the best score the query could reach in this library."""


@dataclass(frozen=True)
class RankingConfig:
    """How fields are weighted and scored; the defaults were tuned on the benchmark's dev files."""

    name_repeat: int = 2
    description_repeat: int = 2
    keywords_repeat: int = 2
    body_chars: int = 10_000
    """Only the start of the body is indexed: it says what the skill is for; the rest is procedure."""
    body_budget: int = 20_000_000
    """Body characters indexed across the whole library; past 2,000 skills each body's share shrinks, so a
    100k-skill library still indexes in seconds (names, descriptions and keywords are always indexed whole)."""
    head_weight: float = 0.5
    """Weight of the headline index (name, description, keywords), next to the whole-skill index's 1."""
    k1: float = 1.2
    b: float = 0.75
    threshold: float = DEFAULT_THRESHOLD

    def body_limit(self, skills: int) -> int:
        """How many characters of each body are indexed in a library of `skills` skills."""
        return min(self.body_chars, self.body_budget // max(skills, 1))


class SkillIndex:
    """An in-memory index over skills."""

    def __init__(self, documents: Sequence[SearchDocument], config: RankingConfig | None = None) -> None:
        self.config = config or RankingConfig()
        self.names = [document.name for document in documents]
        vocabulary = _Vocabulary()
        # Flat machine-integer buffers rather than a list per skill: a 100k-skill build stays small.
        whole, head = _Postings(), _Postings()
        body_chars = self.config.body_limit(len(documents))
        for document in documents:
            name, description, keywords, body = (
                vocabulary.ids(terms) for terms in _document_terms(document, body_chars)
            )
            head.add(name * 2 + description + keywords)
            whole.add(
                name * self.config.name_repeat
                + description * self.config.description_repeat
                + keywords * self.config.keywords_repeat
                + body
            )
        self.vocabulary: dict[str, int] = dict(vocabulary)
        self.matrices = (self._matrix(whole), self._matrix(head))
        self._best = tuple(matrix.best() for matrix in self.matrices)

    @classmethod
    def from_parts(
        cls, names: list[str], vocabulary: dict[str, int], matrices: Sequence[BM25Matrix], config: RankingConfig
    ) -> SkillIndex:
        """An index rebuilt from what an earlier one held (see `_index_cache`)."""
        index = cls.__new__(cls)
        index.config = config
        index.names = names
        index.vocabulary = vocabulary
        index.matrices = (matrices[0], matrices[1])
        index._best = tuple(matrix.best() for matrix in index.matrices)
        return index

    def __len__(self) -> int:
        return len(self.names)

    def search(self, query: str, limit: int, threshold: float | None = None) -> list[SearchHit]:
        """The best `limit` skills for `query`, best first, leaving out those scoring below `threshold`.

        `threshold` defaults to the index's `RankingConfig.threshold`; pass 0 to keep every match.
        """
        return [SearchHit(self.names[position], score) for position, score in self.rank(query, limit, threshold)]

    def rank(self, query: str, limit: int, threshold: float | None = None) -> list[tuple[int, float]]:
        """Like `search`, with each skill given by its position in the documents the index was built from."""
        scores = self.scores(query)
        if scores is None or limit < 1:
            return []
        return top_hits(scores, limit, self.config.threshold if threshold is None else threshold)

    def scores(self, query: str) -> npt.NDArray[np.float64] | None:
        """Every skill's score in [0, 1] for `query`, in document order; `None` if no query term is known."""
        if not self.names:
            return None
        terms = [self.vocabulary[t] for t in dict.fromkeys(tokenize(query)) if t in self.vocabulary]
        if not terms:
            return None
        weights = (1.0, self.config.head_weight)
        ceiling = sum(w * float(best[terms].sum()) for w, best in zip(weights, self._best, strict=True))
        if ceiling <= 0:
            return None
        total = np.zeros(len(self.names))
        for weight, matrix in zip(weights, self.matrices, strict=True):
            if weight > 0:
                total += weight * matrix.scores(terms)
        return np.minimum(total / ceiling, 1.0)

    def _matrix(self, postings: _Postings) -> BM25Matrix:
        terms = np.frombuffer(postings.terms, dtype=np.int64) if postings.terms else np.zeros(0, np.int64)
        lengths = np.frombuffer(postings.lengths, dtype=np.int64) if postings.lengths else np.zeros(0, np.int64)
        return BM25Matrix.build(terms, lengths, len(self.vocabulary), k1=self.config.k1, b=self.config.b)


class _Postings:
    """Term ids of every skill, one after another, and how many belong to each skill."""

    def __init__(self) -> None:
        self.terms = array('q')
        self.lengths = array('q')

    def add(self, term_ids: list[int]) -> None:
        self.terms.extend(term_ids)
        self.lengths.append(len(term_ids))


class _Vocabulary(dict[str, int]):
    """Term → id, numbering new terms as they are met."""

    def __missing__(self, term: str) -> int:
        self[term] = len(self)
        return self[term]

    def ids(self, terms: list[str]) -> list[int]:
        return list(map(self.__getitem__, terms))


def _document_terms(document: SearchDocument, body_chars: int) -> tuple[list[str], list[str], list[str], list[str]]:
    return (
        tokenize(split_identifier(document.name)),
        tokenize(document.description),
        tokenize(document.keywords),
        tokenize(document.body[:body_chars]) if body_chars > 0 else [],
    )


def top_hits(scores: npt.NDArray[np.float64], limit: int, threshold: float) -> list[tuple[int, float]]:
    """The `limit` best (position, score) pairs scoring above 0 and at least `threshold`, best first.

    Ties keep document order, so results are reproducible.
    """
    if limit < 1 or not len(scores):
        return []
    if limit >= len(scores):
        order = np.argsort(-scores, kind='stable')
    else:
        candidates = np.argpartition(-scores, limit - 1)[:limit]
        cutoff = scores[candidates].min()
        candidates = np.flatnonzero(scores >= cutoff) if cutoff > 0 else np.flatnonzero(scores > 0)
        order = candidates[np.argsort(-scores[candidates], kind='stable')][:limit]
    ranked: list[tuple[int, float]] = []
    for position in order:
        score = float(scores[position])
        if score <= 0 or score < threshold:
            break
        ranked.append((int(position), round(score, 3)))
    return ranked
