"""The index numbers its pieces in NumPy: the ids must be exactly those of the plain numbering in a dict."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillshelf.ranking import pieces
from skillshelf.ranking.pieces import NumberedPieces, number_pieces
from skillshelf.ranking.tokenize import piece_buffer, piece_bytes

Keys = npt.NDArray[np.uint64]

WORDS = st.sampled_from(['pdf', 'PDF', 'forms', "don't", 'naïve', '代码审查', '', ' ', '\u00a0', '-', '\ud800', '🙂'])
"""Pieces that differ in their 8th, 9th, 16th or 17th byte, and pieces longer than 16 bytes."""
LONG = st.sampled_from(['abcdefgh', 'abcdefgi', 'abcdefghijklmnop', 'abcdefghijklmnoq', 'abcdefghijklmnopq', 'x' * 40])
TEXTS = st.lists(st.lists(st.one_of(WORDS, LONG, st.text(max_size=30))).map(' '.join), max_size=12)


def by_dict(texts: list[str]) -> NumberedPieces:
    numbering: dict[bytes, int] = {}
    ids = [numbering.setdefault(piece, len(numbering)) for text in texts for piece in piece_bytes(text)]
    counts = [len(piece_bytes(text)) for text in texts]
    return NumberedPieces(np.array(ids, dtype=np.int32), np.array(counts, dtype=np.int64), list(numbering))


def assert_same(numbered: NumberedPieces, expected: NumberedPieces) -> None:
    assert numbered.ids.tolist() == expected.ids.tolist()
    assert numbered.counts.tolist() == expected.counts.tolist()
    assert numbered.distinct == expected.distinct


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_the_pieces_are_numbered_as_a_dict_numbers_them(texts: list[str]) -> None:
    assert_same(number_pieces(texts), by_dict(texts))


def _weak_hash(low: Keys, high: Keys) -> Keys:
    return low.copy()  # pieces that differ only after their 8th byte collide


def _constant_hash(low: Keys, high: Keys) -> Keys:
    return np.zeros_like(low)  # every piece collides with every other, in every round


def in_a_table(texts: list[str], hash_keys: Callable[[Keys, Keys], Keys]) -> NumberedPieces:
    return pieces._numbered([[piece_buffer(text) for text in texts]], hash_keys)  # pyright: ignore[reportPrivateUsage]


def a_batch_each(texts: list[str], hash_keys: Callable[[Keys, Keys], Keys]) -> NumberedPieces:
    return pieces._numbered([[piece_buffer(text)] for text in texts], hash_keys)  # pyright: ignore[reportPrivateUsage]


COLLIDING = [
    'fill the pdf form',
    'the form of a pdf',
    'abcdefghijklmnopqrstuvwxyz abcdefghijklmnopqrstuvwxyZ',
    'configuration configurable configuration',
]


@pytest.mark.parametrize('hash_keys', [_weak_hash, _constant_hash])
def test_a_hash_collision_never_merges_two_pieces(hash_keys: Callable[[Keys, Keys], Keys]) -> None:
    assert_same(in_a_table(COLLIDING, hash_keys), by_dict(COLLIDING))
    assert_same(a_batch_each(COLLIDING, hash_keys), by_dict(COLLIDING))


@settings(max_examples=100, deadline=None)
@given(TEXTS)
def test_pieces_left_after_the_last_round_are_numbered_in_a_dict(texts: list[str]) -> None:
    # With one slot for all, each round settles one distinct piece: most texts here outlast the rounds.
    assert_same(in_a_table(texts, _constant_hash), by_dict(texts))


@settings(max_examples=200, deadline=None)
@given(TEXTS)
def test_batches_share_one_numbering(texts: list[str]) -> None:
    # A text a batch: the numbering across batches decides every id, long pieces' included.
    assert_same(a_batch_each(texts, pieces._hash), by_dict(texts))  # pyright: ignore[reportPrivateUsage]


def test_texts_past_one_batch_share_their_numbering() -> None:
    line = ' '.join(f'word{n}' for n in range(2_000))
    texts = [line] * (pieces._BATCH_BYTES // len(line) + 50) + ['word7 fresh']  # pyright: ignore[reportPrivateUsage]
    numbered = number_pieces(texts)
    assert len(numbered.distinct) == 2_001
    assert numbered.ids[-2:].tolist() == [7, 2_000]
    assert numbered.counts.sum() == len(numbered.ids) == 2_000 * (len(texts) - 1) + 2


def test_no_texts_and_no_pieces() -> None:
    assert_same(number_pieces([]), by_dict([]))
    assert_same(number_pieces(['', '  --  ', '']), by_dict(['', '  --  ', '']))


def test_long_pieces_never_share_a_key_with_short_ones() -> None:
    # The 98th long piece is numbered 97, the first word of the short piece 'a' (0x61): the second word tells them apart.
    texts = [' '.join(f'a-much-longer-piece-{n:03d}'.replace('-', '') for n in range(300)), 'a b ab ~ é']
    assert_same(number_pieces(texts), by_dict(texts))
