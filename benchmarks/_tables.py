"""The tables of the benchmark suite, each built from a benchmark's JSON rows: what a benchmark prints as it runs
and what `report.py` puts in `benchmarks/README.md`. No module here runs a benchmark."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def fmt(value: float, digits: int = 3) -> str:
    """`value` with `digits` decimals; `–` for NaN (a figure the run did not measure)."""
    if value != value:  # NaN
        return '–'
    return f'{value:.{digits}f}'


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A GitHub Markdown table."""
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '|'.join('---' for _ in header) + '|']
    lines += ['| ' + ' | '.join(row) + ' |' for row in rows]
    return '\n'.join(lines)


def ranking_table(rows: list[dict[str, Any]]) -> str:
    """The ranking figures of `evaluate`, one row per method (discovery and semantic sections)."""
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


def ablation_table(rows: list[dict[str, Any]], datasets: list[str]) -> str:
    """P@1 / MRR@10 of each engine variant on each dataset."""
    header = ['variant', *[f'{d} P@1 / MRR@10' for d in datasets], 'trigger zh P@1', 'trigger build s']
    body = [
        [
            r['variant'],
            *[f'{fmt(r[d]["p@1"])} / {fmt(r[d]["mrr@10"])}' for d in datasets],
            fmt(r.get('trigger_zh_p@1', float('nan'))),
            fmt(r['trigger']['build_seconds'], 2),
        ]
        for r in rows
    ]
    return markdown_table(header, body)


def crossval_tables(payload: dict[str, Any]) -> str:
    """In-sample against cross-validated P@1, each knob's choices, and the hybrid setting's (with `--hybrid`)."""
    lines = [
        markdown_table(
            ['dataset', 'queries', 'shipped, in-sample', 'tuned, in-sample', 'tuned, cross-validated', 'gap (points)'],
            [
                [
                    r['dataset'],
                    str(r['queries']),
                    fmt(r['shipped_in_sample']),
                    fmt(r['tuned_in_sample']),
                    fmt(r['cross_validated']),
                    f'{100 * (r["tuned_in_sample"] - r["cross_validated"]):.1f}',
                ]
                for r in payload['rows']
            ],
        ),
        '',
        markdown_table(
            ['knob', 'chosen on every query', 'chosen in each fold'],
            [[k['knob'], k['in_sample'], ', '.join(k['folds'])] for k in payload['knobs']],
        ),
    ]
    hybrid = payload.get('hybrid')
    if hybrid:
        lines += [
            '',
            f'Hybrid setting chosen on every query: {hybrid["setting_in_sample"]}; in each fold: '
            + '; '.join(hybrid['setting_by_fold'])
            + f'. Fixed shares alone (the fusion before this one): {hybrid["fixed_in_sample"]}; in each fold: '
            + '; '.join(hybrid['fixed_by_fold'])
            + '.',
            '',
            markdown_table(
                [
                    'dataset',
                    'lexical',
                    'dense',
                    'best part',
                    'hybrid, in-sample',
                    'hybrid, cross-validated',
                    'fixed share, in-sample',
                    'fixed share, cross-validated',
                ],
                [
                    [
                        r['dataset'],
                        fmt(r['lexical']),
                        fmt(r['dense']),
                        fmt(max(r['lexical'], r['dense'])),
                        fmt(r['hybrid_in_sample']),
                        fmt(r['hybrid_cross_validated']),
                        fmt(r['fixed_in_sample']),
                        fmt(r['fixed_cross_validated']),
                    ]
                    for r in hybrid['rows']
                ],
            ),
        ]
    return '\n'.join(lines)


def scale_table(rows: list[dict[str, Any]]) -> str:
    """Discovery, cold and warm start, latency and memory for each library size."""
    header = ['skills', 'discover s', 'cold index s', 'cold total s', 'cold runs s', 'OS-cold total s',
              'warm discover s', 'warm index s', 'warm total s', 'warm/cold total', 'p50 ms', 'p95 ms', 'RSS MiB',
              'index MiB', 'cache MiB']  # fmt: skip
    body = [
        [f'{r["size"]:,}', fmt(r['discover_s'], 2), fmt(r['cold_index_s'], 2), fmt(r['cold_total_s'], 2),
         ' / '.join(fmt(t, 2) for t in r.get('cold_total_runs_s', [])) or '–',
         ' / '.join(fmt(t, 2) for t in r.get('os_cold_total_runs_s', [])) or '–',
         fmt(r.get('warm_discover_s', float('nan')), 3), fmt(r['warm_index_s'], 3), fmt(r['warm_total_s'], 3),
         f'{r["warm_over_cold_total"]:.1%}', fmt(r['latency_p50_ms'], 2), fmt(r['latency_p95_ms'], 2),
         fmt(r['cold_max_rss_mib'], 0), fmt(r['index_arrays_mib'], 1), fmt(r['cache_file_mib'], 1)]
        for r in rows
    ]  # fmt: skip
    return markdown_table(header, body)


