"""Tuning you can trust: each ranking choice chosen on some source repositories and scored on the others.

    python benchmarks/crossval.py --data ../shared/bench [--folds 5]

Every query of the dev files belongs to a group: its source repository for the skill-trigger sets (so all queries
of one repository fall in the same fold), its tool for MetaTool, its function's name for BFCL. Groups are dealt
into `--folds` folds by a hash of their name. For each fold the tuning procedure runs on the other folds' queries
alone, and the engine it picks is scored on the fold's own queries; the cross-validated P@1 of a dataset is that
score over all its queries, each scored by an engine tuned without its repository. The in-sample P@1 is the same
procedure run on every query, scored on the same queries: the gap between the two is what tuning on the dev files
adds that does not carry over to unseen repositories.

The lexical procedure is one pass of coordinate ascent over `KNOBS`, from `RankingConfig()`'s defaults, maximising mean
P@1 over the four datasets. A knob's value is printed with the folds that chose it: a knob whose choice changes
from fold to fold, or whose in-sample gain vanishes under cross-validation, is fitting the dev files.
With `--hybrid` (needs the `[semantic]` extra and the offline test model, see `tests/support/offline_model.py`), the
hybrid search's lexical weight and the length from which a skill's dense share shrinks are chosen together the same way
(from `WEIGHTS` and `SHORT_TEXT_WORDS`, fixed shares among them), and each dataset's hybrid figure is set beside
lexical and dense search alone, and beside the best fixed share chosen the same way. Writes `benchmarks/results/crossval.json` and regenerates `benchmarks/README.md` and the figures the docs quote.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).parent))

import report
from _datasets import Dataset, bfcl_set, metatool_set, trigger_sets
from _embedding import FIXED_SHARE
from _engines import Skillshelf, patched
from _evaluation import mean, ranking_metrics
from _results import machine, write_json
from _tables import crossval_tables

import skillshelf.ranking.lexical as lexical
import skillshelf.ranking.tokenize as tokenizer
from skillshelf.ranking.documents import DEFAULT_THRESHOLD
from skillshelf.ranking.lexical import RankingConfig


@dataclass(frozen=True)
class Engine:
    """One candidate engine: a `RankingConfig` and the parts of the engine switched off."""

    config: RankingConfig = field(default_factory=RankingConfig)
    off: frozenset[str] = frozenset()
    """Names of `SWITCHES` that are off."""

    def label(self) -> str:
        default = RankingConfig()
        changed = [
            f'{f.name}={getattr(self.config, f.name)}'
            for f in fields(default)
            if getattr(self.config, f.name) != getattr(default, f.name)
        ]
        return ', '.join(changed + [f'no {name}' for name in sorted(self.off)]) or 'shipped defaults'


SWITCHES: dict[str, Callable[[], AbstractContextManager[None]]] = {
    'stemming': lambda: patched(tokenizer, _stem_word=lambda word: word, _stem_words=list),
    'when-to-use keywords': lambda: patched(lexical, when_to_use_sections=lambda body, titles=None: []),
}
"""Parts of the engine that are code, not settings: switched off by swapping a function for the run."""


@dataclass(frozen=True)
class Knob:
    """One choice the tuning procedure makes."""

    name: str
    values: tuple[Callable[[Engine], Engine], ...]
    """Each value, as a change to an engine."""
    labels: tuple[str, ...]
    """How each value is printed."""


def _setting(name: str, *values: float) -> Knob:
    return Knob(
        name,
        tuple(lambda engine, v=value: replace(engine, config=replace(engine.config, **{name: v})) for value in values),
        tuple(str(value) for value in values),
    )


def _switch(name: str) -> Knob:
    return Knob(
        name,
        (
            lambda engine: replace(engine, off=engine.off - {name}),
            lambda engine: replace(engine, off=engine.off | {name}),
        ),
        ('on', 'off'),
    )


def _repeats(*values: int) -> Knob:
    def set_all(engine: Engine, value: int) -> Engine:
        config = replace(engine.config, name_repeat=value, description_repeat=value, keywords_repeat=value)
        return replace(engine, config=config)

    return Knob('field repeat', tuple(lambda e, v=v: set_all(e, v) for v in values), tuple(map(str, values)))


KNOBS = (
    _setting('k1', 0.9, 1.2, 1.5),
    _setting('b', 0.5, 0.75, 0.9),
    _repeats(1, 2, 3),
    _setting('head_weight', 0.0, 0.25, 0.5, 1.0),
    _setting('body_chars', 0, 2000, 10_000),
    _setting('negative_weight', 0.0, 0.5, 1.0),
    _switch('stemming'),
    _switch('when-to-use keywords'),
)
"""What the procedure tunes, in the order it tunes them, each starting from the engine the knobs before it chose."""


class Scores:
    """Per-query hits (right skill first) of every engine tried, computed once per engine."""

    def __init__(self, datasets: list[Dataset]) -> None:
        self.datasets = datasets
        self._hits: dict[Engine, list[npt.NDArray[np.float64]]] = {}

    def hits(self, engine: Engine) -> list[npt.NDArray[np.float64]]:
        if engine not in self._hits:
            with _switched_off(engine.off):
                self._hits[engine] = [_hits(dataset, engine.config) for dataset in self.datasets]
            print(f'  scored: {engine.label()}', flush=True)
        return self._hits[engine]


def _switched_off(names: frozenset[str]) -> ExitStack:
    stack = ExitStack()
    for name in sorted(names):
        stack.enter_context(SWITCHES[name]())
    return stack


def _hits(dataset: Dataset, config: RankingConfig) -> npt.NDArray[np.float64]:
    searcher = Skillshelf(dataset.docs, config, threshold=0)
    return np.array(
        [ranking_metrics(dataset, q, [p for p, _ in searcher.search(q.text, 1)])['p@1'] for q in dataset.queries]
    )


def group_of(dataset: Dataset, position: int) -> str:
    """The group of a query: whole groups fall in one fold."""
    query = dataset.queries[position]
    if dataset.name.startswith('trigger'):
        return query.source
    return min(dataset.docs[p].name for p in query.relevant)


def folds_of(dataset: Dataset, folds: int) -> npt.NDArray[np.int64]:
    return np.array(
        [
            int(hashlib.sha256(group_of(dataset, i).encode()).hexdigest(), 16) % folds
            for i in range(len(dataset.queries))
        ]
    )


def tune(scores: Scores, masks: list[npt.NDArray[np.bool_]]) -> tuple[Engine, list[str]]:
    """One pass of coordinate ascent over `KNOBS` on the queries `masks` keep; the engine and each knob's value."""

    def objective(engine: Engine) -> float:
        return mean([float(h[m].mean()) for h, m in zip(scores.hits(engine), masks, strict=True) if m.any()])

    engine, chosen = Engine(), []
    for knob in KNOBS:
        candidates = [value(engine) for value in knob.values]
        results = [objective(candidate) for candidate in candidates]
        best = int(np.argmax(results))  # a tie goes to the value listed first
        engine = candidates[best]
        chosen.append(knob.labels[best])
    return engine, chosen


