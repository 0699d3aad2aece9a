"""Ranking skills for `search_skills`: field-weighted BM25 with stemming and CJK-aware terms.

Two BM25 indexes are summed: one over the whole skill, where the name, description and keywords are
repeated so they weigh more than the body (BM25F by repetition), and one over the headline only (name,
description, keywords), so a skill whose headline matches beats one that mentions the words in
passing. A body's "When to use" sections count as keywords: that is where authors list the requests a
skill is for. What an author says a skill is *not* for ("When NOT to use", "not for X"; see `negatives`)
is a third index, whose matches are taken off the score. Scores are absolute: a skill's score is divided
by the best score the query could reach in this library, so one threshold works for every query and
library and "nothing fits" can be told apart from a weak match.

A query that names a skill (`use deep-review-loop on this`, `/planner add dark mode`) gets that skill
first, whatever the words around the name say: the user has already chosen it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, count, pairwise

import numpy as np
import numpy.typing as npt

from .bm25 import BM25Matrix, Entries, IntArray, SmallIntArray
from .documents import DEFAULT_THRESHOLD, SearchDocument, SearchHit
from .negatives import split_body, split_description
from .pieces import NumberedPieces, number_pieces
from .tokenize import decode_piece, split_identifier, terms_of_pieces, tokenize
from .when_to_use import heading_titles, when_to_use_sections

__all__ = (
    'RankingConfig',
    'SkillIndex',
    'indexed_text',
    'top_hits',
)


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
    negative_weight: float = 1.0
    """Weight of the query words a skill mentions only where its author says what it is not for, taken off its
    score (words it also mentions elsewhere are not: "screenshots" in a screenshot skill's "not for single-page
    screenshots" must not push away screenshot requests)."""
    k1: float = 1.2
    b: float = 0.75

    def body_limit(self, skills: int) -> int:
        """How many characters of each body are indexed in a library of `skills` skills."""
        return min(self.body_chars, self.body_budget // max(skills, 1))


class SkillIndex:
    """An in-memory index over skills."""

    def __init__(self, documents: Sequence[SearchDocument], config: RankingConfig | None = None) -> None:
        self.config = config = config or RankingConfig()
        self.names = [document.name for document in documents]
        # Every word of every field becomes one entry in a flat array: its piece id (see `pieces`). Each distinct piece
        # is then turned into terms once, and NumPy weighs the fields, expands piece ids to term ids and adds up
        # repeats.
        body_chars = config.body_limit(len(documents))
        fields = _FieldPieces(number_pieces(chain.from_iterable(_document_texts(d, body_chars) for d in documents)))
        terms_by_piece = _PieceTerms(terms_of_pieces(fields.pieces()))
        self.vocabulary: dict[str, int] = terms_by_piece.vocabulary
        whole_repeats = (config.name_repeat, config.description_repeat, config.keywords_repeat, 1, 0)
        self.matrices = tuple(
            BM25Matrix.from_blocks(
                (terms_by_piece.expand(*block) for block in fields.weighted(repeats)),
                len(self.vocabulary),
                k1=config.k1,
                b=config.b,
            )
            for repeats in (whole_repeats, _HEADLINE_REPEATS, _NEGATIVE_REPEATS)
        )
        self._best = tuple(matrix.best() for matrix in self.matrices[:2])

    @classmethod
    def from_parts(
        cls, names: list[str], vocabulary: dict[str, int], matrices: Sequence[BM25Matrix], config: RankingConfig
    ) -> SkillIndex:
        """An index rebuilt from what an earlier one held (see `cache.load_index`)."""
        index = cls.__new__(cls)
        index.config = config
        index.names = names
        index.vocabulary = vocabulary
        index.matrices = (matrices[0], matrices[1], matrices[2])
        index._best = tuple(matrix.best() for matrix in index.matrices[:2])
        return index

    def __len__(self) -> int:
        return len(self.names)

    def search(self, query: str, limit: int, threshold: float = DEFAULT_THRESHOLD) -> list[SearchHit]:
        """The best `limit` skills for `query`, best first, leaving out those scoring below `threshold` (0 keeps
        every match)."""
        return [SearchHit(self.names[position], score) for position, score in self.rank(query, limit, threshold)]

    def rank(self, query: str, limit: int, threshold: float = DEFAULT_THRESHOLD) -> list[tuple[int, float]]:
        """Like `search`, with each skill given by its position in the documents the index was built from."""
        named = self.named_in(query)
        scores = self.scores(query)
        if scores is None:
            if not named:
                return []
            scores = np.zeros(len(self.names))
        return top_hits(scores, limit, threshold, named)

    def named_in(self, query: str) -> list[int]:
        """The skills `query` names, by position: a hyphenated or snake_case name (`deep-review-loop`,
        `data_analysis`) written out, or any name invoked as a command (`/planner`, `$planner`, as Claude Code and
        Codex users do).

        A one-word name written plainly (`planner`) is an ordinary word: it may just describe the request.
        """
        named: list[int] = []
        for prefix, run in _NAME_MENTION.findall(query.lower()):
            name = run.strip('-_')
            if prefix or '-' in name or '_' in name:
                named.extend(self._positions_by_name.get(name, ()))
        return list(dict.fromkeys(named))

    @cached_property
    def _positions_by_name(self) -> dict[str, list[int]]:
        positions: dict[str, list[int]] = {}
        for position, name in enumerate(self.names):
            positions.setdefault(name.lower(), []).append(position)
        return positions

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
        for weight, matrix in zip(weights, self.matrices[:2], strict=True):
            if weight > 0:
                total += weight * matrix.scores(terms)
        if self.config.negative_weight > 0:
            total -= self.config.negative_weight * self._excluded(terms)
        return np.minimum(np.maximum(total / ceiling, 0.0), 1.0)

    def _excluded(self, terms: list[int]) -> npt.NDArray[np.float64]:
        """Each skill's BM25 score in the negatives index over the `terms` it holds only there."""
        whole, negatives = self.matrices[0], self.matrices[2]
        excluded = np.zeros(len(self.names))
        ids = np.array(terms)
        for term in ids[negatives.starts[ids + 1] > negatives.starts[ids]]:  # usually none: few texts say "not for"
            start, end = negatives.starts[term], negatives.starts[term + 1]
            docs, weights = negatives.docs[start:end], negatives.weights[start:end]
            elsewhere = whole.docs[whole.starts[term] : whole.starts[term + 1]]  # ascending, as built
            if len(elsewhere):
                alone = elsewhere[np.minimum(np.searchsorted(elsewhere, docs), len(elsewhere) - 1)] != docs
                docs, weights = docs[alone], weights[alone]
            excluded[docs] += weights  # a skill appears once per term
        return excluded


_NAME_MENTION = re.compile(r'(?:^|(?<=[\s"\'`(\[{<*]))([/$]?)((?:[^\W_]|[-_])+)(?![/\\]|\.\w)')
"""A free-standing run of letters, digits, hyphens and underscores (what a skill name is made of), with the command
sign before it, if any: not part of a path, URL or file name (`src/session.ts`, `~/skills/code-reviewer/`)."""

_HEADLINE_REPEATS = (2, 1, 1, 0, 0)
"""How often the headline index counts the name, description, keywords, body and negatives of a skill."""
_NEGATIVE_REPEATS = (0, 0, 0, 0, 1)
"""The negatives index counts only what the author says the skill is not for."""


class _FieldPieces:
    """The pieces (see `tokenize.piece_bytes`) of each field (name, description, keywords, body, negatives) of each
    skill, as piece ids: field after field, skill after skill."""

    FIELDS = 5

    def __init__(self, numbered: NumberedPieces) -> None:
        self.numbered = numbered
        """The piece ids, and how many pieces each field of each skill has."""

    def pieces(self) -> list[str]:
        """Every distinct piece, in piece-id order."""
        return list(map(decode_piece, self.numbered.distinct))

    def weighted(self, repeats: tuple[int, ...]) -> Iterator[Entries]:
        """The (piece id, count) entries, with each field's pieces counted as often as its repeat (fields repeated
        0 times left out), and the number of entries of each skill: in blocks of skills of about `_BLOCK_ENTRIES`
        pieces (see `BM25Matrix.from_blocks`)."""
        ids, field_sizes = self.numbered.ids, self.numbered.counts
        skills = len(field_sizes) // self.FIELDS
        field_starts = np.zeros(len(field_sizes) + 1, dtype=np.int64)
        np.cumsum(field_sizes, out=field_starts[1:])
        skill_starts = field_starts[:: self.FIELDS]
        cuts = np.searchsorted(skill_starts, np.arange(_BLOCK_ENTRIES, int(skill_starts[-1]), _BLOCK_ENTRIES))
        bounds = sorted({0, *cuts.tolist(), skills})  # not `np.unique`: its first call imports `numpy.ma` (9 ms)
        repeat_of_field = np.array(repeats, dtype=np.int32)
        for first, end in pairwise(bounds):
            sizes = field_sizes[first * self.FIELDS : end * self.FIELDS]
            pieces = ids[skill_starts[first] : skill_starts[end]]
            repeat_of_entry = np.repeat(np.tile(repeat_of_field, end - first), sizes)
            entries_per_skill = np.zeros(end - first, dtype=np.int64)
            for field, repeat in enumerate(repeats):
                if repeat > 0:
                    entries_per_skill += sizes[field :: self.FIELDS]
            if min(repeats) > 0:
                yield pieces, repeat_of_entry, entries_per_skill
            else:
                kept = repeat_of_entry > 0
                yield pieces[kept], repeat_of_entry[kept], entries_per_skill


_BLOCK_ENTRIES = 2**16
"""Pieces in a block of the index build: the block's arrays fit the processor's caches."""


class _PieceTerms:
    """The term ids of each piece id (none for a stop word, several for a CJK run), as flat arrays, and the
    vocabulary: each term's id, numbered in order of first appearance."""

    def __init__(self, terms_of_piece: list[tuple[str, ...]]) -> None:
        self.counts = np.fromiter(map(len, terms_of_piece), dtype=np.int32, count=len(terms_of_piece))
        self.starts = np.zeros(len(terms_of_piece) + 1, dtype=np.int32)
        np.cumsum(self.counts, out=self.starts[1:])
        terms = list(chain.from_iterable(terms_of_piece))
        self.vocabulary = dict(zip(dict.fromkeys(terms), count()))
        self.terms = np.fromiter(map(self.vocabulary.__getitem__, terms), dtype=np.int32, count=len(terms))

    def expand(
        self, piece_ids: SmallIntArray, counts: SmallIntArray, entries: IntArray
    ) -> tuple[SmallIntArray, SmallIntArray, IntArray]:
        """(piece id, count) entries, `entries[d]` of them for skill `d`, as (term id, count) entries and the
        number of those per skill."""
        terms_per_piece = self.counts[piece_ids]
        terms_before = np.zeros(len(piece_ids) + 1, dtype=np.int32)
        np.cumsum(terms_per_piece, out=terms_before[1:])
        # Term k of the piece in entry i sits at starts[piece] + k; lay those out entry after entry.
        offsets = self.starts[piece_ids]
        offsets -= terms_before[:-1]
        positions = np.repeat(offsets, terms_per_piece)
        del offsets
        positions += np.arange(len(positions), dtype=np.int32)
        entries_before_skill = np.zeros(len(entries) + 1, dtype=np.int64)
        np.cumsum(entries, out=entries_before_skill[1:])
        term_entries = np.diff(terms_before[entries_before_skill]).astype(np.int64)
        return self.terms[positions], np.repeat(counts, terms_per_piece), term_entries


def indexed_text(document: SearchDocument, body_chars: int) -> tuple[str, str]:
    """What the index reads of a skill whose body it reads `body_chars` of, as two texts: the headline (name words,
    description, keywords and "When to use" sections) and the body, both without what the author says the skill is
    not for."""
    name, description, keywords, body, _ = _document_texts(document, body_chars)
    return f'{name}\n{description}\n{keywords}', body


def _document_texts(document: SearchDocument, body_chars: int) -> tuple[str, str, str, str, str]:
    body = document.body[:body_chars] if body_chars > 0 else ''
    # One scan of the body's headings serves both kinds of section (what `split_body` keeps has no heading it did not
    # see), and rules both out for most bodies.
    titles = heading_titles(body)
    body, body_negatives = split_body(body, titles)
    description, description_negatives = split_description(document.description)
    sections = when_to_use_sections(body, titles)
    keywords = ' '.join(filter(None, (document.keywords, *sections)))
    negatives = f'{description_negatives}\n{body_negatives}'
    return split_identifier(document.name), description, keywords, body, negatives


def top_hits(
    scores: npt.NDArray[np.float64], limit: int, threshold: float, named: Sequence[int] = ()
) -> list[tuple[int, float]]:
    """The `limit` best (position, score) pairs scoring above 0 and at least `threshold`, best first.

    The `named` positions (skills the query names) come first with score 1, the best scoring of them first.
    Ties keep document order, so results are reproducible.
    """
    if limit < 1 or not len(scores):
        return []
    if named:
        first = sorted(named, key=lambda position: -scores[position])[:limit]
        rest = [hit for hit in top_hits(scores, limit + len(first), threshold) if hit[0] not in first]
        return [(position, 1.0) for position in first] + rest[: limit - len(first)]
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
