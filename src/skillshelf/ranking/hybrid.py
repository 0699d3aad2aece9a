"""Hybrid ranking: BM25 and embedding similarity, added with weights that follow each skill's length.

Lexical ranking wins where users phrase a request like the skill's author; dense sentence embeddings win
where they paraphrase. `HybridIndex` adds the two: the lexical score (already in [0, 1], see
`SkillIndex.scores`) and the cosine similarity of query and skill embeddings. The similarity's share is
`1 - lexical_weight` for a skill whose indexed text is short (a tool's short description), and shrinks for a
longer one (`dense_shares`). The embeddings come from an `Encoder` (see `semantic.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .documents import DEFAULT_THRESHOLD, SearchDocument, SearchHit
from .lexical import RankingConfig, SkillIndex, top_hits
from .semantic import Encoder, shared_encoder, unit_rows

__all__ = (
    'DEFAULT_LEXICAL_WEIGHT',
    'EMBEDDED_BODY_CHARS',
    'SHORT_TEXT_WORDS',
    'HybridIndex',
    'dense_shares',
    'document_text',
    'indexed_words',
)

DEFAULT_LEXICAL_WEIGHT = 0.4
"""The lexical share of a short skill's score. Chosen with `SHORT_TEXT_WORDS` by cross-validation over source
repositories (`benchmarks/crossval.py --hybrid`), for the best mean P@1 over the four dev sets."""

SHORT_TEXT_WORDS = 75
"""A skill whose indexed text (name, description, keywords, body start) has at most this many words gets the whole
dense share; one of `n` words, more than that, gets `SHORT_TEXT_WORDS / n` of it. An embedding says what the start
of a text says, while BM25 weighs every indexed word. On the dev sets, similarity adds 13 points of P@1 to tools
with short descriptions (MetaTool) and nothing to `SKILL.md` skills of a thousand indexed words (their authors'
trigger queries), where the share tools want (0.6) costs 5.5 points (the 2,651-skill library)."""

EMBEDDED_BODY_CHARS = 1500
"""How much of a skill's body follows its headline in the text that is embedded: the model reads only 256 word
pieces, and what is left of them after the name, description and keywords goes to the start of the body."""


def document_text(document: SearchDocument) -> str:
    """What is embedded for a skill: its name as words, description, keywords and the start of its body.

    Filling the model's window with the body start raised dense P@1 on every dev set (trigger 0.476 → 0.500, pooled
    0.378 → 0.407, MetaTool 0.542 → 0.578, BFCL 0.549 → 0.625), at about twice the time to embed a library.
    """
    name = document.name.replace('-', ' ').replace('_', ' ')
    body = ' '.join(document.body[:EMBEDDED_BODY_CHARS].split())
    return ' '.join(part for part in (f'{name}:', document.description, document.keywords, body) if part)


def indexed_words(document: SearchDocument, body_chars: int) -> int:
    """How many words of `document` the lexical index reads, given that it reads `body_chars` of the body."""
    return sum(
        len(text.split())
        for text in (document.name, document.description, document.keywords, document.body[:body_chars])
    )


def dense_shares(
    words: Sequence[int], lexical_weight: float, short_text_words: int = SHORT_TEXT_WORDS
) -> npt.NDArray[np.float64]:
    """Each skill's share of embedding similarity in its score, given how many words of it are indexed."""
    counts = np.maximum(np.asarray(words, dtype=np.float64), 1.0)
    return (1 - lexical_weight) * np.minimum(1.0, short_text_words / counts)


class HybridIndex:
    """Lexical BM25 and dense embeddings, added with weights; same interface as `SkillIndex`."""

    def __init__(
        self,
        documents: Sequence[SearchDocument],
        *,
        encoder: Encoder | None = None,
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
        config: RankingConfig | None = None,
        vectors: npt.NDArray[np.float32] | None = None,
        short_text_words: int = SHORT_TEXT_WORDS,
    ) -> None:
        self.lexical = SkillIndex(documents, config)
        self.encoder = encoder or shared_encoder()
        self.vectors = vectors if vectors is not None else self.encoder([document_text(d) for d in documents])
        body_chars = self.lexical.config.body_limit(len(documents))
        words = [indexed_words(d, body_chars) for d in documents]
        self.dense_shares = dense_shares(words, lexical_weight, short_text_words)

    @classmethod
    def from_parts(
        cls,
        lexical: SkillIndex,
        vectors: npt.NDArray[np.float32],
        encoder: Encoder,
        shares: npt.NDArray[np.float64],
    ) -> HybridIndex:
        """A hybrid index over a built (or cached) lexical index, one embedding per skill and each skill's dense
        share (`dense_shares`), in its order."""
        index = cls.__new__(cls)
        index.lexical, index.vectors, index.encoder, index.dense_shares = lexical, vectors, encoder, shares
        return index

    def __len__(self) -> int:
        return len(self.lexical)

    def search(self, query: str, limit: int, threshold: float = DEFAULT_THRESHOLD) -> list[SearchHit]:
        """The best `limit` skills for `query`, best first, leaving out those scoring below `threshold`."""
        names = self.lexical.names
        return [SearchHit(names[position], score) for position, score in self.rank(query, limit, threshold)]

    def rank(
        self,
        query: str,
        limit: int,
        threshold: float = DEFAULT_THRESHOLD,
        query_vector: npt.NDArray[np.float32] | None = None,
    ) -> list[tuple[int, float]]:
        """Like `search`, with each skill given by its position in the documents; `query_vector` is the query's
        embedding if it is already known (else the encoder embeds the query)."""
        if not query.strip() or not len(self) or limit < 1:
            return []
        return top_hits(self.scores(query, query_vector), limit, threshold, self.lexical.named_in(query))

    def scores(self, query: str, query_vector: npt.NDArray[np.float32] | None = None) -> npt.NDArray[np.float64]:
        """Every skill's fused score in [0, 1] for `query`."""
        vector = unit_rows(self.encoder([query]))[0] if query_vector is None else query_vector
        dense: npt.NDArray[np.float64] = np.maximum(self.vectors @ vector, 0.0).astype(np.float64)
        lexical = self.lexical.scores(query)
        if lexical is None:
            return self.dense_shares * dense
        return (1 - self.dense_shares) * lexical + self.dense_shares * dense
