"""Scoring a method on a dataset: the ranking metrics, the statistics over queries, and `evaluate`, which gives
every figure the discovery tables show for one method (shared by `discovery.py`, `semantic.py`, `ablation.py`)."""

from __future__ import annotations

import math
import statistics
import time
import tracemalloc
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from _datasets import Dataset, Doc, Query
from _engines import Method, Searcher

METRICS = ('p@1', 'r@3', 'r@5', 'mrr@10', 'ndcg@5')


def _keys(dataset: Dataset, positions: Iterable[int]) -> set[Any]:
    if dataset.match is None:
        return set(positions)
    return {dataset.match(dataset.docs[p]) for p in positions}


def ranking_metrics(dataset: Dataset, query: Query, ranked: Sequence[int]) -> dict[str, float]:
    relevant = _keys(dataset, query.relevant)
    keys = [dataset.match(dataset.docs[p]) if dataset.match else p for p in ranked]
    hits = [key in relevant for key in keys]
    seen: set[Any] = set()
    first_hits: list[bool] = []
    for key, hit in zip(keys, hits, strict=True):
        first_hits.append(hit and key not in seen)
        seen.add(key)
    rr = next((1 / (i + 1) for i, hit in enumerate(hits[:10]) if hit), 0.0)
    dcg = sum(1 / math.log2(i + 2) for i, hit in enumerate(first_hits[:5]) if hit)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 5)))
    return {
        'p@1': float(bool(hits[:1] and hits[0])),
        'r@3': sum(first_hits[:3]) / len(relevant),
        'r@5': sum(first_hits[:5]) / len(relevant),
        'mrr@10': rr,
        'ndcg@5': dcg / ideal if ideal else 0.0,
    }


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float('nan')


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float('nan')


def timed_build(method: Method, docs: Sequence[Doc]) -> tuple[Searcher, float, int]:
    """Build the searcher; return it, the seconds taken and the peak of traced memory in bytes."""
    tracemalloc.start()
    started = time.perf_counter()
    searcher = method.build(docs)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return searcher, seconds, peak


def evaluate(dataset: Dataset, method: Method) -> dict[str, Any]:
    """Every figure for one method on one dataset; abstention uses the method's own threshold, if it has one."""
    searcher, build_seconds, peak_bytes = timed_build(method, dataset.docs)
    threshold = method.threshold

    def kept(ranked: list[tuple[int, float]]) -> list[int]:
        return [p for p, s in ranked if threshold is None or s >= threshold]

    latencies: list[float] = []
    best_scores: list[float] = []
    per_query: list[dict[str, float]] = []
    by_source: dict[str, list[dict[str, float]]] = defaultdict(list)
    by_lang: dict[str, list[dict[str, float]]] = defaultdict(list)
    for query in dataset.queries:
        started = time.perf_counter()
        ranked = searcher.search(query.text, 10)
        latencies.append(time.perf_counter() - started)
        best_scores.append(ranked[0][1] if ranked else 0.0)
        scores = ranking_metrics(dataset, query, [p for p, _ in ranked])
        scores['p@1_thresholded'] = ranking_metrics(dataset, query, kept(ranked))['p@1']
        scores['p@1_strict'] = float(bool(ranked) and ranked[0][0] in query.relevant)
        per_query.append(scores)
        if query.source:
            by_source[query.source].append(scores)
        if query.lang:
            by_lang[query.lang].append(scores)

    result: dict[str, Any] = {
        'method': method.name,
        'n_queries': len(dataset.queries),
        **{name: mean([q[name] for q in per_query]) for name in (*METRICS, 'p@1_thresholded', 'p@1_strict')},
        'build_seconds': build_seconds,
        'build_peak_mib': peak_bytes / 2**20,
        'latency_p50_ms': percentile(latencies, 50) * 1000,
        'latency_p95_ms': percentile(latencies, 95) * 1000,
    }
    if by_source:
        sources = {
            source: {'n': len(rows), 'p@1': mean([r['p@1'] for r in rows]), 'mrr@10': mean([r['mrr@10'] for r in rows])}
            for source, rows in sorted(by_source.items())
        }
        result['by_source'] = sources
        result['source_macro_p@1'] = mean([s['p@1'] for s in sources.values()])
        result['source_macro_mrr@10'] = mean([s['mrr@10'] for s in sources.values()])
    if by_lang:
        result['by_lang'] = {
            lang: {'n': len(rows), 'p@1': mean([r['p@1'] for r in rows]), 'mrr@10': mean([r['mrr@10'] for r in rows])}
            for lang, rows in sorted(by_lang.items())
        }
    if dataset.negatives:
        firsts = [kept(searcher.search(n.text, 1))[:1] for n in dataset.negatives]
        wrong = [bool(first and first[0] in n.not_relevant) for first, n in zip(firsts, dataset.negatives, strict=True)]
        result['negatives_n'] = len(wrong)
        result['negatives_false_first'] = mean([float(w) for w in wrong])
    if dataset.unanswerable:
        unanswered = [searcher.search(text, 10) for text in dataset.unanswerable]
        result['unanswerable_n'] = len(unanswered)
        result['unanswerable_abstained'] = mean([float(not kept(ranked)) for ranked in unanswered])
        if threshold is not None:  # a calibrated score: compare the best scores of both kinds of query
            result['answerable_median_best'] = percentile(best_scores, 50)
            result['unanswerable_median_best'] = percentile([r[0][1] if r else 0.0 for r in unanswered], 50)
    if dataset.offered:
        result['offered'] = offered_setting(dataset, searcher, kept)
    return result


def offered_setting(
    dataset: Dataset, searcher: Searcher, kept: Callable[[list[tuple[int, float]]], list[int]]
) -> dict[str, float]:
    """BFCL's own setting: each query answered from only the functions offered with it, ranked by scores over
    the whole library. There the no-answer label is sound, where in the pool another function often fits."""
    right: list[float] = []
    right_kept: list[float] = []
    abstained: list[float] = []
    for query in dataset.offered:
        ranked = searcher.search(query.text, len(dataset.docs))
        best = next((p for p, _ in ranked if p in query.offered), None)
        best_kept = next((p for p in kept(ranked) if p in query.offered), None)
        if query.relevant:
            right.append(float(best in query.relevant))
            right_kept.append(float(best_kept in query.relevant))
        else:
            abstained.append(float(best_kept is None))
    return {
        'n': len(right),
        'unanswerable_n': len(abstained),
        'p@1': mean(right),
        'p@1_thresholded': mean(right_kept),
        'abstained': mean(abstained),
    }
