"""Building the search index of a library, with an on-disk cache for large folder libraries.

The index covers each skill's name, description, keywords and the start of its body. Bodies are read
when the index is built, on the first search, never when the library is discovered, so the catalog
still needs only the frontmatter. Building means reading and tokenising every body; for a large
library that is the slow part, so the index of a library with at least `CACHE_MIN_SKILLS` folder
skills is saved as a file of plain NumPy arrays (see `_array_file`: no pickle, one read to load) and
reused while no `SKILL.md` has changed: the cache key covers every skill's name, description and keywords,
and each `SKILL.md`'s path, size and modification time.

Hybrid search (`SearchEngine` with `hybrid=True`) also needs one embedding per skill. Embedding is the
slow part there (seconds for the bundled model, money for an API embedder), so the same libraries keep
their skills' embeddings in a `vectors-*.npz` file beside the index. Each row is stored under a hash of
the text that was embedded (name, description, keywords: see `_semantic.document_text`), so an edit
re-embeds only the skills whose text changed. The model's identity is checked on load by embedding a
fixed probe sentence and comparing it with the probe stored in the file: another model (or another
version of one) never reuses vectors, while an embedding API's tiny run-to-run noise still does.

Where: `$SKILLSHELF_CACHE_DIR`, else `$XDG_CACHE_HOME/skillshelf`, else `~/.cache/skillshelf`.
Set `SKILLSHELF_CACHE_DIR=off` to turn the cache off. A cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .._gc import gc_paused
from ..errors import SkillError, SkillFormatError
from ..files import write_atomically
from ..markdown.frontmatter import SKILL_FILE
from ..skill import FileStamp, Skill, file_stamp, folder_of
from .array_file import read_arrays, write_arrays
from .bm25 import BM25Matrix
from .lexical import RankingConfig, SearchDocument, SkillIndex
from .semantic import (
    DEFAULT_HYBRID_THRESHOLD,
    DEFAULT_LEXICAL_WEIGHT,
    Encoder,
    HybridIndex,
    document_text,
    shared_encoder,
    unit_rows,
)

__all__ = ('CACHE_MIN_SKILLS', 'SearchEngine', 'build_skill_index', 'cache_directory', 'index_cache_path')

CACHE_MIN_SKILLS = 200
"""Smaller libraries index in well under a tenth of a second; caching them would only litter the disk."""
_FORMAT = 5
"""Bump when the tokeniser, what is indexed or the index layout changes, so old cache files are not reused."""
_OFF = frozenset({'', '0', 'off', 'false', 'no', 'none'})
_VECTOR_FORMAT = 1
"""Bump when what is embedded for a skill (`document_text`) or the vector file layout changes."""
_PROBE = 'skillshelf model probe: find the skill that fills in a PDF form'
_SAME_MODEL = 0.99
"""Cosine the stored probe embedding must reach for the file's vectors to be reused."""
_UNREADABLE = (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile)


def cache_directory() -> Path | None:
    """Where index caches are kept, or `None` when caching is turned off."""
    configured = os.environ.get('SKILLSHELF_CACHE_DIR')
    if configured is not None:
        return None if configured.strip().lower() in _OFF else Path(configured).expanduser()
    base = os.environ.get('XDG_CACHE_HOME') or str(Path.home() / '.cache')
    return Path(base) / 'skillshelf'


@dataclass
class SearchEngine:
    """How a library ranks skills: lexical only, or hybrid with an encoder (the bundled model when `None`)."""

    hybrid: bool = False
    """Add embedding similarity to the lexical score."""
    encoder: Encoder | None = None
    """The embedding model; `None` means the bundled all-MiniLM-L6-v2, loaded at the first hybrid build."""
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    """Weight of the lexical score; the embedding similarity gets the rest."""
    _known: dict[str, npt.NDArray[np.float32]] = field(
        default_factory=dict[str, 'npt.NDArray[np.float32]'], init=False, repr=False, compare=False
    )

    def build(self, skills: Iterable[Skill[Any]], lexical: SkillIndex | None = None) -> SkillIndex | HybridIndex:
        """The index `search_skills` ranks with; a rebuild after an edit embeds only the changed skills.

        `lexical` is the lexical index of these `skills` if it is already built.
        """
        skills = list(skills)
        lexical = build_skill_index(skills) if lexical is None else lexical
        if not self.hybrid:
            return lexical
        encoder = self.encoder or shared_encoder()
        vectors = _embed(skills, encoder, self._known)
        return HybridIndex.from_parts(
            lexical, vectors, encoder, lexical_weight=self.lexical_weight, threshold=DEFAULT_HYBRID_THRESHOLD
        )


