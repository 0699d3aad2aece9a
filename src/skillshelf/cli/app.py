"""The `skillshelf` commands: what a skill author needs to see what the model sees."""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from .._text import one_line
from ..capability.catalog import DEFAULT_CATALOG_BUDGET
from ..capability.meta_tools import MAX_SEARCH_LIMIT, META_TOOL_NAMES, SkillMatch
from ..capability.skills import Skills, import_skills
from ..discovery import SkippedSkill
from ..errors import ResourceError, SkillError, SkillWarning
from ..library import SkillLibrary
from ..lint import SkillReport, lint_directories
from ..ranking.cache import CACHE_MIN_SKILLS, cache_directory
from ..ranking.ranker import SearchMode
from ..skill import Skill
from .eval import EvalFileError, EvalReport, evaluate, read_cases
from .probe import Size, replay, size_of, skill_tools, tool_json, tools_size
from .render import emit_json, err, fail, out, score_bar, size_json, size_text

app = typer.Typer(
    name='skillshelf',
    help='See your skills the way the model sees them: list, validate, show, catalog, search and evaluate them; '
    'index them ahead of time.',
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode='markdown',
)

Directories = Annotated[
    list[Path] | None,
    typer.Argument(
        help='Library directories: each holds skill folders, or is one. Default: ./skills if it exists, else .',
        show_default=False,
        metavar='DIR',
    ),
]
ImportPaths = Annotated[
    list[str] | None,
    typer.Option(
        '--skill',
        '-s',
        help='A Python skill (or list of skills) to add, by import path: package.module:attribute. Repeatable.',
        show_default=False,
    ),
]
AsJson = Annotated[bool, typer.Option('--json', help='Print JSON for scripts instead of tables.')]
Hybrid = Annotated[
    bool,
    typer.Option('--hybrid', help='Rank like Skills(search="hybrid"): lexical + embeddings (the [semantic] extra).'),
]


def _directories(directories: Sequence[Path] | None) -> list[Path]:
    if directories:
        return list(directories)
    return [Path('skills')] if Path('skills').is_dir() else [Path('.')]


def _python_skills(import_paths: Sequence[str] | None) -> list[Skill[Any]]:
    if not import_paths:
        return []
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # the console script, like `python -m`, imports from where it runs
    try:
        return [skill for path in import_paths for skill in import_skills(path)]
    except SkillError as error:
        fail(str(error))


def _library(
    directories: Sequence[Path] | None, import_paths: Sequence[str] | None, *, hybrid: bool = False
) -> SkillLibrary:
    """The library exactly as the `Skills` capability builds it; skipped folders are in `.skipped`."""
    skills = _python_skills(import_paths)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', SkillWarning)
        try:
            return SkillLibrary.build(
                skills, _directories(directories), reserved_tool_names=META_TOOL_NAMES, search=_mode(hybrid)
            )
        except SkillError as error:
            fail(str(error))


def _capability(
    directories: Sequence[Path] | None,
    import_paths: Sequence[str] | None,
    budget: int = DEFAULT_CATALOG_BUDGET,
    *,
    hybrid: bool = False,
) -> Skills[Any]:
    skills = _python_skills(import_paths)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', SkillWarning)
        try:
            return Skills(list(_directories(directories)), skills=skills, catalog_budget=budget, search=_mode(hybrid))
        except SkillError as error:
            fail(str(error))


def _mode(hybrid: bool) -> SearchMode:
    return 'hybrid' if hybrid else 'lexical'


def _progress(label: str, quiet: bool) -> Progress:
    """A progress bar on standard error; it vanishes when done and never shows with `--json`."""
    return Progress(
        TextColumn(f'[bold]{label}'),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err(),
        transient=True,
        disable=quiet,
    )


def _source(skill: Skill[Any], import_paths: Sequence[str] | None) -> str:
    """Where a skill comes from: its folder, or the import path that named it."""
    if skill.folder is not None:
        return str(skill.folder)
    for path in import_paths or ():
        if any(found is skill for found in import_skills(path)):
            return f'python: {path}'
    return 'python'


