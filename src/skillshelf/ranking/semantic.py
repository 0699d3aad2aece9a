"""Sentence embeddings for hybrid search: the encoder contract and the default model (`skillshelf[semantic]`).

An `Encoder` turns texts into one embedding row each. The default one is
[sentence-transformers/all-MiniLM-L6-v2](https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2), the ONNX
export in its publisher's repository pinned at one revision (`MODEL_REVISION`), run by fastembed (onnxruntime; no
PyTorch). Its files (about 90 MB) are downloaded on first use into the Hugging Face cache, which `HF_HOME` or
`HF_HUB_CACHE` moves and `HF_HUB_OFFLINE=1` keeps from going online; after that it loads offline. Where it cannot
be downloaded, `load_encoder(folder)` runs a copy of the repository's files from a folder:

    hf download sentence-transformers/all-MiniLM-L6-v2 --revision c9745ed1d9f207416be6d2e6f8de32d1f16199bf \\
        --local-dir ./minilm onnx/model.onnx tokenizer.json tokenizer_config.json special_tokens_map.json \\
        config.json sentence_bert_config.json

    Skills(search='hybrid', encoder=load_encoder('./minilm'))

Any other model is an encoder too, e.g. one of fastembed's:

    model = fastembed.TextEmbedding('BAAI/bge-small-en-v1.5')
    Skills(encoder=lambda texts: np.array(list(model.embed(texts))))

`Skills(search='hybrid')` checks that the extra is installed at construction (`check_available`, which finds the
packages without importing them) and loads the model at the first search (`shared_encoder`, once per process), so
runs that never search never load it; if it cannot be loaded, that search ranks lexically with a warning. How
embeddings and BM25 are fused is `hybrid.py`'s concern.
"""

from __future__ import annotations

import json
import os
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
    'MODEL_FILES',
    'MODEL_ID',
    'MODEL_REVISION',
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

MODEL_ID = 'sentence-transformers/all-MiniLM-L6-v2'
"""The default model's Hugging Face repository."""
MODEL_REVISION = 'c9745ed1d9f207416be6d2e6f8de32d1f16199bf'
"""The commit of `MODEL_ID` that is downloaded: the vectors, and so the rankings, depend on the exact weights."""
MODEL_FILES = ('onnx/model.onnx', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'config.json')
"""The files of the repository that are downloaded; a model folder needs the first three."""
_SEQUENCE_CONFIG = 'sentence_bert_config.json'
"""sentence-transformers' own settings, when a folder has them: the length the model reads (all-MiniLM-L6-v2 was
trained on 256 word pieces; its tokenizer would allow 512)."""
_REQUIRED_FILES = MODEL_FILES[:3]
_EXTRA_MODULES = ('fastembed', 'huggingface_hub')

MISSING_EXTRA = (
    "semantic search needs the optional extra: pip install 'skillshelf[semantic]' "
    '(fastembed, which runs the embedding model with onnxruntime; no PyTorch); '
    'the default lexical search needs none of it'
)

_FASTEMBED_NAME = 'skillshelf/sentence-transformers-onnx'
"""What fastembed knows a model folder by: an ONNX export at `onnx/model.onnx`, mean pooling, unit rows. fastembed's
own `sentence-transformers/all-MiniLM-L6-v2` is another export (Qdrant's), laid out differently."""
_BATCH = 8
"""Texts per model call: on a CPU small batches of texts of similar length are fastest, having little padding."""

_DOWNLOAD_COMMAND = (
    f'hf download {MODEL_ID} --revision {MODEL_REVISION} --local-dir DIR {" ".join((*MODEL_FILES, _SEQUENCE_CONFIG))}'
)


class SemanticUnavailableError(SkillError):
    """The `[semantic]` extra is not installed, or the embedding model is neither on this machine nor downloadable."""


def check_available() -> None:
    """Fail now, not at the first search, when the `[semantic]` extra is missing; imports nothing (that takes seconds).

    Raises:
        SemanticUnavailableError: fastembed or huggingface_hub is not installed.
    """
    if any(find_spec(module) is None for module in _EXTRA_MODULES):
        raise SemanticUnavailableError(MISSING_EXTRA)


_shared: list[Encoder] = []
_shared_lock = threading.Lock()


def shared_encoder() -> Encoder:
    """The default model, loaded on first use and then shared by every library in the process.

    Raises:
        SemanticUnavailableError: the `[semantic]` extra is not installed, or the model is not in the cache and
            cannot be downloaded (a later call tries again).
    """
    with _shared_lock:
        if not _shared:
            _shared.append(load_encoder())
        return _shared[0]


