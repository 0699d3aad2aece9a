"""`include` and `exclude`: which skills of a library an agent gets, by name or glob (`fnmatch` rules: `*`, `?`,
`[abc]`, case-sensitive)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, cast

from ..errors import SkillError

__all__ = ('NameFilter', 'name_patterns')

_WILDCARDS = frozenset('*?[')


def name_patterns(value: object, option: str) -> tuple[str, ...]:
    """An `include` or `exclude` value (a name or glob, or a list of them) as a tuple of patterns.

    Raises:
        SkillError: the value is not text or a list of non-empty texts; the message names `option`.
    """
    items = [value] if isinstance(value, str) else value
    if isinstance(items, (list, tuple)):
        patterns = cast('Sequence[Any]', items)
        if all(isinstance(pattern, str) and pattern.strip() for pattern in patterns):
            return tuple(pattern.strip() for pattern in patterns)
    raise SkillError(f'the `{option}` option must be a skill name or glob (`pdf-*`), or a list of them, not {value!r}')


@dataclass(frozen=True)
class NameFilter:
    """Which skill names are kept: those `include` matches (all when it is empty), except those `exclude` matches.
    Exclude wins: a name both match is left out."""

    include: tuple[str, ...] = ()
    """Names or globs of the skills to keep; empty keeps every skill."""
    exclude: tuple[str, ...] = ()
    """Names or globs of the skills to leave out, even when `include` matches them."""

    def selects(self, name: str) -> bool:
        """Whether the skill called `name` is kept."""
        if any(fnmatchcase(name, pattern) for pattern in self.exclude):
            return False
        return not self.include or any(fnmatchcase(name, pattern) for pattern in self.include)

    def unmatched(self, names: Collection[str]) -> list[str]:
        """The plain names (no wildcard) in `include` that are not among `names` and not excluded: most likely a
        typo, or a skill that was skipped."""
        return [
            pattern
            for pattern in self.include
            if not _WILDCARDS & set(pattern) and pattern not in names and self.selects(pattern)
        ]
