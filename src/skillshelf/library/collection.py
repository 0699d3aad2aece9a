"""Collecting a library: Python skills first, then every source in order, into one set of skills with unique names.

When sources hold skills with the same name, or names that look alike (`dеplоy` with Cyrillic letters beside
`deploy`, see `confusables`), the first one wins and the later ones are reported as skipped (like `PATH` lookup),
unless the later one's content offers a namespaced name (`namespaced_name`: an MCP server's skill), taken instead.
A Python skill that clashes with another skill is a programming error and raises. The result is a value
(`Collection`); nothing here keeps state between reads.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._gc import gc_paused
from ..errors import SkillConflictError, SkillError, SkillWarning
from ..lock import SkillLock
from ..markdown.frontmatter import SKILL_FILE, FormatDeviation
from ..scan import Finding
from ..skill import Skill
from ..sources.base import SkillSource, SkippedSkill, reports_version
from ..sources.commands import is_command_skill
from .confusables import skeleton
from .name_filter import NameFilter
from .screening import Screen

__all__ = ('Collection', 'Intake', 'check_tool_names')


@dataclass(frozen=True)
class Collection:
    """One read of a library's intake."""

    skills: dict[str, Skill[Any]]
    """Every usable skill, keyed by name, in catalog order."""
    skipped: list[SkippedSkill]
    """Entries that were not used, with the reason (broken, shadowed, missing)."""
    versions: tuple[Hashable, ...]
    """Each source's version as its read began, to tell later whether it changed."""
    deviations: list[FormatDeviation] = field(default_factory=list[FormatDeviation])
    """How the skills kept break the format in ways Claude Code or Codex tolerate (see `SourceSkills.deviations`)."""
    flagged: list[Finding] = field(default_factory=list[Finding])
    """The critical findings of the content scan in skills kept anyway (`scan='warn'`)."""
    refused: dict[str, str] = field(default_factory=dict[str, str])
    """Skills the lock refused, by name, with why (each is in `skipped` too)."""


@dataclass(frozen=True)
class Intake:
    """Where a library's skills come from: its Python skills, then its sources, and which names it keeps."""

    skills: tuple[Skill[Any], ...] = ()
    """Skills defined in Python; they come first and never change."""
    sources: tuple[SkillSource, ...] = ()
    """The directories and other sources, in precedence order."""
    selection: NameFilter = field(default_factory=NameFilter)
    """The skills kept (`include`, `exclude`); the others are dropped as soon as they are read."""
    reserved_tool_names: frozenset[str] = frozenset()
    """Tool names no skill may use (the meta-tools)."""
    screen: Screen = field(default_factory=lambda: Screen('refuse'))
    """The content scan of the source skills (see `LibraryOptions.scan`): their frontmatter as they are read."""
    lock: SkillLock | None = None
    """The lock file every source's skill is checked against (`LibraryOptions.lock`); `None`: none is."""

    def changed(self, versions: tuple[Hashable, ...]) -> bool:
        """Whether a source changed since it was read at `versions`; a source whose version cannot be checked now
        counts as unchanged, with a warning."""
        for source, version in zip(self.sources, versions, strict=True):
            try:
                if source.version() != version:
                    return True
            except Exception as error:  # a registry that is down must not end the run: keep the skills read last
                warnings.warn(SkillWarning(f'{source!r} could not be checked for changes: {error}'), stacklevel=4)
        return False

    @gc_paused()  # it allocates a lot and frees little: the collector would walk the growing heap over and over
    def collect(self) -> Collection:
        """Read every source (without warning) into one set of skills.

        Raises:
            SkillConflictError: two Python skills share a name (or look alike), a Python skill and another skill
                do, or two skills (or a skill and a meta-tool) expose the same tool name.
            SkillError: a source other than a directory cannot be read.
        """
        by_name: dict[str, Skill[Any]] = {}
        names = _Names()
        for skill in self._selected(self.skills):
            if (clash := names.clash(skill.name)) is not None:
                raise SkillConflictError(f'two Python skills are named {_alike(skill.name, clash)}; rename one')
            by_name[skill.name] = skill
        skipped: list[SkippedSkill] = []
        deviations: list[FormatDeviation] = []
        versions: list[Hashable] = []
        screen = self.screen
        screen.read()
        refused: dict[str, str] = {}
        for source in self.sources:
            try:
                # Asked before the read, so a change during the read shows at the next check.
                version = None if reports_version(source) else source.version()
                read = source.read_skills()
            except Exception as error:  # the source's own code, or a server: say which source failed
                raise SkillError(f'the skill source {source!r} could not be read: {error}') from error
            versions.append(read.version if reports_version(source) else version)
            root = getattr(source, 'path', None)
            skipped.extend(
                problem
                for problem in read.skipped  # a problem with a directory itself is always reported
                if problem.path == root or self.selection.selects(_entry_name(problem.path))
            )
            for skill in self._selected(read.skills):
                if (taken := names.clash(skill.name)) is not None:
                    _shadowed(by_name, names, skipped, skill, taken, refused)
                elif self.lock is not None and (refusal := self.lock.refusal(skill)) is not None:
                    refused[skill.name] = refusal
                    problem = f'refused: {refusal}; {self.lock.advice}'
                    skipped.append(SkippedSkill(Path(skill.origin or skill.name), problem))
                elif screen.admits(skill, skipped):
                    if self.lock is not None:
                        self.lock.hold(skill)
                    by_name[skill.name] = skill
            # A skill left out by `include`/`exclude` is not reported, like its broken SKILL.md would not be.
            deviations.extend(deviation for deviation in read.deviations if self.selection.selects(deviation.skill))
        screen.withhold(by_name)
        check_tool_names(by_name.values(), set(self.reserved_tool_names))
        if self.lock is not None:
            self.lock.done()
        return Collection(by_name, skipped, tuple(versions), deviations, flagged=screen.flagged, refused=refused)

    def _selected(self, skills: Iterable[Skill[Any]]) -> list[Skill[Any]]:
        if not self.selection.include and not self.selection.exclude:
            return list(skills)
        return [skill for skill in skills if self.selection.selects(skill.name)]


