"""`SkillLibrary`: every skill an agent can load, checked for conflicts and searchable."""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._discovery import SkippedSkill, discover
from ._errors import SkillConflictError, SkillError, SkillWarning
from ._index_cache import build_skill_index
from ._search import SearchHit, SkillIndex
from ._skill import Skill

__all__ = ('SkillLibrary', 'SkippedSkill')


@dataclass
class SkillLibrary:
    """Skills by name, in catalog order: Python skills first, then each directory's skills by folder name.

    Build one with [`SkillLibrary.build`][skillshelf.SkillLibrary.build].
    """

    skills: dict[str, Skill[Any]]
    """Every usable skill, keyed by name."""
    skipped: list[SkippedSkill] = field(default_factory=list[SkippedSkill])
    """Skill folders that were not used, with the reason (broken, shadowed, missing directory)."""
    _index: SkillIndex | None = field(default=None, init=False, repr=False)

    @classmethod
    def build(
        cls,
        skills: Sequence[Skill[Any]] = (),
        directories: Sequence[str | Path] = (),
        *,
        strict: bool = False,
        reserved_tool_names: Iterable[str] = (),
    ) -> SkillLibrary:
        """Collect Python `skills` and the skills found in `directories`.

        When directories hold skills with the same name, the first directory wins and the later ones
        are reported in `skipped` (like `PATH` lookup). Every skipped folder is also emitted as a
        [`SkillWarning`][skillshelf.SkillWarning].

        Raises:
            SkillConflictError: two Python skills share a name, a Python skill and a directory skill share
                a name, or two skills (or a skill and a meta-tool) expose the same tool name.
            SkillError: with `strict=True`, any skipped folder.
        """
        by_name: dict[str, Skill[Any]] = {}
        for skill in skills:
            if skill.name in by_name:
                raise SkillConflictError(f'two Python skills are named {skill.name!r}; give each skill its own name')
            by_name[skill.name] = skill
        skipped: list[SkippedSkill] = []
        for directory in directories:
            found = discover(Path(directory).expanduser())
            skipped.extend(found.skipped)
            for skill in found.skills:
                _add_directory_skill(by_name, skipped, skill)
        _check_tool_names(by_name.values(), set(reserved_tool_names))
        for problem in skipped:
            if strict:
                raise SkillError(f'{problem.path}: {problem.problem}')
            warnings.warn(SkillWarning(f'skipped {problem.path}: {problem.problem}'), stacklevel=3)
        return cls(by_name, skipped)

    def get(self, name: str) -> Skill[Any] | None:
        """The skill called `name`, or `None`."""
        return self.skills.get(name)

    def closest_names(self, name: str, limit: int = 3) -> list[str]:
        """Names that look like `name`, for "did you mean" hints."""
        return difflib.get_close_matches(name.strip().lower(), list(self.skills), n=limit, cutoff=0.6)

    def search(self, query: str, limit: int) -> list[SearchHit]:
        """Rank the skills for `query`; the index (which reads the skills' bodies) is built on first use."""
        if self._index is None:
            self._index = build_skill_index(self.skills.values())
        return self._index.search(query, limit)

    def __len__(self) -> int:
        return len(self.skills)


def _add_directory_skill(by_name: dict[str, Skill[Any]], skipped: list[SkippedSkill], skill: Skill[Any]) -> None:
    existing = by_name.get(skill.name)
    if existing is None:
        by_name[skill.name] = skill
    elif existing.folder is None:
        raise SkillConflictError(
            f'the Python skill {skill.name!r} and the folder {skill.folder} share a name; rename one of them'
        )
    else:
        skipped.append(
            SkippedSkill(
                skill.folder or Path(skill.name), f'shadowed by {existing.folder} (the earlier directory wins)'
            )
        )


def _check_tool_names(skills: Iterable[Skill[Any]], reserved: set[str]) -> None:
    owners: dict[str, str] = {}
    for skill in skills:
        for tool_name in skill.tool_names:
            if tool_name in reserved:
                raise SkillConflictError(
                    f'skill {skill.name!r} has a tool named {tool_name!r}, which is a skillshelf meta-tool; rename it'
                )
            if tool_name in owners:
                raise SkillConflictError(
                    f'skills {owners[tool_name]!r} and {skill.name!r} both have a tool named {tool_name!r}; '
                    'tool names must be unique across skills (rename one, or use `toolset.prefixed(...)`)'
                )
            owners[tool_name] = skill.name