@gc_paused()
def build_skill_index(skills: Iterable[Skill[Any]], config: RankingConfig | None = None) -> SkillIndex:
    """The search index over `skills`, from the cache when it is current, else built (and cached)."""
    skills = list(skills)
    try:
        return _cached_or_built(skills, config or RankingConfig())
    finally:
        for skill in skills:  # what discovery kept of the bodies is for this build only
            skill._body_start = None  # pyright: ignore[reportPrivateUsage]


def _cached_or_built(skills: list[Skill[Any]], config: RankingConfig) -> SkillIndex:
    keywords = [skill.keywords for skill in skills]  # gathered from metadata once: the key and the text both need them
    path = _index_path(skills, keywords, config)
    if path is not None:
        cached = _load(path, config)
        if cached is not None and cached.names == [skill.name for skill in skills]:
            return cached
    body_chars = config.body_limit(len(skills))
    documents = [_document(skill, declared, body_chars) for skill, declared in zip(skills, keywords, strict=True)]
    index = SkillIndex(documents, config)
    if path is not None:
        _save(path, index)
    return index


def index_cache_path(skills: Iterable[Skill[Any]], config: RankingConfig | None = None) -> Path | None:
    """The file the search index of `skills` is cached in, or `None` when it is not cached (caching is off,
    or the library has fewer than `CACHE_MIN_SKILLS` folder skills). The file exists once the index is built."""
    skills = list(skills)
    return _index_path(skills, [skill.keywords for skill in skills], config or RankingConfig())


def _index_path(skills: list[Skill[Any]], keywords: list[str], config: RankingConfig) -> Path | None:
    directory = cache_directory()
    if directory is None or _folder_skills(skills) < CACHE_MIN_SKILLS:
        return None
    return directory / f'index-{_cache_key(skills, keywords, config)}.arrays'


def _folder_skills(skills: list[Skill[Any]]) -> int:
    return sum(1 for skill in skills if folder_of(skill) is not None)


def _document(skill: Skill[Any], keywords: str, body_chars: int) -> SearchDocument:
    """The skill's searchable text; only the indexed start of the body is kept, so memory stays bounded.

    The body comes from discovery's read of the `SKILL.md` when that read kept enough of it: the same read
    the cache key's stamp describes, and one file opening fewer per skill.
    """
    body_start = skill._body_start  # pyright: ignore[reportPrivateUsage]
    body = None if body_start is None or body_chars <= 0 else body_start.first(body_chars)
    if body is None:
        try:
            body = skill.load_instructions(body_chars) if body_chars > 0 else ''
        except (SkillFormatError, OSError):
            body = ''
    return SearchDocument(skill.name, skill.description, keywords, body)


def _cache_key(skills: list[Skill[Any]], keywords: list[str], config: RankingConfig) -> str:
    digest = hashlib.sha256(json.dumps([_FORMAT, asdict(config)]).encode())
    for skill, declared in zip(skills, keywords, strict=True):
        digest.update(f'\0{skill.name}\0{skill.description}\0{declared}\0'.encode())
        folder = folder_of(skill)
        if folder is None:
            digest.update(hashlib.sha256(skill.load_instructions().encode()).digest())
            continue
        # Discovery's stamp saves a `stat` per skill; a file edited since then is seen by `SkillLibrary.refresh`,
        # which drops the index.
        stamp = skill._stamp or _stamp(folder)  # pyright: ignore[reportPrivateUsage]
        digest.update(b'unreadable' if stamp is None else '{}\0{}\0{}'.format(*stamp).encode())
    return digest.hexdigest()[:32]


def _stamp(folder: str) -> FileStamp | None:
    skill_file = os.path.join(folder, SKILL_FILE)
    try:
        return file_stamp(os.path.abspath(skill_file), os.stat(skill_file))
    except OSError:
        return None


def _load(path: Path, config: RankingConfig) -> SkillIndex | None:
    try:
        data = read_arrays(path)
        names, terms = _lines(data['names']), _lines(data['terms'])
        matrices = [
            BM25Matrix(data[f'{m}_starts'], data[f'{m}_docs'], data[f'{m}_weights'], len(names))
            for m in ('whole', 'head')
        ]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not all(_consistent(matrix, len(terms)) for matrix in matrices):
        return None
    return SkillIndex.from_parts(names, {term: n for n, term in enumerate(terms)}, matrices, config)


def _consistent(matrix: BM25Matrix, n_terms: int) -> bool:
    """Whether a loaded matrix can be searched without an error: a damaged file must be rebuilt, not crash a run."""
    starts, docs, weights = matrix.starts, matrix.docs, matrix.weights
    if len(starts) != n_terms + 1 or starts[0] != 0 or starts[-1] != len(docs) or len(weights) != len(docs):
        return False
    if len(docs) and (int(docs.min()) < 0 or int(docs.max()) >= matrix.n_docs):
        return False
    return bool(np.all(starts[1:] >= starts[:-1]))


