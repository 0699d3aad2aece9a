"""The commands about a skill registry: `publish` skill folders to it, `unpublish` them (and `list --registry`)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import SkillError, SkillWarning
from .render import err, fail, out, print_skipped

if TYPE_CHECKING:
    from ..sources.registry import SkillRegistry

__all__ = ('Registry', 'open_registry', 'publish', 'unpublish')

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
        from ..sources.registry import SkillRegistry
    except ImportError:
        fail('the registry needs SQLAlchemy: pip install "skillshelf[registry]"')
    try:
        return SkillRegistry(url)
    except SkillError as error:
        fail(str(error))


def publish(
    directories: Annotated[list[Path], typer.Argument(help='Skill folders, or library directories holding them.')],
    registry: Annotated[str, typer.Option('--registry', '-r', help='The registry URL (see `list --registry`).')],
) -> None:
    """Publish skills to a registry, replacing those of the same names; every worker sees them at its next run."""
    from ..sources.directory import discover

    target = open_registry(registry)
    published = 0
    for directory in directories:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always', SkillWarning)
            found = discover(directory)
            for skill in found.skills:
                assert skill.folder is not None
                try:
                    target.publish(skill.folder)
                except SkillError as error:
                    err().print(f'not published: {error}', markup=False)
                    continue
                out().print(f'published {skill.name}', markup=False)
                published += 1
        for warning in caught:
            err().print(f'warning: {warning.message}', markup=False)
        print_skipped(found.skipped)
    out().print(f'\n{published} published to {target.label}.', markup=False)
    if not published:
        raise typer.Exit(1)


def unpublish(
    names: Annotated[list[str], typer.Argument(help='Names of published skills.')],
    registry: Annotated[str, typer.Option('--registry', '-r', help='The registry URL.')],
) -> None:
    """Remove skills from a registry."""
    target = open_registry(registry)
    missing = [name for name in names if not target.remove(name)]
    for name in missing:
        err().print(f'no skill {name!r} in {target.label}', markup=False)
    if missing:
        raise typer.Exit(1)
