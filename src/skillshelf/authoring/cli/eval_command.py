"""The `eval` command: score the library's search against labelled queries and print the report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from ..._text import one_line
from .options import AsJson, Directories, Hybrid, ImportPaths, build_library, require_skills
from .render import emit_json, fail, note_skipped, out, progress_bar

if TYPE_CHECKING:
    from ...library import SkillLibrary
    from .eval import EvalReport

__all__ = ('eval_command',)


def eval_command(
    queries: Annotated[
        Path,
        typer.Argument(
            help='Labelled queries: JSON Lines {"query", "relevant": [names]} (empty = a negative; optional '
            '"not_relevant"), or the agentskills.io trigger-eval form {"query", "should_trigger"}.',
            show_default=False,
            metavar='QUERIES',
        ),
    ],
    directories: Directories = None,
    skill: ImportPaths = None,
    target: Annotated[
        str | None,
        typer.Option('--target', '-t', help='The skill should_trigger records are about, when they do not say.'),
    ] = None,
    worst: Annotated[int, typer.Option('--worst', min=0, help='How many of the worst misses to show.')] = 5,
    by_skill: Annotated[
        bool, typer.Option('--by-skill', help='Also score each skill: found for its queries, first on others.')
    ] = False,
    fail_under: Annotated[
        float | None,
        typer.Option('--fail-under', min=0, max=1, help='Exit with status 1 if Precision@1 is below this (for CI).'),
    ] = None,
    hybrid: Hybrid = False,
    as_json: AsJson = False,
) -> None:
    """Measure how well the library's search finds the right skill for labelled queries.

    Precision@1 and MRR: how often, and how high, a relevant skill ranks. Recall@3: the share of relevant
    skills in the top three. False-trigger rate: negatives where a named skill came first, or (with no
    skill named) where any skill matched.
    """
    from .eval import EvalFileError, evaluate, read_cases

    try:
        cases = read_cases(queries, target)
    except EvalFileError as error:
        fail(str(error))
    library = build_library(directories, skill, hybrid=hybrid)
    require_skills(library, directories)
    note_skipped(library.skipped, as_json)
    with progress_bar('Ranking queries', as_json) as progress:
        task = progress.add_task('eval', total=len(cases))
        report = evaluate(library, cases, advance=lambda: progress.advance(task), worst=worst)
    _print_report(report, library, len(cases), by_skill=by_skill, as_json=as_json)
    if fail_under is not None and report.precision_at_1 < fail_under:
        fail(f'Precision@1 is {report.precision_at_1:.3f}, below --fail-under {fail_under:g}')


def _print_report(report: EvalReport, library: SkillLibrary, queries: int, *, by_skill: bool, as_json: bool) -> None:
    if as_json:
        emit_json(
            {
                'queries': queries,
                'positives': report.positives,
                'negatives': report.negatives,
                'precision_at_1': report.precision_at_1,
                'recall_at_3': report.recall_at_3,
                'mrr': report.mrr,
                'false_trigger_rate': report.false_trigger_rate,
                'worst_misses': [
                    {'query': miss.query, 'expected': list(miss.expected), 'rank': miss.rank, 'got': list(miss.got)}
                    for miss in report.worst_misses
                ],
                'unknown_labels': report.unknown,
                'skills': [
                    {
                        'name': item.name,
                        'queries': item.queries,
                        'precision_at_1': item.precision_at_1,
                        'mrr': item.mrr,
                        'wrongly_first': item.wrongly_first,
                    }
                    for item in report.skills
                ],
            }
        )
        return
    console = out()
    metrics = Table(title=f'{len(library)} skills, {queries} queries', title_justify='left', show_edge=False)
    metrics.add_column('Metric', style='bold')
    metrics.add_column('Value', justify='right')
    metrics.add_column('Over', style='dim')
    positives = f'{report.positives} positive queries'
    metrics.add_row('Precision@1', f'{report.precision_at_1:.3f}', positives)
    metrics.add_row('Recall@3', f'{report.recall_at_3:.3f}', positives)
    metrics.add_row('MRR', f'{report.mrr:.3f}', positives)
    metrics.add_row('False-trigger rate', f'{report.false_trigger_rate:.3f}', f'{report.negatives} negative queries')
    console.print(metrics)
    if report.worst_misses:
        misses = Table(title='Worst misses', title_justify='left', show_edge=False)
        misses.add_column('Query', overflow='fold')
        misses.add_column('Expected', style='green', overflow='fold')
        misses.add_column('Rank', justify='right')
        misses.add_column('Ranked first instead', style='red', overflow='fold')
        for miss in report.worst_misses:
            misses.add_row(
                one_line(miss.query, 60),
                ', '.join(miss.expected),
                str(miss.rank) if miss.rank else '—',
                miss.got[0] if miss.got else '(nothing matched)',
            )
        console.print()
        console.print(misses)
    if by_skill and report.skills:
        table = Table(title='By skill, worst first', title_justify='left', show_edge=False)
        table.add_column('Skill', style='bold cyan', overflow='fold')
        table.add_column('Queries', justify='right')
        table.add_column('Precision@1', justify='right')
        table.add_column('MRR', justify='right')
        table.add_column('First on others', justify='right')
        for item in report.skills:
            table.add_row(
                item.name,
                str(item.queries),
                f'{item.precision_at_1:.3f}' if item.queries else '—',
                f'{item.mrr:.3f}' if item.queries else '—',
                Text(str(item.wrongly_first), style='red' if item.wrongly_first else ''),
            )
        console.print()
        console.print(table)
    if report.unknown:
        console.print(
            f'\n{len(report.unknown)} label(s) name no skill in the library: {", ".join(report.unknown[:5])}'
            + (' …' if len(report.unknown) > 5 else ''),
            style='yellow',
        )
