"""The catalog: the short, byte-stable list of skills placed in the agent's instructions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from .._text import one_line
from ..errors import SkillError

__all__ = (
    'DEFAULT_CATALOG_BUDGET',
    'DEFAULT_CATALOG_ENTRY',
    'CatalogEntry',
    'CatalogOptions',
    'check_catalog_template',
    'render_catalog',
    'text_fields',
)

DEFAULT_CATALOG_BUDGET = 8000
"""Characters the catalog may use by default (about 2,000 tokens): full descriptions for a library of a dozen or
two typical skills, 250-character ones for a few dozen, names or a pointer to search beyond."""
DEFAULT_CATALOG_ENTRY = '- {name}: {description}'
"""How each skill is listed; `{description}` is shortened as the library grows."""
_DESCRIPTION_WIDTHS = (1024, 250, 80)
"""Description lengths tried in turn: the Agent Skills maximum (so, in full), then shorter."""


@dataclass(frozen=True)
class CatalogOptions:
    """How the catalog in the instructions lists the skills; checked when created.

    Raises:
        SkillError: an option has the wrong type (the message names it), or the entry template cannot be used.
    """

    catalog_budget: int = DEFAULT_CATALOG_BUDGET
    """Characters the catalog in the instructions may use; larger libraries get shorter descriptions, then names,
    then a pointer to `search_skills`."""
    catalog_header: str | None = None
    """The catalog's opening text instead of the default (`{count}` becomes the number of skills)."""
    catalog_entry: str = DEFAULT_CATALOG_ENTRY
    """How the catalog lists each skill: `{name}`, `{description}` and any text field of its frontmatter
    (`{when_to_use}`, `{argument-hint}`, `{license}`, ...); a field a skill lacks shows as nothing."""

    def __post_init__(self) -> None:
        budget = cast(object, self.catalog_budget)
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise SkillError(f'the `catalog_budget` option must be a whole number, not {budget!r}')
        if self.catalog_header is not None and not isinstance(cast(object, self.catalog_header), str):
            raise SkillError(f'the `catalog_header` option must be text, not {self.catalog_header!r}')
        if not isinstance(cast(object, self.catalog_entry), str):
            raise SkillError(f'the `catalog_entry` option must be text, not {self.catalog_entry!r}')
        check_catalog_template(self.catalog_entry)

    def render(self, entries: Sequence[CatalogEntry]) -> str:
        """The catalog of `entries` with these options (see `render_catalog`)."""
        return render_catalog(entries, self.catalog_budget, header=self.catalog_header, entry=self.catalog_entry)


@dataclass(frozen=True)
class CatalogEntry:
    """One skill as the catalog shows it."""

    name: str
    """The skill's name."""
    description: str
    """The skill's description."""
    fields: Mapping[str, str] = field(default_factory=dict[str, str])
    """Other text an entry template may show (`when_to_use`, `argument-hint`, any text in the frontmatter)."""


def render_catalog(
    entries: Sequence[CatalogEntry],
    budget: int = DEFAULT_CATALOG_BUDGET,
    *,
    header: str | None = None,
    entry: str = DEFAULT_CATALOG_ENTRY,
) -> str:
    """Render the catalog within `budget` characters, degrading predictably as the library grows.

    The first form that fits wins: every entry with its whole description (and its `when_to_use`, if it has
    one), descriptions cut to 250 characters, then to 80, names only, and finally a pointer to `search_skills`.
    `header` replaces the opening text (`{count}` becomes the number of skills); `entry` is the template of each
    line, with `{name}`, `{description}` and the entries' `fields`. The text depends only on its arguments, so it
    is identical on every request.
    """
    opening = _header(len(entries)) if header is None else header.replace('{count}', str(len(entries)))
    if not entries:
        return opening
    pointer = f'{opening}\n\nThe library is too large to list here: call `search_skills` to find skills.'
    # Every form below lists every name; when the names alone overflow, none fits, and a 100k-skill
    # library need not render full listings to find that out.
    if sum(len(item.name) + 2 for item in entries) > budget:
        return pointer
    for position, width in enumerate(_DESCRIPTION_WIDTHS):
        text = f'{opening}\n\n' + '\n'.join(_line(item, entry, width, in_full=position == 0) for item in entries)
        if len(text) <= budget:
            return text
    names = f'{opening}\n\nSkills: ' + ', '.join(item.name for item in entries) + '.'
    return names if len(names) <= budget else pointer


def check_catalog_template(entry: str) -> None:
    """Raise a `SkillError` now if `entry` is not a usable entry template, rather than at the first run.

    Raises:
        SkillError: the template has a format error, or does not show `{name}` (the name to load).
    """
    try:
        _render(entry, {'name': 'x', 'description': 'y'})
    except (ValueError, IndexError, KeyError, AttributeError) as error:
        raise SkillError(f'the `catalog_entry` option is not a valid template ({error}): {entry!r}') from None
    if '{name}' not in entry:
        raise SkillError(f'the `catalog_entry` option must show `{{name}}`, the name to load: {entry!r}')


def _line(item: CatalogEntry, template: str, width: int, *, in_full: bool) -> str:
    description = item.description
    when = item.fields.get('when_to_use') or item.fields.get('when-to-use')
    if in_full and when and '{when_to_use}' not in template:
        description = f'{description} {when}'
    values = {**item.fields, 'name': item.name, 'description': one_line(description, width)}
    return ' '.join(_render(template, values).split())  # one line per skill, whatever the fields hold


def _render(template: str, values: Mapping[str, str]) -> str:
    """`template` with `{field}`s from `values`; a field a skill lacks shows as nothing."""
    return template.format_map(_Blank(values))


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return ''


def _header(count: int) -> str:
    noun = 'skill' if count == 1 else 'skills'
    return (
        f'You have {count} {noun}: instructions and tools you load with `load_skill` when a task needs one. '
        '`search_skills` finds skills by task.'
    )


def text_fields(metadata: Mapping[Any, Any]) -> dict[str, str]:
    """The frontmatter fields a catalog entry template may show: those holding text."""
    return {key: value for key, value in metadata.items() if isinstance(key, str) and isinstance(value, str)}
