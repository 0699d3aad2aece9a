"""Reading the options of `Skills` that name things: skills and encoders by import path, directories by path.

Agent specs pass options unvalidated, so each reader names the option in its error.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from .._imports import import_object
from ..errors import SkillError
from ..name_filter import name_patterns
from ..ranking.semantic import Encoder
from ..skill import Skill
from .catalog import check_catalog_template
from .meta_tools import MAX_SEARCH_LIMIT

__all__ = ('check_options', 'directory_list', 'import_encoder', 'import_skills', 'resolve_skills', 'skill_list')


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
    raise SkillError(f'the `skills` option of Skills must be skills or import paths (strings), not {value!r}')


def directory_list(value: object, option: str) -> list[str | Path]:
    """A directories option (`directories`, `trusted_directories`) as a list of paths."""
    if isinstance(value, (str, Path)):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(item, (str, Path)) for item in cast('Sequence[Any]', value)):
        return list(cast('Sequence[str | Path]', value))
    raise SkillError(f'the `{option}` option of Skills must be a string or a list of strings, not {value!r}')


def import_encoder(path: str) -> Encoder:
    """The `encoder` option's import path, imported (checked for being callable when the library is built)."""
    return cast('Encoder', import_object(path, 'encoder'))


def check_options(options: Any) -> None:
    """Check the options of a `Skills` (`options`): spec values arrive unvalidated, so a mistake is caught here, at
    construction, with the option's name.

    Raises:
        SkillError: an option has the wrong type or is out of range.
    """
    for option in ('catalog_budget', 'search_limit', 'reminders'):
        value = getattr(options, option)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SkillError(f'the `{option}` option of Skills must be a whole number, not {value!r}')
    if not 1 <= options.search_limit <= MAX_SEARCH_LIMIT:
        raise SkillError(f'the `search_limit` option of Skills must be from 1 to {MAX_SEARCH_LIMIT}')
    for option in ('reminder_threshold', 'search_threshold'):
        threshold = cast('object', getattr(options, option))
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
            raise SkillError(f'the `{option}` option of Skills must be a number from 0 to 1, not {threshold!r}')
    for option in ('include', 'exclude'):
        name_patterns(getattr(options, option), option)
    for option in ('catalog_header', 'catalog_entry'):
        value = getattr(options, option)
        if not isinstance(value, str) and not (value is None and option == 'catalog_header'):
            raise SkillError(f'the `{option}` option of Skills must be text, not {value!r}')
    check_catalog_template(options.catalog_entry)
    for option in ('strict', 'allow_hard_links', 'auto_reload', 'script_approval', 'standard_directories'):
        if not isinstance(getattr(options, option), bool):
            raise SkillError(f'the `{option}` option of Skills must be true or false, not {getattr(options, option)!r}')
