"""The `check` command: what each skill's scripts need (commands, Python modules and packages, a Python version)
and which of it the environment that would run them lacks."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from .options import AsJson, Directories, ImportPaths, build_library, require_skills
from .render import emit_json, err, fail, note_skipped, out, skipped_json

if TYPE_CHECKING:
    from ..needs import Checked, Facts, SkillCheck

__all__ = ('check',)

SHOWN_PLACES = 2
"""How many of the files that need something the table names (the rest are counted; `--json` has them all)."""
_MARKS = {'ok': ('✓', 'green'), 'missing': ('✗', 'bold red'), 'unknown': ('?', 'yellow')}


def check(
    directories: Directories = None,
    skill: ImportPaths = None,
    python: Annotated[
        Path | None,
        typer.Option(
            '--python',
            help='The interpreter scripts run on, as SkillSandbox(python=...) names it. Default: this one, the '
            "agent's own, which SkillSandbox() uses.",
            show_default=False,
        ),
    ] = None,
    local: Annotated[
        bool,
        typer.Option(
            '--local',
            help="Look programs up on this machine's PATH, as a LocalWorkspace runs them, not in the sandbox.",
        ),
    ] = False,
    mount: Annotated[
        list[Path] | None,
        typer.Option('--mount', help='A host path the sandbox shows, as SkillSandbox(mounts=[...]). Repeatable.'),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Show what each skill's scripts need, and what the environment that would run them lacks.

    Needs come from the `compatibility` field, `#!` lines, Python imports and the programs scripts start,
    shell scripts' commands, PEP 723 headers and requirements.txt. Modules and packages are checked by running the
    interpreter; programs are looked up as SkillSandbox sees them (its PATH, only the paths it shows) unless
    --local. Exits 1 if something is missing (optional needs, which scripts check for first, do not count), 2 if
    the check cannot run.
    """
    from ..needs import Environment, InterpreterError, check_needs, scan_skill

    library = build_library(directories, skill)
    require_skills(library, directories)
    note_skipped(library.skipped, as_json)
    environment = Environment(
        python=str(python.absolute()) if python is not None else Environment().python,
        local=local,
        mounts=tuple(str(path) for path in mount or ()),
    )
    with err().status(f'Reading {len(library):,} skills…') if not as_json else nullcontext():
        needs = [scan_skill(item) for item in library.skills.values()]
        try:
            facts, results = check_needs(needs, environment)
        except InterpreterError as error:
            fail(str(error), code=2)
    sources = {item.name: item.origin for item in library.skills.values()}
    missing = sum(result.missing for result in results)
    if as_json:
        emit_json(
            {
                'environment': _facts_json(facts),
                'missing': missing,
                'skills': [_skill_json(result, sources.get(result.skill.name)) for result in results],
                'skipped': skipped_json(library.skipped),
            }
        )
    else:
        _print(facts, results, missing, sources)
    if missing:
        raise typer.Exit(1)


def _print(facts: Facts, results: Sequence[SkillCheck], missing: int, sources: dict[str, str | None]) -> None:
    console = out()
    where = (
        "this machine's PATH (a LocalWorkspace)"
        if facts.local
        else 'what SkillSandbox shows: its PATH, and only /usr, the system folders, the interpreter and its mounts'
    )
    console.print(
        Text.assemble(
            ('Environment: ', 'bold'),
            f'{facts.python} (Python {facts.version}, {facts.prefix}); programs as found on {where}.',
        )
    )
    quiet: list[str] = []
    for result in results:
        if not result.checked and not result.skill.compatibility and not result.skill.notes:
            quiet.append(result.skill.name)
            continue
        _print_skill(result, sources.get(result.skill.name))
    if quiet:
        console.print(
            Text(f'\nNothing to check in {len(quiet)} skill{"s" if len(quiet) != 1 else ""}: ', 'dim'), end=''
        )
        console.print(', '.join(quiet), style='dim', markup=False)
    lacking = sum(1 for result in results if result.missing)
    optional = sum(
        1 for result in results for item in result.checked if item.status == 'missing' and item.need.optional
    )
    noun = 'skill' if len(results) == 1 else 'skills'
    summary = f'\n{len(results)} {noun} checked: '
    summary += f'{missing} missing in {lacking}' if missing else 'nothing missing'
    summary += f'; {optional} optional missing' if optional else ''
    console.print(summary + '.', style='bold red' if missing else 'bold green', markup=False)


def _print_skill(result: SkillCheck, source: str | None) -> None:
    console = out()
    title = Text.assemble(('\n' + result.skill.name, 'bold cyan'), ('  ' + (source or 'python'), 'dim'))
    if result.missing:
        title.append(f'  {result.missing} missing', 'bold red')
    console.print(title)
    if result.checked:
        table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2, 0, 0))
        table.add_column('', no_wrap=True)
        table.add_column('Need', style='bold', overflow='fold')
        table.add_column('Kind', style='dim', no_wrap=True)
        table.add_column('Found', overflow='fold')
        table.add_column('Needed by', style='dim', overflow='fold')
        for item in result.checked:
            mark, style = _MARKS[item.status]
            if item.need.optional and item.status == 'missing':
                mark, style = '–', 'yellow'
            table.add_row(Text(mark, style), _need_text(item), item.need.kind, _found_text(item), _places(item))
        console.print(table)
    if result.skill.compatibility:
        console.print(Text.assemble(('compatibility: ', 'dim'), ' '.join(result.skill.compatibility.split())))
    for note in result.skill.notes:
        console.print(Text.assemble(('note: ', 'yellow'), note))


def _need_text(item: Checked) -> Text:
    need = item.need
    text = need.spec if need.kind in ('package', 'python') and need.spec else need.name
    if need.kind == 'python':
        text = f'python {need.spec}'
    if need.alternatives:
        text += f' (or {", ".join(need.alternatives)})'
    if need.imports and need.imports != (need.name,):
        text += f' (import {", ".join(need.imports)})'
    return Text(text)  # not markup: `markitdown[pptx]` is a requirement, not a style


def _found_text(item: Checked) -> Text:
    text = Text(item.detail, 'red' if item.counts else '')
    if item.need.optional and item.status == 'missing':
        text.append(' (optional: the script checks for it)', 'yellow')
    if item.hint:
        text.append(f' → {item.hint}', 'cyan')
    return text


def _places(item: Checked) -> Text:
    places = item.need.found_in
    shown = ', '.join(places[:SHOWN_PLACES])
    return Text(shown + (f' +{len(places) - SHOWN_PLACES} more' if len(places) > SHOWN_PLACES else ''))


def _facts_json(facts: Facts) -> dict[str, Any]:
    return {
        'python': facts.python,
        'version': facts.version,
        'prefix': facts.prefix,
        'programs_from': 'local' if facts.local else 'sandbox',
        'path': facts.path,
        'versions_checked_with': facts.evaluator,
    }


def _skill_json(result: SkillCheck, source: str | None) -> dict[str, Any]:
    return {
        'name': result.skill.name,
        'source': source,
        'missing': result.missing,
        'compatibility': result.skill.compatibility,
        'notes': list(result.skill.notes),
        'needs': [
            {
                'kind': item.need.kind,
                'name': item.need.name,
                'spec': item.need.spec or None,
                'alternatives': list(item.need.alternatives),
                'imports': list(item.need.imports),
                'found_in': list(item.need.found_in),
                'optional': item.need.optional,
                'status': item.status,
                'detail': item.detail,
                'hint': item.hint,
            }
            for item in result.checked
        ],
    }
