"""The options of `Skills`, as the value objects that declare, document and check them, and its Python skills.

`Skills` keeps one flat field per option, as agent specs (YAML/JSON) need, and builds each value object from those
fields once, at construction: `LibraryOptions` and `SearchOptions` for the library, `CatalogOptions`,
`ReminderOptions`, `ScriptOptions` and `UnloadOptions` for the capability. Every option is declared once, in its value object.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar, cast

from .._imports import import_object
from ..errors import SkillError
from ..library import LibraryOptions
from ..ranking.ranker import SearchOptions
from ..skill import Skill
from .catalog import CatalogOptions
from .reminders import ReminderOptions
from .script_tool import ScriptOptions
from .state import UnloadOptions

__all__ = ('OPTION_GROUPS', 'SkillsOptions', 'import_skills', 'resolve_skills', 'skill_list')

OPTION_GROUPS = (LibraryOptions, SearchOptions, CatalogOptions, ReminderOptions, ScriptOptions, UnloadOptions)
"""The value objects whose fields are the options of `Skills`."""

_Options = TypeVar('_Options')


@dataclass(frozen=True)
class SkillsOptions:
    """Every option of one `Skills`, checked."""

    library: LibraryOptions
    search: SearchOptions
    catalog: CatalogOptions
    reminders: ReminderOptions
    scripts: ScriptOptions
    unloading: UnloadOptions

    @classmethod
    def of(cls, values: object) -> SkillsOptions:
        """The options whose values are the attributes of `values` (a `Skills`) named like them.

        Raises:
            SkillError: an option is not valid (the message names it).
        """
        return cls(*(_group(kind, values) for kind in OPTION_GROUPS))  # pyright: ignore[reportArgumentType]


def _group(kind: type[_Options], values: object) -> _Options:
    return kind(**{option.name: getattr(values, option.name) for option in fields(kind) if option.init})  # pyright: ignore[reportArgumentType]


def import_skills(path: str) -> list[Skill[Any]]:
    """Import the `Skill` (or list of skills) named by `'package.module:attribute'`.

    Raises:
        SkillError: the path is malformed, cannot be imported, or does not name skills.
    """
    target = import_object(path, 'skill')
    if isinstance(target, Skill):
        return [cast('Skill[Any]', target)]
    if isinstance(target, (list, tuple)):
        items = cast('Sequence[object]', target)  # pyright: ignore[reportUnknownArgumentType]
        if all(isinstance(item, Skill) for item in items):
            return cast('list[Skill[Any]]', list(items))
    kind = type(target).__name__  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    raise SkillError(f'{path!r} is a {kind}, not a Skill or a list of skills')


def resolve_skills(value: object) -> list[Skill[Any]]:
    """The `skills` option as skills, import paths imported."""
    skills: list[Skill[Any]] = []
    for item in skill_list(value):
        skills.extend(import_skills(item) if isinstance(item, str) else [item])
    return skills


def skill_list(value: object) -> list[Skill[Any] | str]:
    """The `skills` option as a list of skills and import paths, not yet imported."""
    if isinstance(value, (str, Skill)):
        return [cast('Skill[Any] | str', value)]
    if isinstance(value, (list, tuple)) and all(
        isinstance(item, (str, Skill)) for item in cast('Sequence[Any]', value)
    ):
        return list(cast('Sequence[Skill[Any] | str]', value))
    raise SkillError(f'the `skills` option must be skills or import paths (strings), not {value!r}')