WEIGHTS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
"""The hybrid lexical weights the procedure chooses from; 1 is lexical search alone, 0 dense alone."""
SHORT_TEXT_WORDS = (50, 75, 100, 150, 200, 300, FIXED_SHARE)
"""The lengths from which a skill's dense share shrinks (`hybrid.dense_shares`); `FIXED_SHARE` never shrinks it."""

Setting = tuple[float, int]
"""A hybrid lexical weight and the `SHORT_TEXT_WORDS` value it goes with."""


def setting_label(setting: Setting) -> str:
    weight, words = setting
    return f'w={weight}, fixed' if words == FIXED_SHARE else f'w={weight}, {words} words'


def hybrid_hits(datasets: list[Dataset]) -> dict[Setting, list[npt.NDArray[np.float64]]]:
    """Per-query hits of hybrid search for every setting, and of lexical (1, fixed) and dense (0, fixed) search
    alone, through `HybridIndex`."""
    from _embedding import cached_embeddings, fixture_encoder

    from skillshelf.ranking.documents import SearchDocument
    from skillshelf.ranking.hybrid import HybridIndex, dense_shares, document_text, indexed_words
    from skillshelf.ranking.lexical import SkillIndex

    encoder = fixture_encoder()
    settings = [(1.0, FIXED_SHARE), *itertools.product(WEIGHTS, SHORT_TEXT_WORDS), (0.0, FIXED_SHARE)]
    hits: dict[Setting, list[npt.NDArray[np.float64]]] = {setting: [] for setting in settings}
    for dataset in datasets:
        documents = [SearchDocument(d.name, d.description, '', d.body) for d in dataset.docs]
        vectors = cached_embeddings([document_text(d) for d in documents], encoder, f'{dataset.name}-docs')
        texts = [q.text for q in dataset.queries]
        query_vectors = cached_embeddings(texts, encoder, f'{dataset.name}-queries')
        lexical = SkillIndex(documents)
        words = [indexed_words(d, lexical.config.body_limit(len(documents))) for d in documents]
        for (weight, short_words), per_dataset in hits.items():
            shares = dense_shares(words, weight, short_words)
            index = HybridIndex.from_parts(lexical, vectors, encoder, shares)
            tops = [index.rank(q.text, 1, 0.0, v) for q, v in zip(dataset.queries, query_vectors, strict=True)]
            per_dataset.append(
                np.array(
                    [
                        ranking_metrics(dataset, q, [p for p, _ in top])['p@1']
                        for q, top in zip(dataset.queries, tops, strict=True)
                    ]
                )
            )
        print(f'  hybrid scored: {dataset.name}', flush=True)
    return hits


def choose_setting(
    hits: dict[Setting, list[npt.NDArray[np.float64]]], candidates: list[Setting], masks: list[npt.NDArray[np.bool_]]
) -> Setting:
    """The candidate with the best mean P@1 over the datasets, on the queries `masks` keep (a tie: the first)."""
    return max(candidates, key=lambda s: mean([float(h[m].mean()) for h, m in zip(hits[s], masks, strict=True)]))