def _note_skipped(skipped: Sequence[SkippedSkill], as_json: bool) -> None:
    """Say on standard error that some folders were left out, so a missing skill is never a mystery."""
    if skipped and not as_json:
        noun = 'folder was' if len(skipped) == 1 else 'folders were'
        err().print(f'{len(skipped)} skill {noun} skipped; `skillshelf list` or `skillshelf validate` says why.')


def _skipped_json(skipped: Sequence[SkippedSkill]) -> list[dict[str, str]]:
    return [{'path': str(item.path), 'problem': item.problem} for item in skipped]


def _print_skipped(skipped: Sequence[SkippedSkill]) -> None:
    if not skipped:
        return
    table = Table(title='Skipped', title_style='bold yellow', title_justify='left', show_edge=False)
    table.add_column('Path', style='yellow', overflow='fold')
    table.add_column('Problem', overflow='fold')
    for item in skipped:
        table.add_row(str(item.path), item.problem)
    out().print(table)


@app.command('list')
def list_skills(directories: Directories = None, skill: ImportPaths = None, as_json: AsJson = False) -> None:
    """List the skills found, with their tools and files, and every skipped SKILL.md with the reason."""
    library = _library(directories, skill)
    rows = [(item, item.list_resources()) for item in library.skills.values()]
    if as_json:
        emit_json(
            {
                'skills': [
                    {
                        'name': item.name,
                        'description': item.description,
                        'source': _source(item, skill),
                        'tools': item.tool_names,
                        'resources': resources,
                    }
                    for item, resources in rows
                ],
                'skipped': _skipped_json(library.skipped),
            }
        )
        return
    console = out()
    table = Table(show_edge=False, pad_edge=False)
    table.add_column('Name', style='bold cyan', no_wrap=True)
    table.add_column('Description', ratio=1, min_width=30)
    table.add_column('Source', style='dim', overflow='ellipsis', no_wrap=True, max_width=40)
    table.add_column('Tools', justify='right')
    table.add_column('Files', justify='right')
    for item, resources in rows:
        table.add_row(
            item.name,
            one_line(item.description, 120),
            _source(item, skill),
            str(len(item.tool_names)),
            str(len(resources)),
        )
    if rows:
        console.print(table)
    noun = 'skill' if len(rows) == 1 else 'skills'
    skipped = f', {len(library.skipped)} skipped' if library.skipped else ''
    console.print(f'\n{len(rows)} {noun}{skipped}.')
    _print_skipped(library.skipped)


@app.command()
def validate(
    directories: Directories = None,
    strict: Annotated[bool, typer.Option('--strict', help='Fail on warnings too, not only on errors.')] = False,
    as_json: AsJson = False,
) -> None:
    """Check skills against the Agent Skills format and skillshelf's lint. Exits 1 on errors, for CI.

    Format rules (agreeing with the reference validator skills-ref): frontmatter, unknown-field, name,
    name-folder, description, description-length, compatibility. skillshelf's lint: loads (what the library
    refuses or repairs), name-nfkc, field-type, missing-resource, description-short, description-when,
    description-person, body-empty, body-size, shadowed.
    """
    with _progress('Checking skills', as_json) as progress:

        def start(total: int) -> Callable[[], None]:
            task = progress.add_task('validate', total=total)
            return lambda: progress.advance(task)

        reports, problems = lint_directories(_directories(directories), progress=start)
    errors = sum(len(report.errors) for report in reports) + len(problems)
    warning_count = sum(len(report.warnings) for report in reports)
    failed = bool(errors or (strict and warning_count))
    if as_json:
        emit_json(
            {
                'valid': not failed,
                'errors': errors,
                'warnings': warning_count,
                'problems': problems,
                'skills': [_report_json(report) for report in reports],
            }
        )
    else:
        _print_reports(reports, problems, errors, warning_count)
    if failed:
        raise typer.Exit(1)


