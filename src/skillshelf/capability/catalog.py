"""The catalog: the short, byte-stable list of skills placed in the agent's instructions."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, cast

from .._text import one_line
from ..errors import SkillError
from ..library.name_filter import name_patterns

__all__ = (
    'DEFAULT_CATALOG_BUDGET',
    'DEFAULT_CATALOG_ENTRY',
    'CatalogEntry',
    'CatalogOptions',
    'check_catalog_template',
    'lists_every_skill_whole',
    'render_catalog',
    'text_fields',
)

DEFAULT_CATALOG_BUDGET = 8000
"""Characters the catalog may use by default (about 2,000 tokens): full descriptions for a library of a dozen or
two typical skills, 250-character ones for a few dozen, names or a pointer to search beyond."""
DEFAULT_CATALOG_ENTRY = '- {name}: {description}'
"""How each skill is listed; `{description}` is shortened as the library grows."""
MIN_DESCRIPTION_WIDTH = 60
"""Below this many characters a cut description says too little: the catalog lists names instead."""


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
    pinned: str | Sequence[str] = ()
    """Names or globs of the skills the catalog lists with their whole description whatever the library's size
    (they count against the budget first)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, 'pinned', name_patterns(self.pinned, 'pinned'))
        budget = cast(object, self.catalog_budget)
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise SkillError(f'the `catalog_budget` option must be a whole number, not {budget!r}')
        if self.catalog_header is not None and not isinstance(cast(object, self.catalog_header), str):
            raise SkillError(f'the `catalog_header` option must be text, not {self.catalog_header!r}')
        if not isinstance(cast(object, self.catalog_entry), str):
            raise SkillError(f'the `catalog_entry` option must be text, not {self.catalog_entry!r}')
        check_catalog_template(self.catalog_entry)

    def render(self, entries: Sequence[CatalogEntry], *, search: bool = True) -> str:
        """The catalog of `entries` with these options (see `render_catalog`)."""
        return render_catalog(
            entries,
            self.catalog_budget,
            header=self.catalog_header,
            entry=self.catalog_entry,
            pinned=self.pinned_names(entries),
            search=search,
        )

    def lists_every_skill_whole(self, entries: Sequence[CatalogEntry]) -> bool:
        """Whether the catalog of `entries` lists every skill whole (see `lists_every_skill_whole`)."""
        return lists_every_skill_whole(entries, self.catalog_budget, entry=self.catalog_entry)

    def pinned_names(self, entries: Sequence[CatalogEntry]) -> set[str]:
        """The names of `entries` that `pinned` matches."""
        patterns = cast('tuple[str, ...]', self.pinned)
        return {item.name for item in entries if any(fnmatchcase(item.name, pattern) for pattern in patterns)}


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
    pinned: Collection[str] = (),
    search: bool = True,
) -> str:
    """Render the catalog within `budget` characters, degrading predictably as the library grows.

    The first form that fits wins: every entry with its whole description (and its `when_to_use`, if it has one);
    then every description cut to the longest width that lets them all fit, so the budget is used and shared fairly
    (short descriptions stay whole, long ones are cut alike), down to `MIN_DESCRIPTION_WIDTH`; then names only; and
    finally a pointer to `search_skills`. The `pinned` skills (names) keep their whole descriptions in every form
    but the pointer. `header` replaces the opening text (`{count}` becomes the number of skills; `search` says
    whether it mentions `search_skills`); `entry` is the template of each line, with `{name}`, `{description}` and
    the entries' `fields`. The text depends only on its arguments, so it is identical on every request.
    """
    return _catalog(entries, budget, header, entry, pinned, search)[0]


def lists_every_skill_whole(
    entries: Sequence[CatalogEntry], budget: int = DEFAULT_CATALOG_BUDGET, *, entry: str = DEFAULT_CATALOG_ENTRY
) -> bool:
    """Whether the catalog of `entries` lists every skill with its whole description (then `search_skills` adds
    nothing the model does not already see)."""
    return _catalog(entries, budget, None, entry, (), search=False)[1]


def _catalog(
    entries: Sequence[CatalogEntry],
    budget: int,
    header: str | None,
    entry: str,
    pinned: Collection[str],
    search: bool,
) -> tuple[str, bool]:
    opening = _header(len(entries), search) if header is None else header.replace('{count}', str(len(entries)))
    if not entries:
        return opening, True
    pointer = f'{opening}\n\nThe library is too large to list here: call `search_skills` to find skills.'
    # Every form below lists every name; when the names alone overflow, none fits, and a 100k-skill
    # library need not render full listings to find that out.
    if sum(len(item.name) + 2 for item in entries) > budget:
        return pointer, False
    whole = _listing(opening, entries, entry, None, pinned)
    if len(whole) <= budget:
        return whole, True
    longest = max(len(' '.join(item.description.split())) for item in entries)
    if len(_listing(opening, entries, entry, MIN_DESCRIPTION_WIDTH, pinned)) <= budget:
        low, high = MIN_DESCRIPTION_WIDTH, longest  # the widest cut that fits: lengths grow with the width
        while low < high:
            middle = (low + high + 1) // 2
            if len(_listing(opening, entries, entry, middle, pinned)) <= budget:
                low = middle
            else:
                high = middle - 1
        return _listing(opening, entries, entry, low, pinned), False
    kept = [item for item in entries if item.name in pinned]
    others = [item.name for item in entries if item.name not in pinned]
    lines = [_line(item, entry, None) for item in kept]
    names = '\n\n'.join([opening, *(['\n'.join(lines)] if lines else []), f'Skills: {", ".join(others)}.'])
    return (names, False) if len(names) <= budget else (pointer, False)


def _listing(
    opening: str, entries: Sequence[CatalogEntry], template: str, width: int | None, pinned: Collection[str]
) -> str:
    """The catalog listing every entry, descriptions cut to `width` (`None`: whole, with `when_to_use`)."""
    lines = [_line(item, template, None if item.name in pinned else width) for item in entries]
    return f'{opening}\n\n' + '\n'.join(lines)


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


def _line(item: CatalogEntry, template: str, width: int | None) -> str:
    """One entry; `width=None` is its whole description, with its `when_to_use` unless the template shows that."""
    description = item.description
    when = item.fields.get('when_to_use') or item.fields.get('when-to-use')
    if width is None and when and '{when_to_use}' not in template:
        description = f'{description} {when}'
    text = ' '.join(description.split())
    values = {**item.fields, 'name': item.name, 'description': text if width is None else one_line(text, width)}
    return ' '.join(_render(template, values).split())  # one line per skill, whatever the fields hold


def _render(template: str, values: Mapping[str, str]) -> str:
    """`template` with `{field}`s from `values`; a field a skill lacks shows as nothing."""
    return template.format_map(_Blank(values))


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return ''


def _header(count: int, search: bool) -> str:
    noun = 'skill' if count == 1 else 'skills'
    finding = ' `search_skills` finds skills by task.' if search else ''
    return (
        f'You have {count} {noun}. Load one with `load_skill` only when the task needs it; run its scripts rather '
        f'than rewriting them, and say which skill you use.{finding}'
    )


def text_fields(metadata: Mapping[Any, Any]) -> dict[str, str]:
    """The frontmatter fields a catalog entry template may show: those holding text."""
    return {key: value for key, value in metadata.items() if isinstance(key, str) and isinstance(value, str)}
