"""`SkillSource`: the protocol every source of skills follows, and what one read of a source returns."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..markdown.frontmatter import FormatDeviation
from ..skill import Skill

__all__ = ('SkillSource', 'SkippedSkill', 'SourceSkills', 'reports_version', 'skipped')


@dataclass(frozen=True)
class SkippedSkill:
    """An entry of a source that could not be used as a skill, and why."""

    path: Path
    """The `SKILL.md`, folder or file at fault (or the source's name for it)."""
    problem: str
    """What is wrong with it."""


@dataclass
class SourceSkills:
    """One read of a source: its skills in a deterministic order, and every entry that is not a skill."""

    skills: list[Skill[Any]] = field(default_factory=list[Skill[Any]])
    """The usable skills, in the order the catalog lists them (earlier ones win name clashes)."""
    skipped: list[SkippedSkill] = field(default_factory=list[SkippedSkill])
    """Entries that are not skills, each with where it is and why; the library warns about each."""
    version: Hashable = None
    """The source's `version()` as the read began, for a source that reports it (`reports_version`), so the library
    need not ask for it separately: a directory's listing, taken before any file is read."""
    deviations: list[FormatDeviation] = field(default_factory=list[FormatDeviation])
    """How `skills` break the Agent Skills format in ways Claude Code or Codex tolerate: each skill loaded as they
    load it, and the library warns about each (`SkillFormatWarning`), or raises with `strict`."""


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
        checked at the start of every run, so a new value makes the library read the source again. The library asks
        for it before each read, so a change during the read is seen at the next check; a source whose read reports
        it itself (`reports_version = True`, `SourceSkills.version`) is not asked then."""
        ...


def reports_version(source: SkillSource) -> bool:
    """Whether `source`'s reads carry the version they began at (`SourceSkills.version`)."""
    return getattr(source, 'reports_version', False) is True


def skipped(origin: str, problem: str) -> SkippedSkill:
    """A skipped entry of a source, named by `origin` (which need not be a path on this machine)."""
    return SkippedSkill(Path(origin), problem)
