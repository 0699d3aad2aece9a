"""Building the search index of a library, with an on-disk cache for large folder libraries.

The index covers each skill's name, description, keywords and the start of its body. Bodies are read
when the index is built, on the first search, never when the library is discovered, so the catalog
still needs only the frontmatter. Building means reading and tokenising every body; for a large
library that is the slow part, so the index of a library with at least `CACHE_MIN_SKILLS` folder
skills is saved as a plain `.npz` file (NumPy arrays, no pickle) and reused while no `SKILL.md` has
changed: the cache key covers every skill's name, description and keywords, and each `SKILL.md`'s path,
size and modification time.

Where: `$SKILLSHELF_CACHE_DIR`, else `$XDG_CACHE_HOME/skillshelf`, else `~/.cache/skillshelf`.
Set `SKILLSHELF_CACHE_DIR=off` to turn the cache off. A cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from ._bm25 import BM25Matrix
from ._errors import SkillFormatError
from ._markdown import SKILL_FILE
from ._search import RankingConfig, SearchDocument, SkillIndex
from ._skill import Skill

__all__ = ('CACHE_MIN_SKILLS', 'build_skill_index', 'cache_directory')

CACHE_MIN_SKILLS = 200
"""Smaller libraries index in well under a tenth of a second; caching them would only litter the disk."""
_FORMAT = 2
"""Bump when the tokeniser or the index layout changes, so old cache files are not reused."""
_OFF = frozenset({'', '0', 'off', 'false', 'no', 'none'})


def cache_directory() -> Path | None:
    """Where index caches are kept, or `None` when caching is turned off."""
    configured = os.environ.get('SKILLSHELF_CACHE_DIR')
    if configured is not None:
        return None if configured.strip().lower() in _OFF else Path(configured).expanduser()
    base = os.environ.get('XDG_CACHE_HOME') or str(Path.home() / '.cache')
    return Path(base) / 'skillshelf'


def build_skill_index(skills: Iterable[Skill[Any]], config: RankingConfig | None = None) -> SkillIndex:
    """The search index over `skills`, from the cache when it is current, else built (and cached)."""
    skills = list(skills)
    config = config or RankingConfig()
    directory = cache_directory()
    folder_skills = sum(1 for skill in skills if skill.folder is not None)
    path = None
    if directory is not None and folder_skills >= CACHE_MIN_SKILLS:
        path = directory / f'index-{_cache_key(skills, config)}.npz'
        cached = _load(path, config)
        if cached is not None and cached.names == [skill.name for skill in skills]:
            return cached
    body_chars = config.body_limit(len(skills))
    index = SkillIndex([_document(skill, body_chars) for skill in skills], config)
    if path is not None:
        _save(path, index)
    return index


def _document(skill: Skill[Any], body_chars: int) -> SearchDocument:
    """The skill's searchable text; only the indexed start of the body is kept, so memory stays bounded."""
    try:
        body = skill.load_instructions()[:body_chars] if body_chars > 0 else ''
    except (SkillFormatError, OSError):
        body = ''
    return SearchDocument(skill.name, skill.description, skill.keywords, body)


def _cache_key(skills: list[Skill[Any]], config: RankingConfig) -> str:
    digest = hashlib.sha256(json.dumps([_FORMAT, asdict(config)]).encode())
    for skill in skills:
        digest.update(f'\0{skill.name}\0{skill.description}\0{skill.keywords}\0'.encode())
        if skill.folder is None:
            digest.update(hashlib.sha256(skill.load_instructions().encode()).digest())
            continue
        path = os.path.abspath(skill.folder / SKILL_FILE)
        try:
            info = os.stat(path)
            digest.update(f'{path}\0{info.st_size}\0{info.st_mtime_ns}'.encode())
        except OSError:
            digest.update(b'unreadable')
    return digest.hexdigest()[:32]


def _load(path: Path, config: RankingConfig) -> SkillIndex | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            names = str(data['names'][()]).split('\n') if int(data['n_docs']) else []
            terms = str(data['terms'][()]).split('\n') if int(data['n_terms']) else []
            matrices = [
                BM25Matrix(data[f'{m}_starts'], data[f'{m}_docs'], data[f'{m}_weights'], int(data['n_docs']))
                for m in ('whole', 'head')
            ]
    except (OSError, KeyError, ValueError):
        return None
    return SkillIndex.from_parts(names, {term: n for n, term in enumerate(terms)}, matrices, config)


def _save(path: Path, index: SkillIndex) -> None:
    arrays: dict[str, Any] = {
        'names': np.array('\n'.join(index.names)),
        'terms': np.array('\n'.join(index.vocabulary)),
        'n_docs': np.array(len(index.names)),
        'n_terms': np.array(len(index.vocabulary)),
    }
    for label, matrix in zip(('whole', 'head'), index.matrices, strict=True):
        arrays[f'{label}_starts'] = matrix.starts
        arrays[f'{label}_docs'] = matrix.docs
        arrays[f'{label}_weights'] = matrix.weights
    temporary: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix='.tmp', delete=False) as file:
            temporary = file.name
            np.savez(file, **arrays)
        os.replace(temporary, path)
    except OSError:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
