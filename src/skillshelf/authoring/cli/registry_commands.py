"""The commands about a skill registry: `publish` skill folders to it, `rollback` one to an earlier revision,
`unpublish` them, `prune` old revisions (and `list --registry`, which shows their revisions)."""

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

__all__ = ('Registry', 'open_registry', 'prune', 'publish', 'rollback', 'unpublish')

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


def prune(
    registry: Annotated[str, typer.Option('--registry', '-r', help='The registry URL.')],
    keep: Annotated[int, typer.Option('--keep', help="Each skill's latest revisions to keep (the live one counts).")],
    pin: Annotated[
        list[str] | None,
        typer.Option('--pin', help='A revision to keep, as NAME=REVISION (one a worker is pinned to). Repeatable.'),
    ] = None,
    version: Annotated[
        list[int] | None,
        typer.Option('--version', help='A registry version a worker is pinned to: its revisions are kept. Repeatable.'),
    ] = None,
    lock: Annotated[
        list[Path] | None,
        typer.Option('--lock', help='A lock file: the registry revisions it records are kept. Repeatable.'),
    ] = None,
    dry_run: Annotated[bool, typer.Option('--dry-run', help='Say what would be deleted; delete nothing.')] = False,
) -> None:
    """Delete old revisions of every skill, keeping the `--keep` latest, the live one (or a removed skill's
    removal), and those workers and lock files pin; then the file contents no kept revision uses. Workers see no
    change. (`unpublish --purge` deletes one skill's whole history instead.)"""
    target = open_registry(registry)
    pins: dict[str, set[int]] = {}
    for item in pin or ():
        name, equals, number = item.partition('=')
        if not equals or not number.strip().isdigit():
            fail(f'--pin takes NAME=REVISION, such as deploy=3, not {item!r}')
        pins.setdefault(name.strip(), set()).add(int(number))
    for path in lock or ():
        for name, revision in _locked_revisions(path).items():
            pins.setdefault(name, set()).add(revision)
    done = _run(lambda: target.prune(keep, pins=pins, versions=version or (), dry_run=dry_run))
    verb = 'would delete' if dry_run else 'deleted'
    out().print(
        f'{verb} {done.revisions:,} revision{"" if done.revisions == 1 else "s"} and {done.blobs:,} stored '
        f'file content{"" if done.blobs == 1 else "s"} ({_size(done.bytes)}) from {target.label}',
        markup=False,
    )


def _locked_revisions(path: Path) -> dict[str, int]:
    """The registry revisions a lock file records (entries whose revision is a number), by skill name."""
    from ...lock import read_lock

    try:
        entries = read_lock(path).skills
    except SkillError as error:
        fail(str(error))
    revisions = {name: entry.revision or '' for name, entry in entries.items()}
    return {name: int(revision) for name, revision in revisions.items() if revision.isdigit()}


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
