"""The on-disk cache of large libraries' search indexes and skill embeddings.

Building the index of a large library means reading and tokenising every body, so the index of a library
with at least `CACHE_MIN_SKILLS` folder skills is saved and reused while its skills stay as they were: the
library names the file by a hash of everything the index covers (see `LibraryCache`). Hybrid search also
needs one embedding per skill, which takes seconds for the default model and money for an API embedder, so
the same libraries keep their skills' embeddings beside the index, in one file per library location and
model, each row under a hash of the text that was embedded: an edit re-embeds only the skills it changed.

Both files are NumPy `.npz` archives of plain arrays, loaded with `allow_pickle=False`, so nothing in them
is executed; a file that cannot be read or does not fit is ignored (and rewritten), never an error.

Where: `$SKILLSHELF_CACHE_DIR`, else `$XDG_CACHE_HOME/skillshelf`, else `~/.cache/skillshelf`.
Set `SKILLSHELF_CACHE_DIR=off` to turn the cache off.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..files import cache_directory, write_atomically
from .bm25 import BM25Matrix
from .lexical import RankingConfig, SkillIndex
from .semantic import Encoder

__all__ = (
    'CACHE_MIN_SKILLS',
    'LibraryCache',
    'StoredVectors',
    'library_cache',
    'load_index',
    'load_vectors',
    'save_index',
    'save_vectors',
)

CACHE_MIN_SKILLS = 200
"""Smaller libraries index in well under a tenth of a second; caching them would only litter the disk."""
_FORMAT = 7
"""Bump when the tokeniser, what is indexed or the index layout changes, so old cache files are not reused."""
_VECTOR_FORMAT = 3
"""Bump when what is embedded for a skill (`hybrid.document_text`) or the vector file layout changes."""
_UNREADABLE = (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile)
"""What reading a missing, truncated or foreign `.npz` file raises (a bad UTF-8 name is a `ValueError`)."""
_MATRICES = ('whole', 'head', 'negatives')
"""The BM25 matrices of a `SkillIndex`, in order."""


@dataclass(frozen=True)
class LibraryCache:
    """The cache files of one library's search."""

    directory: Path
    """The cache directory."""
    content_key: str
    """A hash of everything the index covers: any change gives another index file."""
    place_key: str
    """A hash of where the skills live: the embeddings file outlives edits, since it stores rows by text."""

    @property
    def index_file(self) -> Path:
        """The search index's file."""
        return self.directory / f'index-{self.content_key}.npz'

    def vectors_file(self, encoder: Encoder) -> Path:
        """The embeddings file for `encoder`; its name only spreads encoders over files: the model probe stored
        inside decides whether the vectors are reused (see `embeddings.py`)."""
        name = f'{getattr(encoder, "__module__", "")}.{getattr(encoder, "__qualname__", type(encoder).__qualname__)}'
        return self.directory / f'vectors-{_digest([_VECTOR_FORMAT, name, self.place_key])}.npz'


def library_cache(config: RankingConfig, content: Iterable[str], places: Iterable[str]) -> LibraryCache | None:
    """The cache files of a library whose index covers `content` (strings that change whenever what is indexed
    may change) and whose skills live in `places`; `None` when caching is off."""
    directory = cache_directory()
    if directory is None:
        return None
    digest = hashlib.sha256(json.dumps([_FORMAT, asdict(config)]).encode())
    for part in content:
        digest.update(b'\0' + part.encode('utf-8', 'surrogatepass'))
    return LibraryCache(directory, digest.hexdigest()[:32], _digest(sorted(places)))


def _digest(parts: object) -> str:
    return hashlib.sha256(json.dumps(parts).encode('utf-8', 'surrogatepass')).hexdigest()[:32]


