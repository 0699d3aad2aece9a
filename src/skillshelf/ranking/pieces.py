"""Numbering the pieces of many texts at once, as an index build needs: every piece (see `tokenize.piece_bytes`) of
every text gets the id of the equal pieces, ids numbered in order of first appearance.

A library of 2,651 skills has 1.8 million pieces, 47,000 of them distinct. Split into bytes objects and numbered in
a dict, they cost 0.3 s; NumPy does the same in about a third of the time, and with no Python object per piece:

1. the texts are joined into one buffer, where a piece is a run of bytes other than the space;
2. each piece becomes a 128-bit key, its first 16 bytes (a longer piece, rare, is numbered in a dict and its number
   is its key);
3. a hash table with a slot per piece, filled and read in whole-array steps, finds for each piece one equal to it:
   the keys themselves are compared, so a hash collision cannot merge two pieces (it only costs another round);
4. the first place of each distinct piece orders the ids.

Texts are taken in batches of about `_BATCH_BYTES`, which bounds the memory the arrays take. Small batches are also
faster: their arrays and table fit the processor's caches, and memory the allocator keeps is reused from batch to
batch (8 MB batches took two to three times as much system time, most of it zeroing fresh pages).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .bm25 import IntArray, SmallIntArray
from .tokenize import piece_buffer

__all__ = ('NumberedPieces', 'number_pieces')

_BATCH_BYTES = 2**20
_PAD = 16
"""Spaces after the last piece: the key of a piece reads 16 bytes from its start."""
_SPACE = ord(' ')
_FIRST_BYTES = np.array([(1 << (8 * count)) - 1 for count in range(9)], dtype=np.uint64)
"""`_FIRST_BYTES[n]` keeps the first `n` bytes of a little-endian 64-bit word."""
_LONG = np.uint64(0xFF << 56)
"""The second word of a long piece's key: a 0xFF byte, which UTF-8 never holds."""
_KeyArray = npt.NDArray[np.uint64]


@dataclass(frozen=True)
class NumberedPieces:
    """The pieces of some texts, as ids."""

    ids: SmallIntArray
    """The id of each piece, text after text."""
    counts: IntArray
    """How many pieces each text has."""
    distinct: list[bytes]
    """The piece of each id."""


def number_pieces(texts: Iterable[str]) -> NumberedPieces:
    """Number the pieces of `texts`: equal pieces get the same id, the first piece seen 0, the next new one 1."""
    numbering: dict[bytes, int] = {}
    ids: list[SmallIntArray] = []
    counts: list[IntArray] = []
    for batch in _batches(map(piece_buffer, texts)):
        pieces = _numbered_in_a_table(batch)
        # The batch's own ids as ids of the whole: a dict lookup per distinct piece, not per piece.
        global_ids = [numbering.setdefault(piece, len(numbering)) for piece in pieces.distinct]
        ids.append(np.array(global_ids, dtype=np.int32)[pieces.ids])
        counts.append(pieces.counts)
    if not ids:
        return NumberedPieces(np.zeros(0, np.int32), np.zeros(0, np.int64), [])
    return NumberedPieces(np.concatenate(ids), np.concatenate(counts), list(numbering))


def _batches(buffers: Iterator[bytes]) -> Iterator[list[bytes]]:
    batch: list[bytes] = []
    size = 0
    for buffer in buffers:
        batch.append(buffer)
        size += len(buffer)
        if size >= _BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _hash(low: _KeyArray, high: _KeyArray) -> _KeyArray:
    """A 64-bit hash of each key, mixed (multiply and xor-shift) so that its high bits depend on every byte."""
    mixed = low * np.uint64(0x9E3779B97F4A7C15)
    mixed ^= high * np.uint64(0xC2B2AE3D27D4EB4F)
    mixed ^= mixed >> np.uint64(31)
    mixed *= np.uint64(0x94D049BB133111EB)
    mixed ^= mixed >> np.uint64(29)
    return mixed


