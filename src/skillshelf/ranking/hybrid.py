"""Hybrid ranking: BM25 and embedding similarity, added with weights.

Lexical ranking wins where users phrase a request like the skill's author; dense sentence embeddings win
where they paraphrase. `HybridIndex` adds the two: the lexical score (already in [0, 1], see
`SkillIndex.scores`) and the cosine similarity of query and skill embeddings, weighted by
`lexical_weight`. The embeddings come from an `Encoder` (see `semantic.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .lexical import DEFAULT_THRESHOLD, RankingConfig, SearchDocument, SearchHit, SkillIndex, top_hits
from .semantic import Encoder, shared_encoder, unit_rows

__all__ = ('DEFAULT_LEXICAL_WEIGHT', 'EMBEDDED_BODY_CHARS', 'HybridIndex', 'document_text')

DEFAULT_LEXICAL_WEIGHT = 0.6
"""Chosen by cross-validation over source repositories from 0.3 to 0.9 (`benchmarks/crossval.py --hybrid`; 0.6 in
four folds of five, 0.5 in the other), for the best mean P@1 over the four dev sets. A lower weight helps paraphrased
requests (MetaTool), a higher one requests worded like the skill's author (the skill-trigger sets)."""


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
    ) -> None:
        self.lexical = SkillIndex(documents, config)
        self.encoder = encoder or shared_encoder()
        self.lexical_weight = lexical_weight
        self.vectors = vectors if vectors is not None else self.encoder([document_text(d) for d in documents])

    @classmethod
    def from_parts(
        cls,
        lexical: SkillIndex,
        vectors: npt.NDArray[np.float32],
        encoder: Encoder,
        *,
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
    ) -> HybridIndex:
        """A hybrid index over a built (or cached) lexical index and one embedding per skill, in its order."""
        index = cls.__new__(cls)
        index.lexical, index.vectors, index.encoder = lexical, vectors, encoder
        index.lexical_weight = lexical_weight
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
            return (1 - self.lexical_weight) * dense
        return self.lexical_weight * lexical + (1 - self.lexical_weight) * dense
