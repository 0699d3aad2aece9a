"""A file of named NumPy arrays that loads with one read and no copies: the search-index cache's format.

An `.npz` file is a zip archive: loading one reads each array through `zipfile` in small pieces and
checks its CRC, which took 7-11 ms of a 70 ms warm start at 2,651 skills (this takes under 1 ms).
Here a short JSON header lists each array's name, dtype, length and offset, and the arrays follow as
raw bytes, so loading is one read and one `np.frombuffer` view per array. Only plain numeric dtypes are
stored, and a header that does not describe the file exactly is refused: nothing in it is executed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from ..files import write_atomically

__all__ = ('read_arrays', 'write_arrays')

_MAGIC = b'skillshelf arrays 1\n'
_LENGTH_BYTES = 8
_ALIGNMENT = 8
_DTYPES = frozenset({'<i8', '<i4', '<f4', '|u1'})


def write_arrays(path: Path, arrays: dict[str, npt.NDArray[np.generic]]) -> None:
    """Save one-dimensional `arrays` to `path` atomically (a reader never sees half a file); failures leave no trace.

    Raises:
        ValueError: an array's dtype is not one of the stored kinds (64- and 32-bit integers, 32-bit floats, bytes).
    """
    stored = {name: _stored(array) for name, array in arrays.items()}
    specs: list[tuple[str, str, int, int]] = []
    offset = 0
    for name, (dtype, array) in stored.items():
        specs.append((name, dtype, len(array), offset))
        offset = _aligned(offset + array.nbytes)
    header = json.dumps(specs).encode()
    start = _aligned(len(_MAGIC) + _LENGTH_BYTES + len(header))

    def write(file: IO[bytes]) -> None:
        file.write(_MAGIC + len(header).to_bytes(_LENGTH_BYTES, 'little') + header)
        for (_, _, _, array_offset), (_, array) in zip(specs, stored.values(), strict=True):
            file.write(b'\0' * (start + array_offset - file.tell()))
            file.write(array.data)

    write_atomically(path, write)


def read_arrays(path: Path) -> dict[str, npt.NDArray[Any]]:
    """The arrays saved at `path`, as read-only views of the file's bytes.

    Raises:
        OSError: the file cannot be read.
        ValueError: it is not such a file, or its header does not fit its contents.
    """
    raw = path.read_bytes()
    if not raw.startswith(_MAGIC):
        raise ValueError(f'{path} is not a skillshelf array file')
    header_start = len(_MAGIC) + _LENGTH_BYTES
    header_length = int.from_bytes(raw[len(_MAGIC) : header_start], 'little')
    specs: Any = json.loads(raw[header_start : header_start + header_length])
    start = _aligned(header_start + header_length)
    arrays: dict[str, npt.NDArray[Any]] = {}
    for name, dtype, count, offset in specs:
        if dtype not in _DTYPES or not isinstance(count, int) or not isinstance(offset, int) or count < 0:
            raise ValueError(f'{path}: a bad array entry in the header')
        if offset < 0 or start + offset + count * np.dtype(dtype).itemsize > len(raw):
            raise ValueError(f'{path}: the array {name!r} runs past the end of the file')
        arrays[str(name)] = np.frombuffer(raw, dtype=dtype, count=count, offset=start + offset)
    return arrays


def _stored(array: npt.NDArray[np.generic]) -> tuple[str, npt.NDArray[Any]]:
    """The array's dtype as stored (little-endian whatever the machine) and its data in that dtype."""
    dtype = f'{"|" if array.dtype.itemsize == 1 else "<"}{array.dtype.kind}{array.dtype.itemsize}'
    if dtype not in _DTYPES:
        raise ValueError(f'an array of {array.dtype} cannot be stored')
    return dtype, np.ascontiguousarray(array, dtype=np.dtype(dtype))


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGNMENT) * _ALIGNMENT