def _save(path: Path, index: SkillIndex) -> None:
    arrays: dict[str, npt.NDArray[np.generic]] = {
        'names': _text_array(index.names),
        'terms': _text_array(index.vocabulary),
    }
    for label, matrix in zip(('whole', 'head'), index.matrices, strict=True):
        arrays[f'{label}_starts'] = matrix.starts
        arrays[f'{label}_docs'] = matrix.docs
        arrays[f'{label}_weights'] = matrix.weights
    write_arrays(path, arrays)


def _text_array(lines: Iterable[str]) -> npt.NDArray[np.uint8]:
    """`lines` (none holding a line break) as the bytes of their UTF-8 text, one line each."""
    return np.frombuffer('\n'.join(lines).encode('utf-8', 'surrogatepass'), dtype=np.uint8)


def _lines(text: npt.NDArray[np.uint8]) -> list[str]:
    return text.tobytes().decode('utf-8', 'surrogatepass').split('\n') if len(text) else []


def _embed(
    skills: list[Skill[Any]], encoder: Encoder, known: dict[str, npt.NDArray[np.float32]]
) -> npt.NDArray[np.float32]:
    """One unit-length embedding per skill, in order: from `known`, else the vector cache, else `encoder`.

    `known` (the engine's memory of earlier builds) is left holding exactly these skills' rows.
    """
    texts = [document_text(SearchDocument(skill.name, skill.description, skill.keywords)) for skill in skills]
    keys = [hashlib.sha256(text.encode()).hexdigest()[:32] for text in texts]
    rows = {key: known[key] for key in keys if key in known}
    path, probe = None, None
    if len(rows) < len(set(keys)) and (path := _vector_path(skills, encoder)) is not None:
        probe = _encode(encoder, [_PROBE])
        cached = _load_vectors(path, probe[0])
        rows.update((key, cached[key]) for key in keys if key in cached and key not in rows)
    missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in rows}
    if missing:
        rows.update(zip(missing, _encode(encoder, list(missing.values())), strict=True))
        if path is not None and probe is not None:
            _save_vectors(path, probe[0], {key: rows[key] for key in keys})
    known.clear()
    known.update((key, rows[key]) for key in keys)
    if not keys:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([rows[key] for key in keys])


def _encode(encoder: Encoder, texts: list[str]) -> npt.NDArray[np.float32]:
    try:
        vectors = unit_rows(encoder(texts))
    except (TypeError, ValueError) as error:
        raise SkillError(f'the search encoder must return one row of numbers per text ({error})') from error
    if vectors.ndim != 2 or len(vectors) != len(texts) or vectors.shape[1] == 0:
        raise SkillError(
            f'the search encoder returned an array of shape {vectors.shape} for {len(texts)} texts; '
            'it must return one embedding row per text, like sentence-transformers `encode`'
        )
    return vectors


def _vector_path(skills: list[Skill[Any]], encoder: Encoder) -> Path | None:
    """The vector cache file of these skills' directories and this encoder, or `None` when not cached."""
    directory = cache_directory()
    folders = sorted({os.path.abspath(os.path.dirname(folder)) for skill in skills if (folder := folder_of(skill))})
    if directory is None or _folder_skills(skills) < CACHE_MIN_SKILLS:
        return None
    # The encoder's name only spreads encoders over files; the stored probe decides whether vectors are reused.
    name = f'{getattr(encoder, "__module__", "")}.{getattr(encoder, "__qualname__", type(encoder).__qualname__)}'
    digest = hashlib.sha256(json.dumps([_VECTOR_FORMAT, name, folders]).encode()).hexdigest()[:32]
    return directory / f'vectors-{digest}.npz'


def _load_vectors(path: Path, probe: npt.NDArray[np.float32]) -> dict[str, npt.NDArray[np.float32]]:
    """The cached rows by text hash, or nothing if the file is unreadable or was written by another model."""
    try:
        with np.load(path, allow_pickle=False) as data:
            stored_probe = np.asarray(data['probe'], dtype=np.float32)
            keys = [str(key) for key in data['keys']]
            vectors = np.asarray(data['vectors'], dtype=np.float32)
    except _UNREADABLE:
        return {}
    if stored_probe.shape != probe.shape or vectors.shape != (len(keys), len(probe)):
        return {}
    if float(stored_probe @ probe) < _SAME_MODEL:
        return {}
    return dict(zip(keys, vectors, strict=True))


def _save_vectors(path: Path, probe: npt.NDArray[np.float32], rows: dict[str, npt.NDArray[np.float32]]) -> None:
    keys, vectors = np.array(list(rows)), np.stack(list(rows.values()))
    write_atomically(path, lambda file: np.savez(file, probe=probe, keys=keys, vectors=vectors))