def context_table(rows: list[dict[str, Any]]) -> str:
    """What the model receives on the first request, and the alternatives' sizes, for each library size."""
    header = ['skills', 'first request chars', '≈ tokens', 'instructions', 'tool defs',
              "pydantic-ai's deferred capabilities", 'search result chars',
              'all in catalog chars', 'tool per skill chars', 'construct+run cold s', 'cold runs s', 'warm s',
              'warm s, auto_reload off']  # fmt: skip
    body = [
        [f'{r["size"]:,}', f'{r["first_request_chars"]:,}', f'{r["first_request_tokens_est"]:,.0f}',
         f'{r["instructions_chars"]:,}', f'{r["tool_definitions_chars"]:,}',
         f'{r["deferred_capabilities_chars"]:,}' if 'deferred_capabilities_chars' in r else '–',
         '–' if r['search_result_chars'] is None else f'{r["search_result_chars"]:,}',
         f'{r["catalog_chars"]:,}', f'{r["tool_per_skill_chars"]:,}', fmt(r['construct_run_cold_s'], 2),
         ' / '.join(fmt(t, 2) for t in r.get('construct_run_cold_runs_s', [])) or '–',
         fmt(r['construct_run_warm_s'], 2), fmt(r.get('construct_run_warm_no_reload_s', float('nan')), 2)]
        for r in rows
    ]  # fmt: skip
    return markdown_table(header, body)


def reminders_table(rows: list[dict[str, Any]]) -> str:
    """Reminder recall, precision, filler and negatives reminded, with the score alone and with the evidence rule."""
    header = ['library', 'queries', 'recall', 'precision', 'queries reminded', 'filler reminded',
              'longer chat reminded', 'negatives: their skill named', 'ms p50']  # fmt: skip

    def pair(row: dict[str, Any], key: str, render: Any = fmt) -> str:
        return f'{render(row["before"][key])} → {render(row["after"][key])}'

    body = [
        [
            f'{r["skills"]:,} skills'
            + (f' ({r["draws"]} draws)' if 'draws' in r else '')
            + (f', {r["search"]}' if r.get('search', 'lexical') != 'lexical' else ''),
            f'{r["queries"]:,}',
            pair(r, 'recall'),
            pair(r, 'precision'),
            pair(r, 'reminded'),
            pair(r, 'filler_reminded', lambda n: f'{n:,}'),
            pair(r, 'longer_reminded', lambda n: f'{n:,}'),
            pair(r, 'negatives_false'),
            pair(r, 'ms_p50', lambda v: fmt(v, 2)),
        ]
        for r in rows
    ]
    return markdown_table(header, body)


def best_hybrid(methods: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """A model's best hybrid weight on one dataset (by P@1, then MRR@10) and its figures."""
    hybrids = {k: v for k, v in methods.items() if k.startswith('hybrid')}
    name = max(hybrids, key=lambda k: (hybrids[k]['p@1'], hybrids[k]['mrr@10']))
    return name, hybrids[name]


def models_tables(results: dict[str, Any], titles: Mapping[str, str]) -> str:
    """Each dataset's table of the embedding models (`titles`: dataset name → its title), then their cost."""
    measured = {name: r for name, r in results['models'].items() if 'datasets' in r}
    out: list[str] = []
    header = ['model', 'dense P@1', 'dense MRR', 'w=0.3 P@1', 'w=0.5 P@1', 'w=0.7 P@1', 'best hybrid', 'its MRR']
    for dataset, dataset_title in titles.items():
        lexical = next(iter(measured.values()))['datasets'][dataset]['lexical'] if measured else None
        rows: list[list[str]] = []
        for name, report in measured.items():
            methods = report['datasets'][dataset]
            best, row = best_hybrid(methods)
            rows.append(
                [
                    name,
                    fmt(methods['dense']['p@1']),
                    fmt(methods['dense']['mrr@10']),
                    *(fmt(methods[f'hybrid w={w}']['p@1']) for w in (0.3, 0.5, 0.7)),
                    f'{fmt(row["p@1"])} ({best.removeprefix("hybrid ")})',
                    fmt(row['mrr@10']),
                ]
            )
        title = f'## {dataset_title}'
        if lexical:
            title += f' — lexical alone: P@1 {fmt(lexical["p@1"])}, MRR@10 {fmt(lexical["mrr@10"])}'
        out.append(f'{title}\n\n{markdown_table(header, rows)}')
    cost_header = ['model', 'packages', 'wheel MB', 'weights MB', 'dim', 'cold load s', 'docs/s', 'query ms']
    cost_rows = [
        [
            name,
            ' '.join(r['packages'][:1]) + (f' (+{len(r["packages"]) - 1})' if len(r['packages']) > 1 else ''),
            fmt(r['wheel_mb'], 1),
            fmt(r['weights_mb'], 1),
            str(r.get('dim', '–')),
            fmt(r.get('load_s', float('nan')), 1),
            fmt(r.get('docs_per_s', float('nan')), 0),
            fmt(r.get('query_ms_p50', float('nan')), 1),
        ]
        for name, r in results['models'].items()
    ]
    out.append(f'## Cost (2 CPU cores)\n\n{markdown_table(cost_header, cost_rows)}')
    return '\n\n'.join(out)
