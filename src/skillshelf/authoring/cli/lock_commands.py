"""The commands about lock files: `lock` records each skill's source, revision and content digest (and `--check`s
them in CI), `diff` shows what an update of the lock would accept."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ...errors import SkillError
from .options import directories_or_default
from .render import err, fail, out

if TYPE_CHECKING:
    from ..locking.reading import ReadForLock

__all__ = ('diff', 'lock')

_Directories = Annotated[
    list[Path] | None,
    typer.Argument(
        help='Library directories: each holds skill folders, or is one. Default (without --source or --registry): '
        './skills if it exists, else .',
        show_default=False,
        metavar='DIR',
    ),
]
_Sources = Annotated[
    list[str] | None,
    typer.Option(
        '--source',
        help='Another source, as an agent spec\'s `sources` names it: JSON such as {"git": URL, "ref": "v1.2"}, '
        '{"package": "acme_skills"} or {"registry": URL}, or an import path (package.module:attribute). Repeatable.',
        show_default=False,
    ),
]
_Registry = Annotated[
    str | None,
    typer.Option('--registry', '-r', help='A skill registry URL: the same as --source \'{"registry": URL}\'.'),
]
_LockFile = Annotated[Path, typer.Option('--output', '-o', '--lock', help='The lock file.')]


def lock(
    directories: _Directories = None,
    source: _Sources = None,
    registry: _Registry = None,
    output: _LockFile = Path('skills.lock'),
    check: Annotated[
        bool, typer.Option('--check', help='Write nothing: exit 1, saying what changed, when the skills differ.')
    ] = False,
    update: Annotated[
        bool, typer.Option('--update', help='Show what changed since the lock file was written, then write it.')
    ] = False,
) -> None:
    """Record each skill's source, revision (git commit, package version, registry revision) and content digest
    (every file's SHA-256) in a lock file; `Skills(lock=FILE)` then refuses any skill whose files differ. An existing
    lock file is replaced only with `--update`, which first shows what changed (as `skillshelf diff` does)."""
    from ...lock import read_lock
    from ..locking.diff import lock_changes, render_changes

    now = _read(directories, source, registry, output)
    if not output.exists():
        if check:
            fail(f'there is no lock file {output}; write it with `skillshelf lock -o {output}`')
        now.lock.write(output)
        out().print(f'locked {_skills(len(now.skills))} in {output}', markup=False)
        return
    try:
        changes = lock_changes(read_lock(output), now)
    except SkillError as error:
        fail(str(error))
    if not changes:
        moved = update and now.lock.dumps() != output.read_text(encoding='utf-8')
        if moved:  # the same content at other revisions (a new commit that left the skills alone)
            now.lock.write(output)
        done = 'has its revisions updated' if moved else 'is up to date'
        out().print(f'{output} {done}: {_skills(len(now.skills))}, as locked', markup=False)
        return
    if check:
        out().print(render_changes(changes, diffs=False), markup=False, highlight=False)
        err().print(f'{output} differs from the skills in {_skills(len(changes))} (above)', markup=False)
        raise typer.Exit(1)
    if not update:
        fail(
            f'{output} exists and differs from the skills in {_skills(len(changes))}: see the changes with '
            f'`skillshelf diff --lock {output}`, then write them with `skillshelf lock --update -o {output}`'
        )
    out().print(render_changes(changes), markup=False, highlight=False)
    now.lock.write(output)
    out().print(f'\nupdated {output}: {_skills(len(changes))} changed, {_skills(len(now.skills))} locked', markup=False)


def diff(
    directories: _Directories = None,
    source: _Sources = None,
    registry: _Registry = None,
    output: _LockFile = Path('skills.lock'),
) -> None:
    """Show what `skillshelf lock --update` would accept: the skills added, removed and changed since the lock file
    was written, each changed file, and a unified diff of each text file whose earlier bytes the source still has
    (a git source at the locked commit, a registry at the locked revision)."""
    from ...lock import read_lock
    from ..locking.diff import lock_changes, render_changes

    now = _read(directories, source, registry, output)
    try:
        changes = lock_changes(read_lock(output), now)
    except SkillError as error:
        fail(str(error))
    if not changes:
        out().print(f'no change: {_skills(len(now.skills))}, as {output} records them', markup=False)
        return
    out().print(render_changes(changes), markup=False, highlight=False)


def _read(
    directories: Sequence[Path] | None, sources: Sequence[str] | None, registry: str | None, lock_file: Path
) -> ReadForLock:
    from ..locking.reading import read_for_lock

    specs: list[str | dict[str, Any]] = [_spec(text) for text in sources or ()]
    specs += [{'registry': registry}] if registry else []
    folders = list(directories or ()) if specs else directories_or_default(directories)
    warned: list[str] = []
    try:
        now = read_for_lock(folders, specs, lock_file, warned=warned)
    except SkillError as error:
        fail(str(error))
    for warning in warned:
        err().print(f'warning: {warning}', markup=False)
    for item in now.skipped:
        err().print(f'skipped {item.path}: {item.problem}', markup=False)
    return now


def _spec(text: str) -> str | dict[str, Any]:
    """A `--source` value: JSON for a short form, else an import path."""
    if not text.lstrip().startswith('{'):
        return text
    try:
        return json.loads(text)
    except ValueError as error:
        fail(f'--source {text!r} is not valid JSON ({error}); give e.g. \'{{"git": "https://...", "ref": "main"}}\'')


def _skills(count: int) -> str:
    return f'{count:,} skill{"" if count == 1 else "s"}'
