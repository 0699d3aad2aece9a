"""The commands about a skill registry: `publish` skill folders to it, `rollback` one to an earlier revision,
`unpublish` them (and `list --registry`, which shows their revisions)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from ...errors import SkillError, SkillWarning
from .render import err, fail, out, print_skipped

if TYPE_CHECKING:
    from ...registry.skill_registry import SkillRegistry

__all__ = ('Registry', 'open_registry', 'publish', 'rollback', 'unpublish')

_T = TypeVar('_T')

Registry = Annotated[
    str | None,
    typer.Option(
        '--registry',
        '-r',
        help='A skill registry: an SQLAlchemy URL such as sqlite:///skills.db or postgresql+psycopg://host/db.',
        show_default=False,
    ),
]


def open_registry(url: str) -> SkillRegistry:
    """The registry at `url`, or a clear exit when it cannot be used (its module needs the `registry` extra)."""
    try:
        from ...registry.skill_registry import SkillRegistry
    except ImportError:
        fail('the registry needs SQLAlchemy: pip install "skillshelf[registry]"')
    try:
        return SkillRegistry(url)
    except SkillError as error:
        fail(str(error))


def publish(
    directories: Annotated[list[Path], typer.Argument(help='Skill folders, or library directories holding them.')],
    registry: Annotated[str, typer.Option('--registry', '-r', help='The registry URL (see `list --registry`).')],
    force: Annotated[
        bool,
        typer.Option('--force', help='Publish skills the content scan refuses (read them first: `skillshelf scan`).'),
    ] = False,
) -> None:
    """Publish skills to a registry, each with every file byte for byte, as its next revision; every worker sees
    them at its next run. A skill with a critical finding of the content scan is not published unless `--force`.
    Exits 1 if a skill could not be published (each is named, with why)."""
    from ...sources.directory import discover

    target = open_registry(registry)
    published, refused, files, size = 0, 0, 0, 0
    for directory in directories:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always', SkillWarning)
            found = discover(directory)
            for skill in found.skills:
                assert skill.folder is not None
                try:
                    target.publish(skill.folder, force=force)
                    entry = target.history(skill.name)[-1]
                except SkillError as error:
                    err().print(f'not published: {error}', markup=False)
                    refused += 1
                    continue
                out().print(
                    f'published {skill.name}: revision {entry.revision}, {_files(entry.files, entry.bytes)}',
                    markup=False,
                )
                published, files, size = published + 1, files + entry.files, size + entry.bytes
        for warning in caught:
            err().print(f'warning: {warning.message}', markup=False)
        print_skipped(found.skipped)
    noun = 'skill' if published == 1 else 'skills'
    summary = f'\n{published} {noun} published ({_files(files, size)}) to {target.label}'
    out().print(summary + (f'; {refused} not published (see above).' if refused else '.'), markup=False)
    if refused or not published:
        raise typer.Exit(1)


def unpublish(
    names: Annotated[list[str], typer.Argument(help='Names of published skills.')],
    registry: Annotated[str, typer.Option('--registry', '-r', help='The registry URL.')],
    purge: Annotated[
        bool, typer.Option('--purge', help='Delete their history too (they can no longer be rolled back).')
    ] = False,
) -> None:
    """Remove skills from a registry; workers drop them at their next run. Their history stays (`rollback` brings a
    skill back) unless `--purge` is given."""
    target = open_registry(registry)
    missing = [name for name in names if not _run(lambda name=name: target.remove(name, purge=purge))]
    for name in missing:
        err().print(f'no published skill {name!r} in {target.label}', markup=False)
    if missing:
        raise typer.Exit(1)


def rollback(
    name: Annotated[str, typer.Argument(help='The name of a published (or removed) skill.')],
    registry: Annotated[str, typer.Option('--registry', '-r', help='The registry URL.')],
    to: Annotated[
        int | None,
        typer.Option(
            '--to', help='The revision to make live again; default: the one before the live one.', show_default=False
        ),
    ] = None,
) -> None:
    """Make an earlier revision of a skill live again (as a new revision, so the history keeps every step); every
    worker sees it at its next run. `list --registry URL --json` shows each skill's revisions."""
    target = open_registry(registry)
    entry = _run(lambda: target.rollback(name, to))
    out().print(
        f'{name}: revision {entry.revision} is live, a copy of revision {entry.restored} '
        f'({_files(entry.files, entry.bytes)}), at registry version {entry.version}.',
        markup=False,
    )


def _run(action: Callable[[], _T]) -> _T:
    try:
        return action()
    except SkillError as error:
        fail(str(error))


def _files(count: int, size: int) -> str:
    """`82 files, 5.4 MB`."""
    return f'{count:,} file{"" if count == 1 else "s"}, {_size(size)}'


def _size(size: int) -> str:
    for unit, scale in (('GB', 1e9), ('MB', 1e6), ('kB', 1e3)):
        if size >= scale:
            return f'{size / scale:.1f} {unit}'
    return f'{size} bytes'