def _report_json(report: SkillReport) -> dict[str, Any]:
    return {
        'folder': str(report.folder),
        'name': report.name,
        'valid': not report.errors,
        'findings': [
            {'rule': finding.rule, 'severity': finding.severity, 'spec': finding.spec, 'message': finding.message}
            for finding in report.findings
        ],
    }


def _print_reports(reports: Sequence[SkillReport], problems: Sequence[str], errors: int, warning_count: int) -> None:
    console = out()
    for problem in problems:
        console.print(Text.assemble(('✗ ', 'bold red'), problem))
    for report in reports:
        label = report.name or report.folder.name
        mark = (
            ('✗ ', 'bold red') if report.errors else ('! ', 'bold yellow') if report.warnings else ('✓ ', 'bold green')
        )
        console.print(Text.assemble(mark, (label, 'bold'), '  ', (str(report.folder), 'dim')))
        if not report.findings:
            continue
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=2)
        grid.add_column(no_wrap=True, min_width=7)
        grid.add_column(no_wrap=True, style='dim', min_width=18)
        grid.add_column(ratio=1)
        for finding in report.findings:
            style = 'red' if finding.severity == 'error' else 'yellow'
            grid.add_row('', Text(finding.severity, style), finding.rule, finding.message)
        console.print(grid)
    valid = sum(1 for report in reports if not report.errors)
    summary = (
        f'\n{len(reports)} skill{"" if len(reports) == 1 else "s"} checked: {valid} valid, '
        f'{len(reports) - valid} with errors; {errors} error{"" if errors == 1 else "s"}, '
        f'{warning_count} warning{"" if warning_count == 1 else "s"}.'
    )
    console.print(summary, style='bold red' if errors else 'bold green')


