"""Sweep skillshelf's ranking settings on the dev files (all datasets at once, no per-query tuning).

    python benchmarks/tune.py --data ../shared/bench "body_chars=2000,8000" "body_weight=0.3,1"

Each argument is `setting=v1,v2,...` for a field of `RankingConfig`; every combination is scored on each
dataset and printed as P@1 / MRR@10, with the mean over datasets.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import Dataset, Skillshelf, bfcl_set, mean, metatool_set, ranking_metrics, trigger_sets

from skillshelf.ranking.lexical import RankingConfig


def score(dataset: Dataset, config: RankingConfig) -> tuple[float, float]:
    searcher = Skillshelf(dataset.docs, config)
    rows = [ranking_metrics(dataset, q, [p for p, _ in searcher.search(q.text, 10)]) for q in dataset.queries]
    return mean([r['p@1'] for r in rows]), mean([r['mrr@10'] for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, required=True)
    parser.add_argument('--datasets', default='trigger,trigger_pooled,metatool,bfcl')
    parser.add_argument('settings', nargs='*')
    args = parser.parse_args()
    wanted = args.datasets.split(',')
    datasets = [d for d in trigger_sets(args.data) if d.name in wanted]
    if 'metatool' in wanted:
        datasets.append(metatool_set(args.data, 1000, seed=1))
    if 'bfcl' in wanted:
        datasets.append(bfcl_set(args.data))
    grid: dict[str, list[float]] = {}
    for setting in args.settings:
        key, values = setting.split('=')
        grid[key] = [float(v) for v in values.split(',')]
    print(' '.join(f'{d.name:>16}' for d in datasets), '            mean  settings')
    for combo in itertools.product(*grid.values()):
        overrides = {k: (int(v) if k == 'body_chars' else v) for k, v in zip(grid, combo, strict=True)}
        config = RankingConfig(**overrides)  # pyright: ignore[reportArgumentType]
        results = [score(d, config) for d in datasets]
        cells = ' '.join(f'{p:.3f} / {m:.3f}'.rjust(16) for p, m in results)
        print(cells, f'{mean([p for p, _ in results]):.3f} / {mean([m for _, m in results]):.3f}', overrides)


if __name__ == '__main__':
    main()
