"""`SkillSource`: the protocol every source of skills follows, and what one read of a source returns."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..discovery import SkippedSkill
from ..skill import Skill

__all__ = ('SkillSource', 'SourceSkills', 'skipped')


@dataclass
class SourceSkills:
    """One read of a source: its skills in a deterministic order, and every entry that is not a skill."""

    skills: list[Skill[Any]] = field(default_factory=list[Skill[Any]])
    """The usable skills, in the order the catalog lists them (earlier ones win name clashes)."""
    skipped: list[SkippedSkill] = field(default_factory=list[SkippedSkill])
    """Entries that are not skills, each with where it is and why; the library warns about each."""


@runtime_checkable
class SkillSource(Protocol):
    """Where a library gets skills besides its directories: a package, a git repository, a registry, your catalog.

    ```python
    class Catalog:
        def read_skills(self) -> SourceSkills:
            return SourceSkills([Skill.from_markdown(text, origin=f'catalog/{key}') for key, text in fetch_all()])

        def version(self) -> Hashable:
            return fetch_etag()
    ```
    """

    def read_skills(self) -> SourceSkills:
        """Every skill the source holds now. Raise `SkillError` when the source cannot be read at all."""
        ...

    def version(self) -> Hashable:
        """A cheap token that changes whenever `read_skills` would return other skills (`None` if it never changes);
        checked at the start of every run, so a new value makes the library read the source again."""
        ...


def skipped(origin: str, problem: str) -> SkippedSkill:
    """A skipped entry of a source, named by `origin` (which need not be a path on this machine)."""
    return SkippedSkill(Path(origin), problem)
