"""Discovery quality: how well each method ranks the right skill or tool first, on real data.

    python benchmarks/discovery.py --data ../shared/bench

Runs skillshelf's engine and the baselines (plain BM25 via bm25s, pydantic-ai's keyword overlap) in the same
process on the same queries, prints a table, writes `benchmarks/results/discovery.json` and regenerates
`benchmarks/README.md` and the figures the docs quote.

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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import report
from _datasets import Dataset, bfcl_set, metatool_set, trigger_sets
from _engines import methods
from _evaluation import evaluate
from _results import machine, write_json
from _tables import offered_table, ranking_table

from skillshelf.ranking.documents import DEFAULT_THRESHOLD


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, required=True, help='the benchmark data folder, e.g. ../shared/bench')
    parser.add_argument('--datasets', default='trigger,trigger_pooled,metatool,bfcl')
    parser.add_argument('--methods', default='skillshelf,bm25_plain,keyword')
    parser.add_argument('--metatool-sample', type=int, default=3000)
    parser.add_argument(
        '--no-readme', action='store_true', help='do not regenerate benchmarks/README.md and the figures the docs quote'
    )
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
        print(ranking_table(rows))
        if dataset.offered:
            print(f'\n{offered_table(rows)}')
    path = write_json('discovery', results)
    print(f'\nwrote {path}')
    if not args.no_readme:
        report.regenerate()


if __name__ == '__main__':
    main()
