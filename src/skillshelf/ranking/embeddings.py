"""Skill embeddings for hybrid search, reused across index rebuilds and processes.

Each row is kept under a hash of the text that was embedded, so a rebuild after an edit embeds only the
skills whose text changed: from memory within a process, from the cache file (see `cache.py`) across
processes. The model's identity is checked on load by embedding a fixed probe sentence and comparing it
with the probe stored in the file: another model (or another version of one) never reuses vectors, while
an embedding API's tiny run-to-run noise still does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from .cache import StoredVectors, load_vectors, save_vectors
from .semantic import Encoder, embed

__all__ = ('Embeddings',)

_PROBE = 'skillshelf model probe: find the skill that fills in a PDF form'
_SAME_MODEL = 0.99
"""Cosine the stored probe embedding must reach for the file's vectors to be reused."""


class Embeddings:
    """The embeddings of one library's skills, remembered from its last build."""

    def __init__(self) -> None:
        self._rows: dict[str, npt.NDArray[np.float32]] = {}

    def of(self, texts: Sequence[str], encoder: Encoder, file: Path | None) -> npt.NDArray[np.float32]:
        """One unit-length embedding per text, in order: remembered, else from `file`, else from `encoder`
        (and then saved to `file`). Afterwards exactly these texts' rows are remembered.

        Raises:
            SkillError: the encoder returned something other than one row per text.
        """
        keys = [hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:32] for text in texts]
        rows = {key: self._rows[key] for key in keys if key in self._rows}
        probe = None
        if len(rows) < len(set(keys)) and file is not None:
            probe = embed(encoder, [_PROBE])[0]
            stored = load_vectors(file)
            if stored is not None and _same_model(stored.probe, probe):
                rows.update((key, stored.rows[key]) for key in keys if key in stored.rows and key not in rows)
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in rows}
        if missing:
            rows.update(zip(missing, embed(encoder, list(missing.values())), strict=True))
            if file is not None and probe is not None:
                save_vectors(file, StoredVectors(probe, {key: rows[key] for key in keys}))
        self._rows = {key: rows[key] for key in keys}
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([rows[key] for key in keys])


def _same_model(stored: npt.NDArray[np.float32], probe: npt.NDArray[np.float32]) -> bool:
    return stored.shape == probe.shape and float(stored @ probe) >= _SAME_MODEL