def _cross_validated(
    hits: dict[Setting, list[npt.NDArray[np.float64]]], candidates: list[Setting], fold_of: list[npt.NDArray[np.int64]]
) -> tuple[Setting, list[Setting], list[npt.NDArray[np.float64]]]:
    """The candidate chosen on every query, the one chosen in each fold, and each dataset's held-out hits."""
    in_sample = choose_setting(hits, candidates, [np.ones(len(f), dtype=bool) for f in fold_of])
    held_out = [np.zeros(len(f)) for f in fold_of]
    chosen: list[Setting] = []
    for fold in range(int(max(int(f.max()) for f in fold_of)) + 1):
        setting = choose_setting(hits, candidates, [f != fold for f in fold_of])
        chosen.append(setting)
        for scores, h, f in zip(held_out, hits[setting], fold_of, strict=True):
            scores[f == fold] = h[f == fold]
    return in_sample, chosen, held_out


def cross_validate_hybrid(datasets: list[Dataset], fold_of: list[npt.NDArray[np.int64]]) -> dict[str, Any]:
    """The hybrid setting chosen by cross-validation among all of them, and among fixed shares alone (the fusion
    before dense shares followed skill length)."""
    hits = hybrid_hits(datasets)
    every: list[Setting] = list(itertools.product(WEIGHTS, SHORT_TEXT_WORDS))
    fixed: list[Setting] = [(weight, FIXED_SHARE) for weight in WEIGHTS]
    in_sample, chosen, held_out = _cross_validated(hits, every, fold_of)
    fixed_in_sample, fixed_chosen, fixed_held_out = _cross_validated(hits, fixed, fold_of)
    rows = [
        {
            'dataset': dataset.name,
            'lexical': float(hits[1.0, FIXED_SHARE][i].mean()),
            'dense': float(hits[0.0, FIXED_SHARE][i].mean()),
            'hybrid_in_sample': float(hits[in_sample][i].mean()),
            'hybrid_cross_validated': float(held_out[i].mean()),
            'fixed_in_sample': float(hits[fixed_in_sample][i].mean()),
            'fixed_cross_validated': float(fixed_held_out[i].mean()),
        }
        for i, dataset in enumerate(datasets)
    ]
    return {
        'setting_in_sample': setting_label(in_sample),
        'setting_by_fold': [setting_label(s) for s in chosen],
        'fixed_in_sample': setting_label(fixed_in_sample),
        'fixed_by_fold': [setting_label(s) for s in fixed_chosen],
        'rows': rows,
        'grid': {setting_label(s): [float(h.mean()) for h in hits[s]] for s in every},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, required=True)
    parser.add_argument('--folds', type=int, default=5)
    parser.add_argument('--hybrid', action='store_true', help='also choose the hybrid lexical weight')
    parser.add_argument('--no-readme', action='store_true')
    args = parser.parse_args()
    datasets = [*trigger_sets(args.data), metatool_set(args.data), bfcl_set(args.data)]
    scores = Scores(datasets)
    fold_of = [folds_of(dataset, args.folds) for dataset in datasets]
    everything = [np.ones(len(d.queries), dtype=bool) for d in datasets]

    print('tuning on every query (in-sample)', flush=True)
    in_sample_engine, in_sample_choice = tune(scores, everything)
    cross_validated = [np.zeros(len(d.queries)) for d in datasets]
    choices: list[list[str]] = []
    for fold in range(args.folds):
        print(f'fold {fold + 1} of {args.folds}', flush=True)
        engine, chosen = tune(scores, [f != fold for f in fold_of])
        choices.append(chosen)
        for held_out, hits, f in zip(cross_validated, scores.hits(engine), fold_of, strict=True):
            held_out[f == fold] = hits[f == fold]

    shipped = scores.hits(Engine())
    rows = [
        {
            'dataset': dataset.name,
            'queries': len(dataset.queries),
            'shipped_in_sample': float(shipped[i].mean()),
            'tuned_in_sample': float(scores.hits(in_sample_engine)[i].mean()),
            'cross_validated': float(cross_validated[i].mean()),
        }
        for i, dataset in enumerate(datasets)
    ]
    knobs = [
        {
            'knob': knob.name,
            'in_sample': in_sample_choice[k],
            'folds': [chosen[k] for chosen in choices],
        }
        for k, knob in enumerate(KNOBS)
    ]
    payload = {
        'machine': machine(),
        'folds': args.folds,
        'threshold': DEFAULT_THRESHOLD,
        'in_sample_engine': in_sample_engine.label(),
        'rows': rows,
        'knobs': knobs,
    }
    if args.hybrid:
        payload['hybrid'] = cross_validate_hybrid(datasets, fold_of)
    print(crossval_tables(payload))
    print(f'wrote {write_json("crossval", payload)}')
    if not args.no_readme:
        report.regenerate()


if __name__ == '__main__':
    main()
