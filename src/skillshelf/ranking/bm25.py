"""Okapi BM25 weights as plain NumPy arrays, built in a few vectorised passes.

The weights are stored term-major (like a CSC matrix): the documents holding term `t` are
`docs[starts[t]:starts[t + 1]]`, with their BM25 weights in `weights[...]`. Scoring a query is then a
sum over a handful of slices. Building from flat arrays rather than per-document Python loops keeps
a 100k-skill index to seconds, and plain arrays save to and load from a cache file with no pickle.
The IDF is Lucene's, `log(1 + (N - df + 0.5) / (df + 0.5))`, which is never negative.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ('BM25Matrix',)

IntArray = npt.NDArray[np.int64]
SmallIntArray = npt.NDArray[np.int32]
"""Per-entry ids and counts, at half the memory (an index build's largest arrays)."""
FloatArray = npt.NDArray[np.float32]
Entries = tuple[SmallIntArray, SmallIntArray, IntArray]
"""Documents as flat (term id, occurrences) entries, and how many entries each document has (see `BM25Matrix.build`)."""


@dataclass(frozen=True)
class BM25Matrix:
    """BM25 weight of every (term, document) pair that occurs, grouped by term."""

    starts: IntArray
    """`n_terms + 1` offsets into `docs` and `weights`."""
    docs: npt.NDArray[np.int32]
    weights: FloatArray
    n_docs: int

    @classmethod
    def build(
        cls,
        term_ids: SmallIntArray,
        counts: SmallIntArray,
        entries: IntArray,
        n_terms: int,
        *,
        k1: float = 1.2,
        b: float = 0.75,
    ) -> BM25Matrix:
        """Weights for documents given as flat (term id, occurrences) entries, document after document.

        `entries[d]` is how many of the entries belong to document `d`; a term may have several entries in one
        document (their occurrences, never negative, add up).
        """
        return cls.from_blocks([(term_ids, counts, entries)], n_terms, k1=k1, b=b)

    @classmethod
    def from_blocks(cls, blocks: Iterable[Entries], n_terms: int, *, k1: float = 1.2, b: float = 0.75) -> BM25Matrix:
        """Like `build`, for documents given block after block, each block's entries as `build` takes them.

        Each block's entries are summed into (term, document) pairs while its arrays are small enough to stay in the
        processor's caches; a library's entries in one piece take fresh memory, which the kernel must zero first
        (in blocks of 65,000 entries the whole-skill matrix of 2,651 skills builds a quarter faster).
        """
        terms: list[SmallIntArray] = []
        docs: list[SmallIntArray] = []
        frequencies: list[IntArray] = []
        lengths: list[npt.NDArray[np.float64]] = []
        n_docs = 0
        for term_ids, counts, entries in blocks:
            doc_of_entry = np.repeat(np.arange(n_docs, n_docs + len(entries), dtype=np.int32), entries)
            block_lengths = np.bincount(doc_of_entry - n_docs, weights=counts, minlength=len(entries))
            lengths.append(block_lengths.astype(np.float64, copy=False))  # float64 already: typed, not copied
            block_terms, block_docs, block_frequencies = _sum_by_pair(term_ids, doc_of_entry, counts, n_terms)
            terms.append(block_terms)
            docs.append(block_docs)
            frequencies.append(block_frequencies)
            n_docs += len(entries)
        if not terms:
            return cls(np.zeros(n_terms + 1, dtype=np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32), 0)
        # Blocks come in document order, so a stable sort by term keeps each term's documents ascending.
        all_terms = np.concatenate(terms)
        order = _by_term(all_terms, n_terms)
        pair_terms, pair_docs, tf = all_terms[order], np.concatenate(docs)[order], np.concatenate(frequencies)[order]
        document_lengths = np.concatenate(lengths)
        df = np.bincount(pair_terms, minlength=n_terms)
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        average = float(document_lengths.mean()) if n_docs and document_lengths.sum() else 1.0
        norm = k1 * (1 - b + b * document_lengths[pair_docs] / average)
        weights = (idf[pair_terms] * tf * (k1 + 1) / (tf + norm)).astype(np.float32)
        starts = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df, out=starts[1:])
        return cls(starts, pair_docs, weights, n_docs)

    def scores(self, term_ids: list[int]) -> npt.NDArray[np.float64]:
        """Each document's BM25 score for a query made of `term_ids` (each counted once)."""
        if not term_ids:
            return np.zeros(self.n_docs)
        slices = [slice(self.starts[t], self.starts[t + 1]) for t in term_ids]
        docs = np.concatenate([self.docs[s] for s in slices])
        weights = np.concatenate([self.weights[s] for s in slices])
        return np.bincount(docs, weights=weights, minlength=self.n_docs).astype(np.float64, copy=False)

    def best(self) -> FloatArray:
        """For each term, the highest weight any document has for it (0 for a term no document holds)."""
        best = np.zeros(len(self.starts) - 1, dtype=np.float32)
        present = self.starts[1:] > self.starts[:-1]
        if present.any():
            best[present] = np.maximum.reduceat(self.weights, self.starts[:-1][present])
        return best


def _sum_by_pair(
    terms: SmallIntArray, docs: SmallIntArray, counts: SmallIntArray, n_terms: int
) -> tuple[SmallIntArray, SmallIntArray, IntArray]:
    """The distinct (term, document) pairs of entries given document after document (`docs` ascending), ordered by
    term then document, and the sum of `counts` over the entries of each."""
    if not len(terms):
        return terms, docs, counts.astype(np.int64)
    order = _by_term(terms, n_terms)
    terms, docs = terms[order], docs[order]
    opens = np.empty(len(terms), dtype=bool)
    opens[0] = True
    np.not_equal(terms[1:], terms[:-1], out=opens[1:])
    opens[1:] |= docs[1:] != docs[:-1]
    first = np.flatnonzero(opens)
    return terms[first], docs[first], np.add.reduceat(counts[order], first, dtype=np.int64)


def _by_term(terms: SmallIntArray, n_terms: int) -> IntArray:
    """The order that sorts `terms`, equal terms kept in their order.

    NumPy sorts 16-bit keys by radix, in linear time, so terms are sorted by their low and then their high 16 bits,
    several times faster than a comparison sort.
    """
    order = np.argsort(terms.astype(np.uint16), kind='stable')
    if n_terms > 1 << 16:
        order = order[np.argsort((terms[order] >> 16).astype(np.uint16), kind='stable')]
    return order
