"""Ablation: what each part of the lexical engine is worth, and the alternatives that lost.

    python benchmarks/ablation.py --data ../shared/bench

Scores skillshelf's engine with one piece changed at a time (stemming off, CJK character pairs replaced by
whole runs or by jieba word segmentation, no body, no "When to use" sections as keywords, no headline index,
no field repetition, longer body) on the dev files. Variants of the tokeniser and of the document fields swap
functions inside `skillshelf.ranking.tokenize` or `skillshelf.ranking.lexical` for the run, so the rest of the engine is
exactly the shipped one. jieba is measured only when `rjieba` is installed.
Writes `benchmarks/results/ablation.json` and regenerates `benchmarks/README.md` and the figures the docs quote.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import report
from _datasets import Dataset, bfcl_set, metatool_set, trigger_sets
from _engines import Method, Skillshelf, patched
from _evaluation import evaluate
from _results import machine, write_json
from _tables import ablation_table

import skillshelf.ranking.lexical as search
import skillshelf.ranking.tokenize as tokenizer
from skillshelf.ranking.documents import DEFAULT_THRESHOLD
from skillshelf.ranking.lexical import RankingConfig


@contextmanager
def unchanged() -> Iterator[None]:
    yield


def _jieba_terms() -> Callable[[str], list[str]] | None:
    try:
        import rjieba  # pyright: ignore[reportMissingImports]
    except ImportError:
        return None
    cut: Any = rjieba.cut  # pyright: ignore[reportUnknownMemberType]

    def terms(run: str) -> list[str]:
        if '\u3400' <= run[0] <= '\u9fff':
            return [word for word in cut(run) if word.strip()]
        return [run[i : i + 2] for i in range(len(run) - 1)] or [run]

    return terms


def variants() -> list[tuple[str, Callable[[], Any], RankingConfig]]:
    default = RankingConfig()
    rows: list[tuple[str, Callable[[], Any], RankingConfig]] = [
        ('shipped engine', unchanged, default),
        ('no stemming', lambda: patched(tokenizer, _stem_word=lambda word: word, _stem_words=list), default),
        ('CJK runs as whole words', lambda: patched(tokenizer, _cjk_terms=lambda run: [run]), default),
        ('no body', unchanged, RankingConfig(body_chars=0)),
        (
            'no "When to use" sections as keywords',
            lambda: patched(search, when_to_use_sections=lambda body, titles=None: []),
            default,
        ),
        ('no headline index', unchanged, RankingConfig(head_weight=0)),
        ('no field repetition', unchanged, RankingConfig(name_repeat=1, description_repeat=1, keywords_repeat=1)),
        ('body up to 20,000 chars', unchanged, RankingConfig(body_chars=20_000)),
    ]
    jieba = _jieba_terms()
    if jieba is not None:
        rows.insert(3, ('CJK by jieba words (rjieba)', lambda: patched(tokenizer, _cjk_terms=jieba), default))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, required=True)
    parser.add_argument('--no-readme', action='store_true')
    args = parser.parse_args()
    datasets: list[Dataset] = [*trigger_sets(args.data), metatool_set(args.data), bfcl_set(args.data)]
    rows: list[dict[str, Any]] = []
    for label, context, config in variants():
        row: dict[str, Any] = {'variant': label}
        with context():
            for dataset in datasets:
                method = Method(
                    label, label, lambda docs, c=config: Skillshelf(docs, c, threshold=0), DEFAULT_THRESHOLD
                )
                result = evaluate(dataset, method)
                row[dataset.name] = {key: result[key] for key in ('p@1', 'mrr@10', 'build_seconds')}
                if 'by_lang' in result and dataset.name == 'trigger':
                    row['trigger_zh_p@1'] = result['by_lang'].get('zh', {}).get('p@1', float('nan'))
        rows.append(row)
        print(ablation_table([row], [d.name for d in datasets]), flush=True)
    path = write_json('ablation', {'machine': machine(), 'datasets': [d.name for d in datasets], 'rows': rows})
    print(ablation_table(rows, [d.name for d in datasets]))
    print(f'wrote {path}')
    if not args.no_readme:
        report.regenerate()


if __name__ == '__main__':
    main()
