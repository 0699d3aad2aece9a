"""The commands about the library itself: `list` what it holds, `validate` its folders, `index` it ahead of time."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..._text import one_line
from .options import (
    AsJson,
    Directories,
    Hybrid,
    ImportPaths,
    build_library,
    directories_or_default,
    require_skills,
)
from .registry_commands import Registry, open_registry
from .render import (
    emit_json,
    empty_library,
    err,
    fail,
    note_skipped,
    out,
    print_skipped,
    progress_bar,
    skipped_json,
)

if TYPE_CHECKING:
    from ...registry.skill_registry import RegistryEntry, SkillRegistry
    from ...skill import Skill
    from ..lint import SkillReport

__all__ = ('index', 'list_skills', 'validate')


def list_skills(
    directories: Directories = None, skill: ImportPaths = None, as_json: AsJson = False, registry: Registry = None
) -> None:
    """List the skills found, with their tools and files, and every skipped SKILL.md with the reason; with
    `--registry`, each skill's live revision and how many it has (`--json`: every revision). Exits 1 when the
    library is empty."""
    source = open_registry(registry) if registry else None
    library = build_library(directories, skill, registry=source, warn_skipped=False)  # the table lists them
    rows = [(item, item.list_resources()) for item in library.skills.values()]
    history = _history(source) if source is not None else None
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
                        **({} if history is None else _revisions_json(history.get(item.name, []))),
                    }
                    for item, resources in rows
                ],
                'skipped': skipped_json(library.skipped),
                **({} if source is None else {'registry_version': source.current_version()}),
            }
        )
        if not rows:
            raise typer.Exit(1)  # a script that lists a library learns it is empty from the exit status too
        return
    console = out()
    if not rows:
        where = source.label if source is not None else directories_or_default(directories)
        message = empty_library(where, library.skipped)
        console.print(message[0].upper() + message[1:], markup=False)
        print_skipped(library.skipped)
        raise typer.Exit(1)
    # Long cells fold onto more lines rather than being cut, so a long path stays whole in a narrow terminal; no
    # minimum widths, which would push the last columns past the edge.
    table = Table(show_edge=False, pad_edge=False)
    table.add_column('Name', style='bold cyan', overflow='fold')
    table.add_column('Description', overflow='fold')
    table.add_column('Source', style='dim', overflow='fold')
    table.add_column('Tools', justify='right', no_wrap=True)
    table.add_column('Files', justify='right', no_wrap=True)
    if history is not None:
        table.add_column('Revision', justify='right', no_wrap=True)
        table.add_column('Revisions', justify='right', no_wrap=True)
    for item, resources in rows:
        cells = [item.name, one_line(item.description, 120), _source(item, skill)]
        cells += [str(len(item.tool_names)), str(len(resources))]
        if history is not None:
            cells += _revision_cells(history.get(item.name, []))
        table.add_row(*cells)
    console.print(table)
    noun = 'skill' if len(rows) == 1 else 'skills'
    skipped = f', {len(library.skipped)} skipped' if library.skipped else ''
    version = '' if source is None else f' at registry version {source.current_version()}'
    console.print(f'\n{len(rows)} {noun}{skipped}{version}.')
    print_skipped(library.skipped)


def _history(registry: SkillRegistry) -> dict[str, list[RegistryEntry]]:
    """Every revision of every skill in `registry`, by name."""
    from ...errors import SkillError

    by_name: dict[str, list[RegistryEntry]] = {}
    try:
        entries = registry.history()
    except SkillError as error:
        fail(str(error))
    for entry in entries:
        by_name.setdefault(entry.name, []).append(entry)
    return by_name


def _revision_cells(entries: Sequence[RegistryEntry]) -> list[str]:
    """The live revision (`3`, or `3 (= 1)` for a rollback to 1) and how many revisions there are."""
    if not entries:
        return ['–', '0']
    live = entries[-1]
    return [f'{live.revision}' + (f' (= {live.restored})' if live.restored else ''), str(len(entries))]


def _revisions_json(entries: Sequence[RegistryEntry]) -> dict[str, Any]:
    return {
        'revision': entries[-1].revision if entries else None,
        'revisions': [
            {
                'revision': entry.revision,
                'registry_version': entry.version,
                'action': entry.action,
                'restored': entry.restored,
                'published_at': entry.published_at.isoformat() if entry.published_at else None,
                'files': entry.files,
                'bytes': entry.bytes,
            }
            for entry in entries
        ],
    }


def _source(skill: Skill[Any], import_paths: Sequence[str] | None) -> str:
    """Where a skill comes from: its folder, or the import path that named it."""
    if skill.origin is not None:
        return skill.origin
    from ...capability.options import import_skills

    for path in import_paths or ():
        if any(found is skill for found in import_skills(path)):
            return f'python: {path}'
    return 'python'


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
    from ..lint import lint_directories

    with progress_bar('Checking skills', as_json) as progress:

        def start(total: int) -> Callable[[], None]:
            task = progress.add_task('validate', total=total)
            return lambda: progress.advance(task)

        reports, problems = lint_directories(directories_or_default(directories), progress=start)
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
        grid.add_column(style='dim', min_width=18, overflow='fold')
        grid.add_column(ratio=1, overflow='fold')
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


def index(
    directories: Directories = None, skill: ImportPaths = None, hybrid: Hybrid = False, as_json: AsJson = False
) -> None:
    """Build the search index now and cache it, so an agent's first search loads it instead of building it.

    For a deploy or container build step: run it where the agent runs, with the same skill paths and
    SKILLSHELF_CACHE_DIR. --hybrid embeds the skills too. Libraries of 200 or more folder skills are cached.
    """
    library = build_library(directories, skill, hybrid=hybrid)
    require_skills(library, directories)
    note_skipped(library.skipped, as_json)
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
                'skipped': skipped_json(library.skipped),
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
    from ...files import cache_directory
    from ...ranking.cache import CACHE_MIN_SKILLS

    if path is not None:
        return None if path.is_file() else f'{path.parent} could not be written'
    if cache_directory() is None:
        return 'caching is off (SKILLSHELF_CACHE_DIR)'
    return f'libraries of fewer than {CACHE_MIN_SKILLS} folder skills are not cached; they index quickly at the first search'