def load_encoder(folder: str | os.PathLike[str] | None = None) -> Encoder:
    """all-MiniLM-L6-v2 (`MODEL_ID` at `MODEL_REVISION`) as an `Encoder`, from the Hugging Face cache, downloaded
    there first if missing; or the model whose files `folder` holds, laid out as in its Hugging Face repository
    (`onnx/model.onnx`, `tokenizer.json`, `tokenizer_config.json`: an ONNX export of a sentence-transformers model
    with mean pooling). Loading takes a second or two; pass the result to as many libraries as you like.

    Raises:
        SemanticUnavailableError: the `[semantic]` extra is not installed; the model is neither in the cache nor
            downloadable; `folder` lacks one of the files; or they do not load.
    """
    try:
        from fastembed import TextEmbedding
    except ImportError as error:
        raise SemanticUnavailableError(MISSING_EXTRA) from error
    model_folder = _checked_folder(_cached_or_downloaded() if folder is None else Path(folder))
    _register_layout()
    try:
        # cache_dir: fastembed creates it even when told where the model is; the folder exists already.
        model = TextEmbedding(_FASTEMBED_NAME, cache_dir=str(model_folder), specific_model_path=str(model_folder))
        _read_as_trained(model, model_folder)
        width = len(next(iter(model.embed(['probe']))))
    except Exception as error:  # onnxruntime's and the tokenizer's errors have no common base
        raise SemanticUnavailableError(f'the embedding model in {model_folder} does not load: {error}') from error

    def encode(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = np.zeros((len(texts), width), dtype=np.float32)
        # Texts of similar length share a batch, so little of each batch is padding.
        order = sorted(range(len(texts)), key=lambda position: len(texts[position]))
        rows = list(model.embed([texts[position] for position in order], batch_size=_BATCH))
        if rows:
            vectors[order] = np.stack(rows)
        return vectors

    return encode


def _cached_or_downloaded() -> Path:
    """The folder of `MODEL_FILES` in the Hugging Face cache: found there, else downloaded into it."""
    cache = _hub_cache()
    try:
        return _snapshot(cache, local_files_only=True)
    except FileNotFoundError:  # huggingface_hub's LocalEntryNotFoundError: not in the cache
        pass
    reason = 'HF_HUB_OFFLINE is set'
    if not _offline():
        try:
            return _snapshot(cache, local_files_only=False)
        except Exception as error:  # no network, a proxy, the hub down, a full disk: all end the same way here
            reason = f'{type(error).__name__}: {error}'
    raise SemanticUnavailableError(
        f'the embedding model {MODEL_ID} (revision {MODEL_REVISION}) is not in the Hugging Face cache ({cache}) '
        f'and could not be downloaded ({reason}). Either connect to the internet once, to download it there (about '
        '90 MB); or set HF_HOME to a Hugging Face cache that holds it; or download its files into a folder and give '
        f'`Skills` the encoder `skillshelf.ranking.semantic.load_encoder(folder)`: {_DOWNLOAD_COMMAND}'
    )


def _snapshot(cache: str, *, local_files_only: bool) -> Path:
    # An untyped dict in its signature makes it partially unknown to pyright.
    from huggingface_hub import snapshot_download  # pyright: ignore[reportUnknownVariableType]

    patterns = [*MODEL_FILES, _SEQUENCE_CONFIG]
    return Path(
        snapshot_download(
            MODEL_ID,
            revision=MODEL_REVISION,
            allow_patterns=patterns,
            cache_dir=cache,
            local_files_only=local_files_only,
        )
    )


def _hub_cache() -> str:
    """The Hugging Face cache folder as the environment names it now (huggingface_hub reads it once, at import)."""
    environ = os.environ
    home = environ.get('HF_HOME') or os.path.join(environ.get('XDG_CACHE_HOME') or '~/.cache', 'huggingface')
    cache = environ.get('HF_HUB_CACHE') or environ.get('HUGGINGFACE_HUB_CACHE') or os.path.join(home, 'hub')
    return os.path.expanduser(os.path.expandvars(cache))


def _offline() -> bool:
    """Whether `HF_HUB_OFFLINE` forbids downloads, read now for the same reason."""
    return os.environ.get('HF_HUB_OFFLINE', '').strip().upper() in {'1', 'ON', 'YES', 'TRUE'}


def _checked_folder(folder: Path) -> Path:
    if not folder.is_dir():
        raise SemanticUnavailableError(
            f'the embedding model folder {folder} does not exist; make it with: {_DOWNLOAD_COMMAND}'
        )
    for name in _REQUIRED_FILES:
        if not (folder / name).is_file():
            raise SemanticUnavailableError(
                f'the embedding model folder {folder} has no {name}: it must hold the files of the model as in its '
                f'Hugging Face repository, e.g. {_DOWNLOAD_COMMAND}'
            )
    return folder


_register_lock = threading.Lock()


def _register_layout() -> None:
    """Tell fastembed (once per process) how to run a folder in the layout of sentence-transformers' repositories."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    with _register_lock:
        if any(model['model'] == _FASTEMBED_NAME for model in TextEmbedding.list_supported_models()):
            return
        TextEmbedding.add_custom_model(
            model=_FASTEMBED_NAME,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf=MODEL_ID),  # never used: skillshelf always hands fastembed the folder
            dim=384,  # fastembed's description of the model; the rows are as wide as the model's output
            model_file=MODEL_FILES[0],
        )


def _read_as_trained(model: Any, folder: Path) -> None:
    """Cut texts where sentence-transformers would, when the folder says (fastembed follows the tokenizer's limit).

    `model` is a fastembed `TextEmbedding`; the tokenizer of the ONNX model inside it is not part of its typed API.
    """
    settings = folder / _SEQUENCE_CONFIG
    if not settings.is_file():
        return
    length = json.loads(settings.read_text(encoding='utf-8')).get('max_seq_length')
    if isinstance(length, int) and length > 0:
        model.model.tokenizer.enable_truncation(max_length=length)


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
