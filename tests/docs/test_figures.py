"""Benchmark figures in README.md and docs/*.md are generated from `benchmarks/results/*.json`, never typed.

A quoted figure is marked, `<!--fig:NAME-->0.802<!--/fig-->`, and `benchmarks/figures.py` computes each NAME from the
results files. These tests fail when a marked figure differs from the results (fix: `python benchmarks/figures.py`),
when a benchmark-looking figure stands unmarked, and when a quick deterministic benchmark (the quick-start example's
request sizes, the prompt-cache scenario) no longer gives the figures its results file holds (fix: rerun it).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from repo_paths import REPO

BENCHMARKS = REPO / 'benchmarks'


def benchmark_module(name: str) -> ModuleType:
    """A module of `benchmarks/`, imported without leaving that folder (or the ones it adds) on `sys.path`, where
    its scripts' names (`report`, `models`, `registry`) would shadow other modules."""
    path = list(sys.path)
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path[:] = path


figures: Any = benchmark_module('figures')
unmarked: Any = benchmark_module('_unmarked')


@pytest.fixture(scope='module')
def results() -> Any:
    return figures.Results()


def quoting_documents() -> Iterator[tuple[str, str]]:
    """Each document that quotes figures (not one another generator writes): its path in the repository, its text."""
    for path in figures.documents():
        text = path.read_text(encoding='utf-8')
        if not figures.generated_elsewhere(text):
            yield str(path.relative_to(REPO)), text


def test_every_marked_figure_is_what_the_results_files_give(results: Any) -> None:
    stale = [
        f'{where}: {name} is {quoted!r}, the results give {figures.figure(name, results)!r}'
        for where, text in quoting_documents()
        for name, quoted in figures.marked(text)
        if quoted != figures.figure(name, results)
    ]
    assert stale == [], 'run `python benchmarks/figures.py` to rewrite them'


def test_no_benchmark_figure_is_typed_unmarked(results: Any) -> None:
    sizes = figures.library_sizes(results)
    typed = [f'{where}: {found}' for where, text in quoting_documents() for found in unmarked.bare_figures(text, sizes)]
    assert typed == [], 'mark each as <!--fig:NAME-->value<!--/fig--> with a NAME defined in benchmarks/figures.py'


def test_every_defined_figure_is_quoted_somewhere() -> None:
    quoted = {name for _, text in quoting_documents() for name, _ in figures.marked(text)}
    assert set(figures.FIGURES) - quoted == set(), 'a figure no document quotes: remove it from benchmarks/figures.py'


def test_rewriting_replaces_only_the_marked_values(results: Any) -> None:
    text = 'P@1 <!--fig:discovery.trigger.p1-->0.1<!--/fig--> on `0.5`.'
    expected = figures.figure('discovery.trigger.p1', results)
    assert figures.rewrite(text, results) == f'P@1 <!--fig:discovery.trigger.p1-->{expected}<!--/fig--> on `0.5`.'
    with pytest.raises(LookupError, match='unknown figure'):
        figures.rewrite('<!--fig:no.such.figure-->1<!--/fig-->', results)


@pytest.mark.parametrize(
    ('text', 'found'),
    [
        ('P@1 on the trigger set: 0.796, against 0.682.', ["'0.796'", "'0.682'"]),
        ('P@1 on the trigger set: <!--fig:discovery.trigger.p1-->0.802<!--/fig-->.', []),
        ('At 2,651 skills the first request is 1,681 characters (≈ 420 tokens).', ["'1,681 characters'"]),
        ('The benchmark sends 720,839 at 2,651 skills and 1,681 at 1,000.', ["'720,839'", "'1,681'"]),
        ('Search takes about 0.1 ms at 2,651 skills.', ["'0.1 ms'"]),
        ('In the BFCL pool, 58 % abstain at a cost of 1.7 points.', ["'58 %'", "'1.7 points'"]),
        ('| a | b |\n|---|---|\n| x | 1.08 ms |', []),
        ('Measured by `benchmarks/registry.py`:\n\n| a | b |\n|---|---|\n| x | 1.08 ms |', ["'1.08 ms'"]),
        ('Output is cut at 32 KB and a run killed after 2.5 s.', []),
        ('The benchmark indexes the first 10,000 characters of 2,651 skills.', []),
        ('A benchmark set: `0.796` and\n\n```\nP@1 0.796 at 1,681 characters\n```\n', []),
    ],
)
def test_bare_figures_are_benchmark_looking_numbers_outside_the_marks(text: str, found: list[str]) -> None:
    assert [item.split(' in ')[0] for item in unmarked.bare_figures(text, frozenset({'1,000', '2,651'}))] == found


def test_the_quick_start_results_are_what_the_example_sends_now() -> None:
    quickstart_cost = benchmark_module('quickstart_cost')
    recorded = figures.Results()['quickstart_cost']
    assert quickstart_cost.measure() == {key: value for key, value in recorded.items() if key != 'machine'}, (
        'run `python benchmarks/quickstart_cost.py`'
    )


def test_the_prompt_cache_results_are_what_the_wire_shows_now() -> None:
    prompt_cache = benchmark_module('prompt_cache')
    recorded = figures.Results()['prompt_cache']
    assert prompt_cache.measure_all() == {key: recorded[key] for key in ('providers', 'hidden')}, (
        'run `python benchmarks/prompt_cache.py`'
    )
