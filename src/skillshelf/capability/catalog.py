"""The catalog: the short, byte-stable list of skills placed in the agent's instructions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._text import one_line

__all__ = ('CatalogEntry', 'render_catalog')

DEFAULT_CATALOG_BUDGET = 3000
"""Characters the catalog may use by default; about 750 tokens."""
_SHORT_DESCRIPTION = 80
_FULL_DESCRIPTION = 250


@dataclass(frozen=True)
class CatalogEntry:
    """One skill as the catalog shows it."""

    name: str
    """The skill's name."""
    description: str
    """The skill's description."""


def render_catalog(entries: Sequence[CatalogEntry], budget: int = DEFAULT_CATALOG_BUDGET) -> str:
    """Render the catalog within `budget` characters, degrading predictably as the library grows.

    The first form that fits wins: every description (up to 250 characters each), descriptions
    shortened to 80 characters, names only, and finally just a pointer to `search_skills`.
    The text depends only on `entries` and `budget`, so it is identical on every request.
    """
    header = _header(len(entries))
    if not entries:
        return header
    pointer = f'{header}\n\nThe library is too large to list here: call `search_skills` to find skills.'
    # Every form below lists every name; when the names alone overflow, none fits, and a 100k-skill
    # library need not render two full listings to find that out.
    if sum(len(entry.name) + 2 for entry in entries) > budget:
        return pointer
    forms = (
        lambda: _bulleted(entries, _FULL_DESCRIPTION),
        lambda: _bulleted(entries, _SHORT_DESCRIPTION),
        lambda: 'Skills: ' + ', '.join(entry.name for entry in entries) + '.',
    )
    for form in forms:
        text = f'{header}\n\n{form()}'
        if len(text) <= budget:
            return text
    return pointer


def _header(count: int) -> str:
    noun = 'skill' if count == 1 else 'skills'
    return (
        f'You have {count} {noun}: instructions and tools you can load when a task needs them.\n'
        'Call `search_skills` to find skills, `load_skill` to read a skill and unlock its tools '
        '(usable from your next response), `read_skill_resource` for its files, '
        'and `unload_skill` when you are done with it.'
    )


def _bulleted(entries: Sequence[CatalogEntry], width: int) -> str:
    return '\n'.join(f'- {entry.name}: {one_line(entry.description, width)}' for entry in entries)