def check_tool_names(skills: Iterable[Skill[Any]], reserved: set[str]) -> None:
    """Refuse a tool name that two skills share, or that a meta-tool (`reserved`) has.

    Raises:
        SkillConflictError: naming the skills and the tool.
    """
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


class _Names:
    """The names taken so far, by skeleton, so that a name is refused when it is taken or only looks like one that
    is (see `confusables.skeleton`)."""

    def __init__(self) -> None:
        self._by_skeleton: dict[str, str] = {}

    def clash(self, name: str) -> str | None:
        """The taken name that `name` is or looks like; `None` if there is none, and then `name` is taken."""
        key = skeleton(name)
        if (taken := self._by_skeleton.get(key)) is not None:
            return taken
        self._by_skeleton[key] = name
        return None


def _alike(name: str, taken: str) -> str:
    """`name` and `taken` in words: one name, or two that look alike."""
    return repr(name) if name == taken else f'{taken!r} and {name!r}, which look alike ({_how_alike(name, taken)})'


def _how_alike(name: str, taken: str) -> str:
    """Why two different names count as one: they differ only in `-` and `_`, or in look-alike characters."""
    if name.replace('_', '-') == taken.replace('_', '-'):
        return 'they differ only in "-" and "_"'
    return 'characters of another script'


def _read_from(skill: Skill[Any]) -> str:
    """Where a source's skill was read from, in words: a folder, a command file, or its origin (a package, a
    registry)."""
    if skill.folder is not None:
        return f'the folder {skill.origin}'
    origin = skill.origin or skill.name
    return f'the command file {origin}' if is_command_skill(skill) else f'the skill from {origin}'


def _shadowed(
    by_name: dict[str, Skill[Any]],
    names: _Names,
    skipped: list[SkippedSkill],
    skill: Skill[Any],
    taken: str,
    refused: dict[str, str],
) -> None:
    """Skip a source's `skill` whose name is `taken` (or looks like it) by an earlier skill, or raise when that one
    is a Python skill. A name the lock refused stays taken: a later source never stands in for a refused skill."""
    if taken in refused:
        skipped.append(SkippedSkill(Path(skill.origin or skill.name), f'shadowed by {taken!r}, which the lock refused'))
        return
    # A source may offer a skill under a second name when its own is taken (an MCP server's, prefixed by the server's
    # namespace), so a served skill never takes another's place and is not lost either.
    alias = getattr(skill.content, 'namespaced_name', None)
    if isinstance(alias, str) and alias != skill.name and names.clash(alias) is None:
        by_name[alias] = Skill.from_content(
            alias, skill.description, skill.content, metadata=skill.metadata, trusted=skill.trusted
        )
        return
    existing = by_name[taken]
    if existing.origin is None and taken == skill.name:
        raise SkillConflictError(f'the Python skill {taken!r} and {_read_from(skill)} share a name; rename one')
    if existing.origin is None:
        raise SkillConflictError(
            f'the Python skill {taken!r} and {_read_from(skill)} have names that look alike ({skill.name!r}: '
            f'{_how_alike(skill.name, taken)}); rename one'
        )
    if taken == skill.name:
        problem = f'shadowed by {existing.origin} (the earlier directory wins)'
    else:
        problem = (
            f'its name {skill.name!r} looks like {taken!r} of {existing.origin} ({_how_alike(skill.name, taken)}), '
            'so it could pass for that skill; the earlier one wins (rename this one)'
        )
    skipped.append(SkippedSkill(Path(skill.origin or skill.name), problem))


def _entry_name(path: Path) -> str:
    """The skill name a skipped entry would have had (its folder's, or a command file's), for `include`/`exclude`."""
    if path.suffix == '.md' and path.name != SKILL_FILE:
        return path.stem
    return path.parent.name if path.name == SKILL_FILE else path.name
