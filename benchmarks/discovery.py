"""Discovery quality: how well each method ranks the right skill or tool first, on real data.

    python benchmarks/discovery.py --data ../shared/bench

Runs skillshelf's engine and the baselines (plain BM25 via bm25s, pydantic-ai's keyword overlap) in the same
process on the same queries, prints a table, writes `benchmarks/results/discovery.json` and regenerates
`benchmarks/README.md`.

BFCL pools 3,105 function definitions in which 518 names have several near-identical definitions
(`get_weather`, `get_weather#2`, ...); its P@1, R@k, MRR and nDCG count a function with the right name
as right (the relaxed metric PROVENANCE.md suggests), and *P@1 strict id* requires the exact definition.
Its no-answer label holds for the few functions BFCL offered with each query, not for the pool, where another
function often fits; so BFCL is also scored in its own setting, each query answered from only its offered
functions (ranked by scores over the whole pool).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import (
    Dataset,
    Method,
    Searcher,
    bfcl_set,
    fmt,
    machine,
    markdown_table,
    mean,
    metatool_set,
    methods,
    percentile,
    ranking_metrics,
    timed_build,
    trigger_sets,
    write_json,
)

from skillshelf.ranking.lexical import DEFAULT_THRESHOLD

METRICS = ('p@1', 'r@3', 'r@5', 'mrr@10', 'ndcg@5')


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, required=True, help='the benchmark data folder, e.g. ../shared/bench')
    parser.add_argument('--datasets', default='trigger,trigger_pooled,metatool,bfcl')
    parser.add_argument('--methods', default='skillshelf,bm25_plain,keyword')
    parser.add_argument('--metatool-sample', type=int, default=3000)
    parser.add_argument('--no-readme', action='store_true', help='do not regenerate benchmarks/README.md')
    args = parser.parse_args(argv)

    wanted = set(args.datasets.split(','))
    datasets: list[Dataset] = []
    if wanted & {'trigger', 'trigger_pooled'}:
        datasets += [d for d in trigger_sets(args.data) if d.name in wanted]
    if 'metatool' in wanted:
        datasets.append(metatool_set(args.data, args.metatool_sample))
    if 'bfcl' in wanted:
        datasets.append(bfcl_set(args.data))
    chosen = [m for m in methods() if m.name in set(args.methods.split(','))]

    results: dict[str, Any] = {'machine': machine(), 'threshold': DEFAULT_THRESHOLD, 'datasets': {}}
    for dataset in datasets:
        rows = [evaluate(dataset, method) for method in chosen]
        results['datasets'][dataset.name] = {'title': dataset.title, 'n_docs': len(dataset.docs), 'methods': rows}
        print(f'\n## {dataset.title}\n')
        print(table(rows))
        if dataset.offered:
            print(f'\n{offered_table(rows)}')
    path = write_json('discovery', results)
    print(f'\nwrote {path}')
    if not args.no_readme:
        from report import write_readme

        print(f'wrote {write_readme()}')


def table(rows: list[dict[str, Any]]) -> str:
    header = ['method', 'P@1', 'R@3', 'R@5', 'MRR@10', 'nDCG@5', 'P@1 thr.', 'P@1 strict id', 'src-macro P@1',
              'neg. first', 'abstain', 'build s', 'p50 ms', 'p95 ms', 'mem MiB']  # fmt: skip
    body = [
        [
            r['method'], fmt(r['p@1']), fmt(r['r@3']), fmt(r['r@5']), fmt(r['mrr@10']), fmt(r['ndcg@5']),
            fmt(r['p@1_thresholded']), fmt(r['p@1_strict']), fmt(r.get('source_macro_p@1', float('nan'))),
            fmt(r.get('negatives_false_first', float('nan'))), fmt(r.get('unanswerable_abstained', float('nan'))),
            fmt(r['build_seconds'], 2), fmt(r['latency_p50_ms'], 2), fmt(r['latency_p95_ms'], 2),
            fmt(r['build_peak_mib'], 1),
        ]
        for r in rows
    ]  # fmt: skip
    return markdown_table(header, body)


def offered_table(rows: list[dict[str, Any]]) -> str:
    """The BFCL figures of `offered_setting`, one row per method."""
    header = ['method (among the offered functions)', 'P@1', 'P@1 thr.', 'no-answer abstained']
    body = [
        [r['method'], fmt(r['offered']['p@1']), fmt(r['offered']['p@1_thresholded']), fmt(r['offered']['abstained'])]
        for r in rows
    ]
    return markdown_table(header, body)


if __name__ == '__main__':
    main()
