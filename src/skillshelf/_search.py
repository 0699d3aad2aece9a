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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._bm25 import BM25Matrix, IntArray
from ._tokenize import split_identifier, terms_of_words, tokenize, word_counts, words

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
        self.config = config = config or RankingConfig()
        self.names = [document.name for document in documents]
        # Each document is first counted by word (a C-level pass) and written as (word id, count) pairs in
        # flat machine-integer buffers, so a 100k-skill build stays small; each distinct word is then stemmed
        # once and the pairs are expanded to term ids with NumPy.
        word_ids = _Numbering()
        whole, head = _Postings(word_ids), _Postings(word_ids)
        body_chars = config.body_limit(len(documents))
        for document in documents:
            name, description, keywords, body = _document_texts(document, body_chars)
            name, description, keywords = map(words, (name, description, keywords))
            head.add(Counter(name * 2 + description + keywords))
            counts = word_counts(body)
            counts.update(
                name * config.name_repeat + description * config.description_repeat + keywords * config.keywords_repeat
            )
            whole.add(counts)
        vocabulary = _Numbering()
        terms_by_word = _WordTerms([[vocabulary[term] for term in terms] for terms in terms_of_words(list(word_ids))])
        self.vocabulary: dict[str, int] = dict(vocabulary)
        self.matrices = tuple(
            BM25Matrix.build(*terms_by_word.expand(postings), len(vocabulary), k1=config.k1, b=config.b)
            for postings in (whole, head)
        )
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


class _Postings:
    """How often each word occurs in each skill: (word id, count) pairs, skill after skill."""

    def __init__(self, word_ids: _Numbering) -> None:
        self.word_ids = word_ids
        self.words = array('q')
        self.counts = array('q')
        self.entries = array('q')
        """How many pairs belong to each skill."""

    def add(self, counts: Counter[str]) -> None:
        self.words.extend(map(self.word_ids.__getitem__, counts))
        self.counts.extend(counts.values())
        self.entries.append(len(counts))


class _Numbering(dict[str, int]):
    """String → id, numbering new strings as they are met."""

    def __missing__(self, key: str) -> int:
        self[key] = len(self)
        return self[key]


class _WordTerms:
    """The term ids of each word id (none for a stop word, several for a CJK run), as flat arrays."""

    def __init__(self, terms_of_word: list[list[int]]) -> None:
        self.counts = np.array([len(terms) for terms in terms_of_word], dtype=np.int64)
        self.starts = np.zeros(len(terms_of_word) + 1, dtype=np.int64)
        np.cumsum(self.counts, out=self.starts[1:])
        self.terms = np.array([term for terms in terms_of_word for term in terms], dtype=np.int64)

    def expand(self, postings: _Postings) -> tuple[IntArray, IntArray, IntArray]:
        """The postings as (term id, count) pairs, and the number of pairs in each skill."""
        word_ids, counts, entries = map(_int_array, (postings.words, postings.counts, postings.entries))
        terms_per_word = self.counts[word_ids]
        terms_before = np.zeros(len(word_ids) + 1, dtype=np.int64)
        np.cumsum(terms_per_word, out=terms_before[1:])
        # Term k of the word in pair i sits at starts[word] + k; lay those out pair after pair.
        positions = np.repeat(self.starts[word_ids] - terms_before[:-1], terms_per_word)
        positions += np.arange(len(positions))
        pairs_before_skill = np.zeros(len(entries) + 1, dtype=np.int64)
        np.cumsum(entries, out=pairs_before_skill[1:])
        term_entries = np.diff(terms_before[pairs_before_skill])
        return self.terms[positions], np.repeat(counts, terms_per_word), term_entries


def _int_array(buffer: array[int]) -> IntArray:
    return np.frombuffer(buffer, dtype=np.int64) if buffer else np.zeros(0, np.int64)


def _document_texts(document: SearchDocument, body_chars: int) -> tuple[str, str, str, str]:
    body = document.body[:body_chars] if body_chars > 0 else ''
    return split_identifier(document.name), document.description, document.keywords, body


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