def load_index(path: Path, config: RankingConfig) -> SkillIndex | None:
    """The index saved at `path`, or `None` if there is none or it is damaged: it must be rebuilt, not crash a run."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays: dict[str, npt.NDArray[Any]] = {name: data[name] for name in data.files}
        names, terms = _lines(arrays['names']), _lines(arrays['terms'])
        matrices = [
            BM25Matrix(arrays[f'{m}_starts'], arrays[f'{m}_docs'], arrays[f'{m}_weights'], len(names))
            for m in _MATRICES
        ]
    except _UNREADABLE:
        return None
    if not all(_consistent(matrix, len(terms)) for matrix in matrices):
        return None
    return SkillIndex.from_parts(names, {term: n for n, term in enumerate(terms)}, matrices, config)


def _consistent(matrix: BM25Matrix, n_terms: int) -> bool:
    """Whether a loaded matrix can be searched without an error."""
    starts, docs, weights = matrix.starts, matrix.docs, matrix.weights
    if (starts.dtype, docs.dtype, weights.dtype) != (np.int64, np.int32, np.float32):
        return False
    if starts.ndim != 1 or docs.ndim != 1 or weights.ndim != 1:
        return False
    if len(starts) != n_terms + 1 or starts[0] != 0 or starts[-1] != len(docs) or len(weights) != len(docs):
        return False
    if len(docs) and (int(docs.min()) < 0 or int(docs.max()) >= matrix.n_docs):
        return False
    return bool(np.all(starts[1:] >= starts[:-1]))


def save_index(path: Path, index: SkillIndex) -> None:
    """Save `index` to `path` atomically (a reader never sees half a file); a failure leaves no trace."""
    arrays: dict[str, npt.NDArray[Any]] = {'names': _text_array(index.names), 'terms': _text_array(index.vocabulary)}
    for label, matrix in zip(_MATRICES, index.matrices, strict=True):
        arrays[f'{label}_starts'] = matrix.starts
        arrays[f'{label}_docs'] = matrix.docs
        arrays[f'{label}_weights'] = matrix.weights
    write_atomically(path, lambda file: np.savez(file, allow_pickle=False, **arrays))


def _text_array(lines: Iterable[str]) -> npt.NDArray[np.uint8]:
    """`lines` as the bytes of their UTF-8 text, one line each: a fixed-width string array of a large vocabulary
    would be many times larger. A name holding a line break reads back as two, so the index is rebuilt."""
    return np.frombuffer('\n'.join(lines).encode('utf-8', 'surrogatepass'), dtype=np.uint8)


def _lines(text: npt.NDArray[Any]) -> list[str]:
    if text.dtype != np.uint8 or text.ndim != 1:
        raise ValueError('not a text array')
    return text.tobytes().decode('utf-8', 'surrogatepass').split('\n') if len(text) else []


@dataclass(frozen=True)
class StoredVectors:
    """What an embeddings file holds."""

    probe: npt.NDArray[np.float32]
    """The model's embedding of a fixed sentence when the file was written: identifies the model."""
    rows: dict[str, npt.NDArray[np.float32]]
    """Each skill's embedding, by a hash of the text that was embedded."""


def load_vectors(path: Path) -> StoredVectors | None:
    """The embeddings saved at `path`, or `None` if there are none or the file is damaged."""
    try:
        with np.load(path, allow_pickle=False) as data:
            probe = np.asarray(data['probe'], dtype=np.float32)
            keys = [str(key) for key in data['keys']]
            vectors = np.asarray(data['vectors'], dtype=np.float32)
    except _UNREADABLE:
        return None
    if probe.ndim != 1 or vectors.shape != (len(keys), len(probe)):
        return None
    return StoredVectors(probe, dict(zip(keys, vectors, strict=True)))


def save_vectors(path: Path, stored: StoredVectors) -> None:
    """Save embeddings to `path` atomically; a failure leaves no trace."""
    keys, vectors = np.array(list(stored.rows)), np.stack(list(stored.rows.values()))
    write_atomically(
        path, lambda file: np.savez(file, allow_pickle=False, probe=stored.probe, keys=keys, vectors=vectors)
    )
