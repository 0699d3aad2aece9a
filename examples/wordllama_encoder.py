"""Hybrid skill search with your own model: wordllama's static word embeddings as the `encoder`.

    pip install skillshelf wordllama==0.4.0.post1
    python examples/wordllama_encoder.py

Any callable from a list of texts to one embedding row per text can replace the `[semantic]` extra's
all-MiniLM-L6-v2. wordllama is a 19 MB wheel with its weights inside (numpy only), embeds about 5,300
skills a second on a CPU (MiniLM: about 120) and a query in well under a millisecond: a choice for very
large libraries. On the benchmark's dev data its best hybrid ranking is a little ahead of MiniLM's on
skill-trigger queries (P@1 0.807 against 0.801) and behind it on MetaTool's paraphrases (0.532 against
0.571): see the model comparison in `benchmarks/README.md`. Nothing is downloaded: the wheel's own
tokenizer and weights are loaded (`WordLlama.load()` would look for the tokenizer elsewhere and then try
to fetch it).

The script ranks a few requests that paraphrase the sample skills in `skills/`, lexically and hybrid.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from skillshelf import Encoder, LibraryOptions, SearchOptions, SkillLibrary

SAMPLE_SKILLS = Path(__file__).resolve().parents[1] / 'skills'
REQUESTS = [
    'my dashboard takes ages to load because the database is slow',
    'what changed since the last version, for our customers',
    'is this database table change safe to ship',
]


def wordllama_encoder() -> Encoder:
    """An `encoder` for `Skills`/`SkillLibrary`: texts → L2-normalised 256-dimension rows, from the wheel's files."""
    import wordllama  # pyright: ignore[reportMissingTypeStubs]
    from safetensors import safe_open
    from wordllama.inference import WordLlamaInference  # pyright: ignore[reportMissingTypeStubs]

    root = Path(str(wordllama.__file__)).parent
    tokenizer: Any = wordllama.WordLlama.load_tokenizer(root / 'tokenizers' / 'l2_supercat_tokenizer_config.json')
    with safe_open(str(root / 'weights' / 'l2_supercat_256.safetensors'), framework='np') as weights:
        embedding: Any = weights.get_tensor('embedding.weight')
    model: Any = WordLlamaInference(embedding, tokenizer)

    def encode(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray(model.embed(list(texts), norm=True), dtype=np.float32)  # norm=True: unit rows

    return encode


def main() -> None:
    lexical = SkillLibrary.build(options=LibraryOptions(directories=[SAMPLE_SKILLS]))
    hybrid = SkillLibrary.build(
        options=LibraryOptions(directories=[SAMPLE_SKILLS]),
        search=SearchOptions(encoder=wordllama_encoder(), lexical_weight=0.5),
    )
    for request in REQUESTS:
        print(f'request: {request}')
        for label, library in (('lexical', lexical), ('hybrid', hybrid)):
            hits = library.search(request, 2)
            ranked = ', '.join(f'{hit.name} {hit.score:.2f}' for hit in hits) or '(nothing)'
            print(f'  {label:8} {ranked}')


if __name__ == '__main__':
    main()