@app.command()
def show(
    name: Annotated[str, typer.Argument(help='The skill to show.', show_default=False, metavar='NAME')],
    directories: Directories = None,
    skill: ImportPaths = None,
    resource: Annotated[
        str | None,
        typer.Option('--resource', '-r', help='Also print this file of the skill, as read_skill_resource returns it.'),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Show what load_skill returns to the model for a skill, its files and the tools it unlocks."""
    capability = _capability(directories, skill)
    found = capability.library.get(name)
    if found is None:
        skipped = [item for item in capability.library.skipped if name in item.path.parts]
        reason = ''.join(f'\n{item.path} was skipped: {item.problem}' for item in skipped)
        close = capability.library.closest_names(name)
        hint = f' Did you mean {" or ".join(repr(other) for other in close)}?' if close else ''
        fail(f'There is no skill named {name!r}.{hint} `skillshelf list` shows them all.{reason}')
    capture = replay(capability, [('load_skill', {'name': name})])
    loaded = str(capture.returns[0].content) if capture.returns else ''
    tools = skill_tools(capture.requests[-1].function_tools)
    resources = [(path, _resource_bytes(found, path)) for path in found.list_resources()]
    content = _read_resource(found, resource) if resource is not None else None
    if as_json:
        data: dict[str, Any] = {
            'name': name,
            'load_skill': loaded,
            'size': size_json(size_of(loaded)),
            'resources': [{'path': path, 'bytes': size} for path, size in resources],
            'tools': [tool_json(tool) for tool in tools],
        }
        if resource is not None:
            data['resource'] = {'path': resource, 'content': content}
        emit_json(data)
        return
    console = out()
    console.print(
        Panel(
            Text(loaded),
            title=f'[bold]load_skill({name!r})[/] returns',
            subtitle=size_text(size_of(loaded)),
            border_style='cyan',
        )
    )
    if resources:
        table = Table(title='Files', title_justify='left', show_edge=False)
        table.add_column('Path', style='cyan')
        table.add_column('Bytes', justify='right')
        for path, size in resources:
            table.add_row(path, f'{size:,}' if size is not None else '?')
        console.print(table)
    if tools:
        table = Table(title='Tools unlocked', title_justify='left', show_edge=False)
        table.add_column('Tool', style='cyan')
        table.add_column('Description')
        for tool in tools:
            table.add_row(tool.name, one_line(tool.description or '', 100))
        console.print(table)
    if content is not None:
        console.print(Panel(Text(content), title=f'[bold]{escape(resource or "")}[/]', border_style='dim'))


def _resource_bytes(found: Skill[Any], path: str) -> int | None:
    if found.folder is not None and (found.folder / path).is_file():
        return (found.folder / path).stat().st_size
    text = found.resources.get(path)
    return len(text.encode()) if text is not None else None


def _read_resource(found: Skill[Any], path: str) -> str:
    try:
        return found.read_resource(path)
    except ResourceError as error:
        fail(f'cannot read {path!r} from {found.name!r}: {error}')


@app.command()
def catalog(
    directories: Directories = None,
    skill: ImportPaths = None,
    budget: Annotated[
        int, typer.Option('--budget', '-b', min=0, help='Characters the catalog may use in the instructions.')
    ] = DEFAULT_CATALOG_BUDGET,
    as_json: AsJson = False,
) -> None:
    """Show exactly the instructions and tool definitions the model receives on the first request.

    Also shows their size, and the size had every skill's instructions and tools been put in context at once.
    """
    capability = _capability(directories, skill, budget)
    _note_skipped(capability.library.skipped, as_json)
    names = list(capability.library.skills)
    capture = replay(capability, [('load_skill', {'name': name}) for name in names])
    first = capture.requests[0]
    instructions = first.instructions or ''
    tools = first.function_tools
    first_size = size_of(instructions) + tools_size(tools)
    loaded_size = sum((size_of(str(part.content)) for part in capture.returns), Size(0))
    every_tool = skill_tools(capture.requests[-1].function_tools) if names else []
    everything = loaded_size + tools_size(every_tool)
    if as_json:
        emit_json(
            {
                'instructions': instructions,
                'tools': [tool_json(tool) for tool in tools],
                'first_request': {
                    **size_json(first_size),
                    'instructions': size_json(size_of(instructions)),
                    'tools': size_json(tools_size(tools)),
                },
                'every_skill_in_context': {
                    **size_json(everything),
                    'skills': len(names),
                    'instructions': size_json(loaded_size),
                    'tools': size_json(tools_size(every_tool)),
                },
            }
        )
        return
    console = out()
    console.print(
        Panel(
            Text(instructions),
            title='[bold]Instructions[/] on the first request',
            subtitle=size_text(size_of(instructions)),
            border_style='cyan',
        )
    )
    table = Table(title='Tool definitions on the first request', title_justify='left', show_edge=False)
    table.add_column('Tool', style='cyan', no_wrap=True)
    table.add_column('Chars', justify='right')
    table.add_column('Description')
    for tool in tools:
        table.add_row(tool.name, f'{tools_size([tool]).characters:,}', one_line(tool.description or '', 90))
    console.print(table)
    sizes = Table(show_header=False, show_edge=False, box=None, padding=(0, 2))
    sizes.add_column(style='bold')
    sizes.add_column(justify='right')
    sizes.add_row('First request (catalog + tools)', size_text(first_size))
    sizes.add_row(
        f'Every skill in context ({len(names)} skills, {len(every_tool)} tools)',
        size_text(everything),
    )
    if everything.characters:
        sizes.add_row('Kept off the first request', f'{max(0, 1 - first_size.characters / everything.characters):.1%}')
    console.print()
    console.print(sizes)


@app.command()
def search(
    query: Annotated[
        str, typer.Argument(help='What a user would ask for, in a few words.', show_default=False, metavar='QUERY')
    ],
    directories: Directories = None,
    skill: ImportPaths = None,
    limit: Annotated[
        int, typer.Option('--limit', '-n', min=1, max=MAX_SEARCH_LIMIT, help='How many results, like search_skills.')
    ] = 5,
    hybrid: Hybrid = False,
    as_json: AsJson = False,
) -> None:
    """Show what search_skills returns to the model for a query, with scores."""
    capability = _capability(directories, skill, hybrid=hybrid)
    _note_skipped(capability.library.skipped, as_json)
    capture = replay(capability, [('search_skills', {'query': query, 'limit': limit})])
    result: Any = capture.returns[0].content if capture.returns else []
    matches = (
        [match for match in cast('list[Any]', result) if isinstance(match, SkillMatch)]
        if isinstance(result, list)
        else []
    )
    message = result if isinstance(result, str) else None
    if as_json:
        emit_json(
            {
                'query': query,
                'results': [
                    {'name': match.name, 'score': match.score, 'description': match.description} for match in matches
                ],
                'message': message,
            }
        )
        return
    console = out()
    if message is not None:
        console.print(message, style='yellow')
        return
    table = Table(show_edge=False)
    table.add_column('#', justify='right', style='dim')
    table.add_column('Skill', style='bold cyan', no_wrap=True)
    table.add_column('Score', no_wrap=True)
    table.add_column('Description')
    for rank, match in enumerate(matches, 1):
        table.add_row(
            str(rank),
            match.name,
            Text.assemble(f'{match.score:.3f} ', (score_bar(match.score), 'green')),
            match.description,
        )
    console.print(table)


@app.command()
def index(
    directories: Directories = None, skill: ImportPaths = None, hybrid: Hybrid = False, as_json: AsJson = False
) -> None:
    """Build the search index now and cache it, so an agent's first search loads it instead of building it.

    For a deploy or container build step: run it where the agent runs, with the same skill paths and
    SKILLSHELF_CACHE_DIR. --hybrid embeds the skills too. Libraries of 200 or more folder skills are cached.
    """
    library = _library(directories, skill, hybrid=hybrid)
    _note_skipped(library.skipped, as_json)
    started = time.perf_counter()
    with err().status(f'Indexing {len(library):,} skills…') if not as_json else nullcontext():
        try:
            library.prepare_search()
        except Exception as error:  # an encoder or API failure: say what happened, not a traceback
            fail(f'the index was not built: {error}')
    seconds = time.perf_counter() - started
    path = library.index_cache_path()
    reason = _not_cached(path)
    if as_json:
        emit_json(
            {
                'skills': len(library),
                'search': library.search_mode,
                'seconds': round(seconds, 3),
                'cache': {'saved': reason is None, 'path': None if path is None else str(path), 'reason': reason},
                'skipped': _skipped_json(library.skipped),
            }
        )
        return
    console = out()
    noun = 'skill' if len(library) == 1 else 'skills'
    console.print(f'Indexed {len(library):,} {noun} in {seconds:.2f} s ({library.search_mode} search).')
    if reason is None:
        embeddings = ', with the embeddings beside it' if library.search_mode == 'hybrid' else ''
        console.print(
            f'Cached in {escape(str(path))}{embeddings}: the first search of an agent using these skills loads it.'
        )
    else:
        console.print(f'Not cached: {escape(reason)}.', style='yellow')


def _not_cached(path: Path | None) -> str | None:
    """Why the index was not saved, or `None` if it was."""
    if path is not None:
        return None if path.is_file() else f'{path.parent} could not be written'
    if cache_directory() is None:
        return 'caching is off (SKILLSHELF_CACHE_DIR)'
    return f'libraries of fewer than {CACHE_MIN_SKILLS} folder skills are not cached; they index quickly at the first search'


@app.command('eval')
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
    try:
        cases = read_cases(queries, target)
    except EvalFileError as error:
        fail(str(error))
    library = _library(directories, skill, hybrid=hybrid)
    _note_skipped(library.skipped, as_json)
    with _progress('Ranking queries', as_json) as progress:
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
        misses.add_column('Query')
        misses.add_column('Expected', style='green')
        misses.add_column('Rank', justify='right')
        misses.add_column('Ranked first instead', style='red')
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
        table.add_column('Skill', style='bold cyan')
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