def _numbered_in_a_table(
    buffers: list[bytes], hash_keys: Callable[[_KeyArray, _KeyArray], _KeyArray] = _hash
) -> NumberedPieces:
    """The numbering in NumPy (see the module's docstring)."""
    buffer = b' '.join(buffers) + b' ' * _PAD
    starts, ends = _piece_bounds(buffer)
    text_starts = np.zeros(len(buffers) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, buffers), dtype=np.int64, count=len(buffers)) + 1, out=text_starts[1:])
    counts = np.diff(np.searchsorted(starts, text_starts))
    low, high = _keys(buffer, starts, ends)
    count = len(starts)
    equal = _equal_pieces(low, high, hash_keys(low, high), lambda at: buffer[starts[at] : ends[at]])
    positions = np.arange(count, dtype=np.int32)
    first_of = np.full(count, count, dtype=np.int32)  # by the position `equal` gives a piece
    np.minimum.at(first_of, equal, positions)
    firsts = np.flatnonzero(first_of[equal] == positions)  # each distinct piece's first place, in order
    id_of = np.empty(count, dtype=np.int32)
    id_of[equal[firsts]] = np.arange(len(firsts), dtype=np.int32)
    ids = id_of[equal]
    distinct = [buffer[start:end] for start, end in zip(starts[firsts].tolist(), ends[firsts].tolist(), strict=True)]
    return NumberedPieces(ids, counts, distinct)


def _equal_pieces(low: _KeyArray, high: _KeyArray, hashed: _KeyArray, piece: Callable[[int], bytes]) -> SmallIntArray:
    """For each piece, the position of a piece equal to it (the same for all equal pieces), found in a hash table.

    Each round every unsettled piece is written to its slot of the table, one of those written to a slot stays, and
    every piece whose key is that one's is settled: at least one distinct piece per slot. A table with as many
    slots as pieces settles most pieces in the first round; the hashes of those left are mixed again for the next.
    Pieces left after `_ROUNDS` rounds (hashes built to collide) are settled in a dict.
    """
    count = len(low)
    bits = max(count.bit_length(), 1)
    table = np.empty(1 << bits, dtype=np.int32)
    equal = np.empty(count, dtype=np.int32)
    pending = np.arange(count, dtype=np.int32)
    pending_low, pending_high = low, high
    for _ in range(_ROUNDS):
        slots = (hashed >> np.uint64(64 - bits)).astype(np.intp)
        table[slots] = pending
        found = table[slots]
        same = low[found] == pending_low
        same &= high[found] == pending_high
        equal[pending[same]] = found[same]
        unsettled = np.flatnonzero(~same)
        if not len(unsettled):
            return equal
        pending, pending_low, pending_high = pending[unsettled], pending_low[unsettled], pending_high[unsettled]
        hashed = hashed[unsettled] * np.uint64(0x9E3779B97F4A7C15)
        hashed ^= hashed >> np.uint64(29)
    seen: dict[bytes, int] = {}
    equal[pending] = [seen.setdefault(piece(at), at) for at in pending.tolist()]
    return equal


_ROUNDS = 8
"""Rounds of the hash table before the pieces left are settled in a dict (two are usual)."""


def _piece_bounds(buffer: bytes) -> tuple[SmallIntArray, SmallIntArray]:
    """Where each piece of `buffer` starts and ends (`buffer` ends with a space)."""
    in_piece = np.frombuffer(buffer, dtype=np.uint8) != _SPACE
    edges = np.flatnonzero(in_piece[1:] ^ in_piece[:-1]).astype(np.int32)
    edges += 1
    if in_piece[0]:
        edges = np.concatenate((np.zeros(1, dtype=np.int32), edges))
    return np.ascontiguousarray(edges[0::2]), np.ascontiguousarray(edges[1::2])


def _keys(buffer: bytes, starts: SmallIntArray, ends: SmallIntArray) -> tuple[_KeyArray, _KeyArray]:
    """Each piece's key: its first and next 8 bytes as 64-bit words, bytes past its end 0 (no piece holds a 0 byte:
    the NUL character is a space). A piece longer than 16 bytes has its number in a dict of those pieces as first
    word and `_LONG` as the second, which no shorter piece has."""
    lengths = ends - starts
    # Every offset's next 8 bytes, as one unaligned 64-bit word: a view, no copy.
    words = np.ndarray((len(buffer) - 7,), dtype='<u8', buffer=buffer, strides=(1,))
    low = words[starts]
    low &= _FIRST_BYTES[np.minimum(lengths, 8)]
    high = np.zeros(len(starts), dtype=np.uint64)
    past_eight = np.flatnonzero(lengths > 8)  # a quarter of all pieces
    high[past_eight] = words[starts[past_eight] + 8] & _FIRST_BYTES[np.minimum(lengths[past_eight], 16) - 8]
    long = past_eight[lengths[past_eight] > 16]
    if len(long):
        numbering: dict[bytes, int] = {}
        long_bounds = zip(starts[long].tolist(), ends[long].tolist(), strict=True)
        low[long] = [numbering.setdefault(buffer[start:end], len(numbering)) for start, end in long_bounds]
        high[long] = _LONG
    return low, high
