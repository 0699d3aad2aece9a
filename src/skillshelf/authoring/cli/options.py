"""The options the commands share, and the library or capability they select, built as an agent would build it.

Declaring the options imports only Typer: the library and pydantic-ai are imported when a command builds one.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ...capability.catalog import DEFAULT_CATALOG_BUDGET  # a light module: the standard library and skillshelf.errors
from ...errors import SkillError, SkillWarning
from .render import empty_library, fail

if TYPE_CHECKING:
    from ...capability.skills import Skills
    from ...library import SkillLibrary
    from ...ranking.ranker import SearchMode
    from ...skill import Skill
    from ...sources.base import SkillSource

__all__ = (
    'DEFAULT_CATALOG_BUDGET',
    'SEARCH_LIMIT_MAX',
    'AsJson',
    'Directories',
    'Hybrid',
    'ImportPaths',
    'build_capability',
    'build_library',
    'directories_or_default',
    'require_skills',
)

SEARCH_LIMIT_MAX = 20
"""The most results `search --limit` asks for: `MAX_SEARCH_LIMIT` of `search_skills`, repeated here because its
module imports pydantic-ai (a test checks that the two agree)."""

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


def directories_or_default(directories: Sequence[Path] | None) -> list[Path]:
    """The directories given, else `./skills` if it exists, else the working directory."""
    if directories:
        return list(directories)
    return [Path('skills')] if Path('skills').is_dir() else [Path('.')]


def build_library(
    directories: Sequence[Path] | None,
    import_paths: Sequence[str] | None,
    *,
    hybrid: bool = False,
    registry: SkillSource | None = None,
    warn_skipped: bool = True,
) -> SkillLibrary:
    """The library exactly as the `Skills` capability builds it; skipped folders are in `.skipped`. With a
    `registry`, the directories default to none.

    Its warnings are shown once it is built (one line each, see `one_line_warnings`), except, without
    `warn_skipped`, those repeating a skipped folder of `.skipped`, for a command that lists them itself.
    """
    from ...capability.skills import RESERVED_TOOL_NAMES
    from ...library import LibraryOptions, SkillLibrary
    from ...ranking.ranker import SearchOptions

    skills = _python_skills(import_paths)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', SkillWarning)
        try:
            options = LibraryOptions(
                directories=list(directories or ()) if registry is not None else directories_or_default(directories),
                sources=[registry] if registry is not None else [],
            )
            search = SearchOptions(search=_mode(hybrid))
            library = SkillLibrary.build(skills, options, search, reserved_tool_names=RESERVED_TOOL_NAMES)
        except SkillError as error:
            _show(caught)
            fail(str(error))
    listed = set[str]() if warn_skipped else {f'skipped {item.path}: {item.problem}' for item in library.skipped}
    _show([warning for warning in caught if str(warning.message) not in listed])
    return library


def build_capability(
    directories: Sequence[Path] | None,
    import_paths: Sequence[str] | None,
    budget: int = DEFAULT_CATALOG_BUDGET,
    *,
    hybrid: bool = False,
) -> Skills[Any]:
    """The `Skills` capability an agent given these options would use; its warnings are shown as they are raised."""
    from ...capability.skills import Skills

    skills = _python_skills(import_paths)
    try:
        return Skills(
            list(directories_or_default(directories)), skills=skills, catalog_budget=budget, search=_mode(hybrid)
        )
    except SkillError as error:
        fail(str(error))


def require_skills(library: SkillLibrary, directories: Sequence[Path] | None) -> None:
    """Exit with `the library is empty` (and what to try) when there is no skill to show or rank."""
    if not len(library):
        fail(empty_library(directories_or_default(directories), library.skipped))


def _show(caught: Sequence[warnings.WarningMessage]) -> None:
    for warning in caught:
        warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)


def _python_skills(import_paths: Sequence[str] | None) -> list[Skill[Any]]:
    if not import_paths:
        return []
    from ...capability.options import import_skills

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # the console script, like `python -m`, imports from where it runs
    try:
        return [skill for path in import_paths for skill in import_skills(path)]
    except SkillError as error:
        fail(str(error))


def _mode(hybrid: bool) -> SearchMode:
    return 'hybrid' if hybrid else 'lexical'
