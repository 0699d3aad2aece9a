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
batch (8 MB batches took two to three times as much system time, most of it zeroing fresh pages). The distinct
pieces of all batches are then numbered in one more table, by the same steps: a batch's ids become ids of the whole
by an array lookup, and only the pieces distinct in the whole become bytes objects.
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
_Hash = Callable[[_KeyArray, _KeyArray], _KeyArray]


@dataclass(frozen=True)
class NumberedPieces:
    """The pieces of some texts, as ids."""

    ids: SmallIntArray
    """The id of each piece, text after text."""
    counts: IntArray
    """How many pieces each text has."""
    distinct: list[bytes]
    """The piece of each id."""


def _hash(low: _KeyArray, high: _KeyArray) -> _KeyArray:
    """A 64-bit hash of each key, mixed (multiply and xor-shift) so that its high bits depend on every byte."""
    mixed = low * np.uint64(0x9E3779B97F4A7C15)
    mixed ^= high * np.uint64(0xC2B2AE3D27D4EB4F)
    mixed ^= mixed >> np.uint64(31)
    mixed *= np.uint64(0x94D049BB133111EB)
    mixed ^= mixed >> np.uint64(29)
    return mixed


def number_pieces(texts: Iterable[str]) -> NumberedPieces:
    """Number the pieces of `texts`: equal pieces get the same id, the first piece seen 0, the next new one 1."""
    return _numbered(_batches(map(piece_buffer, texts)))


def _numbered(batches: Iterable[list[bytes]], hash_keys: _Hash = _hash) -> NumberedPieces:
    """The numbering of the pieces of the texts `batches` give, batch after batch (see the module's docstring).

    Each batch numbers its own pieces in a table; the distinct pieces of all batches are then numbered the same way,
    which gives each batch's ids their ids in the whole.
    """
    long_pieces: dict[bytes, int] = {}
    numbered = [_numbered_batch(buffers, long_pieces, hash_keys) for buffers in batches]
    if not numbered:
        return NumberedPieces(np.zeros(0, np.int32), np.zeros(0, np.int64), [])
    low = np.concatenate([batch.low for batch in numbered])
    high = np.concatenate([batch.high for batch in numbered])
    global_ids, firsts = _first_appearances(_equal_pieces(low, high, hash_keys(low, high)))
    offsets = np.zeros(len(numbered) + 1, dtype=np.int64)
    np.cumsum([len(batch.low) for batch in numbered], out=offsets[1:])
    ids = np.empty(sum(len(batch.ids) for batch in numbered), dtype=np.int32)
    written = 0
    for batch, offset in zip(numbered, offsets[:-1].tolist(), strict=True):
        np.take(global_ids[offset : offset + len(batch.low)], batch.ids, out=ids[written : written + len(batch.ids)])
        written += len(batch.ids)
    batch_of_first: list[int] = (np.searchsorted(offsets, firsts, side='right') - 1).tolist()
    starts: list[int] = np.concatenate([batch.starts for batch in numbered])[firsts].tolist()
    ends: list[int] = np.concatenate([batch.ends for batch in numbered])[firsts].tolist()
    distinct = [
        numbered[batch].buffer[start:end] for batch, start, end in zip(batch_of_first, starts, ends, strict=True)
    ]
    return NumberedPieces(ids, np.concatenate([batch.counts for batch in numbered]), distinct)


@dataclass(frozen=True)
class _Batch:
    """The pieces of a batch of texts, numbered within the batch, and where its distinct pieces are."""

    ids: SmallIntArray
    """The batch's id of each piece, text after text."""
    counts: IntArray
    """How many pieces each text has."""
    low: _KeyArray
    """The key of each distinct piece (see `_keys`), in id order: its first word..."""
    high: _KeyArray
    """... and its second."""
    buffer: bytes
    """The distinct pieces, one after the other (the texts' buffer would keep 20 times the memory)."""
    starts: SmallIntArray
    """Where each distinct piece starts in `buffer`..."""
    ends: SmallIntArray
    """... and ends."""


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


def _numbered_batch(buffers: list[bytes], long_pieces: dict[bytes, int], hash_keys: _Hash) -> _Batch:
    """The pieces of `buffers` numbered in a table; `long_pieces` numbers the pieces too long for a key of their
    bytes, for every batch."""
    buffer = b' '.join(buffers) + b' ' * _PAD
    starts, ends = _piece_bounds(buffer)
    text_starts = np.zeros(len(buffers) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, buffers), dtype=np.int64, count=len(buffers)) + 1, out=text_starts[1:])
    counts = np.diff(np.searchsorted(starts, text_starts))
    low, high = _keys(buffer, starts, ends, long_pieces)
    ids, firsts = _first_appearances(_equal_pieces(low, high, hash_keys(low, high)))
    first_starts, lengths = starts[firsts], ends[firsts] - starts[firsts]
    places = np.zeros(len(firsts) + 1, dtype=np.int32)  # of the distinct pieces, one after the other
    np.cumsum(lengths, out=places[1:])
    offsets = np.repeat(first_starts - places[:-1], lengths)
    offsets += np.arange(len(offsets), dtype=np.int32)
    distinct = np.frombuffer(buffer, dtype=np.uint8)[offsets].tobytes()
    return _Batch(ids, counts, low[firsts], high[firsts], distinct, places[:-1], places[1:])


def _first_appearances(equal: SmallIntArray) -> tuple[SmallIntArray, npt.NDArray[np.intp]]:
    """From the position of a piece equal to each (see `_equal_pieces`), each piece's id (ids numbered in order of
    first appearance) and the first position of each id."""
    count = len(equal)
    positions = np.arange(count, dtype=np.int32)
    first_of = np.full(count, count, dtype=np.int32)  # by the position `equal` gives a piece
    np.minimum.at(first_of, equal, positions)
    firsts = np.flatnonzero(first_of[equal] == positions)
    id_of = np.empty(count, dtype=np.int32)
    id_of[equal[firsts]] = np.arange(len(firsts), dtype=np.int32)
    return id_of[equal], firsts


def _equal_pieces(low: _KeyArray, high: _KeyArray, hashed: _KeyArray) -> SmallIntArray:
    """For each piece, the position of a piece equal to it (the same for all equal pieces), found in a hash table.

    Each round every unsettled piece is written to its slot of the table, one of those written to a slot stays, and
    every piece whose key is that one's is settled: at least one distinct piece per slot. A table with as many
    slots as pieces settles most pieces in the first round; the hashes of those left are mixed again for the next.
    Pieces left after `_ROUNDS` rounds (hashes built to collide) are settled in a dict of their keys.
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
    seen: dict[tuple[int, int], int] = {}
    keys = zip(pending_low.tolist(), pending_high.tolist(), strict=True)
    equal[pending] = [seen.setdefault(key, at) for key, at in zip(keys, pending.tolist(), strict=True)]
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


def _keys(
    buffer: bytes, starts: SmallIntArray, ends: SmallIntArray, long_pieces: dict[bytes, int]
) -> tuple[_KeyArray, _KeyArray]:
    """Each piece's key: its first and next 8 bytes as 64-bit words, bytes past its end 0 (no piece holds a 0 byte:
    the NUL character is a space). A piece longer than 16 bytes has its number in `long_pieces` as first word and
    `_LONG` as the second, which no shorter piece has."""
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
        long_bounds = zip(starts[long].tolist(), ends[long].tolist(), strict=True)
        low[long] = [long_pieces.setdefault(buffer[start:end], len(long_pieces)) for start, end in long_bounds]
        high[long] = _LONG
    return low, high
