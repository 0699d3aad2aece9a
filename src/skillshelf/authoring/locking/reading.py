"""Reading skills for a lock file: each skill of the sources with the source it came from, its revision there and
its files' digests, as `skillshelf lock` records them.

A source's revision: a git commit (`GitSource`), a package's installed version (`PackageSource`), or what the
skill's content says (`revision`, as a registry's rows and an MCP server's skills carry it); a folder has none.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, packages_distributions, version
from pathlib import Path
from typing import Any

from ...errors import SkillError, SkillWarning
from ...library import LibraryOptions
from ...library.source_spec import SourceSpec
from ...lock import LockEntry, Lockfile, file_digests, skill_digest
from ...lock.digest import save_known_digests
from ...skill import Skill
from ...sources import GitSource, PackageSource, SkillSource
from ...sources.base import SkippedSkill
from ...sources.commands import CommandDirectorySource
from ...sources.directory import DirectorySource
from ...sources.git import redacted_url

__all__ = ('LockedSkill', 'read_for_lock', 'source_label')


@dataclass(frozen=True)
class LockedSkill:
    """One skill as a lock would record it, with the skill and its source for a diff."""

    skill: Skill[Any]
    """The skill as read now."""
    source: SkillSource
    """The source it was read from."""
    entry: LockEntry
    """Its lock entry."""


@dataclass(frozen=True)
class ReadForLock:
    """What the sources hold now, as a lock records it."""

    skills: dict[str, LockedSkill]
    """The skills by name, the first of a name winning (as in a library)."""
    skipped: list[SkippedSkill]
    """Entries that are not skills, and skills shadowed by an earlier one."""

    @property
    def lock(self) -> Lockfile:
        """The lock file recording every skill, by name."""
        return Lockfile({name: self.skills[name].entry for name in sorted(self.skills)})


def read_for_lock(
    directories: Sequence[Path], sources: Sequence[SkillSource | SourceSpec], lock_file: Path, *, warned: list[str]
) -> ReadForLock:
    """The skills of `directories` then `sources` (objects, import paths or the spec's short forms), each with its
    lock entry (a git source fetched first, so a branch is read as it is now); the sources are named relative to
    `lock_file`'s folder. Warnings raised while reading are added to
    `warned`.

    Raises:
        SkillError: a directory or source cannot be resolved or read.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', SkillWarning)
        found: dict[str, LockedSkill] = {}
        skipped: list[SkippedSkill] = []
        for source in LibraryOptions(directories=list(directories), sources=list(sources)).read_sources():
            try:
                if isinstance(source, GitSource):
                    source.refresh()  # the ref as it is now, as a new clone would check it out
                read = source.read_skills()
            except Exception as error:  # the source's own code, or a server: say which source failed
                raise SkillError(f'the skill source {source!r} could not be read: {error}') from error
            skipped.extend(read.skipped)
            for skill in read.skills:
                if skill.name in found:
                    skipped.append(SkippedSkill(Path(skill.origin or skill.name), 'shadowed by an earlier source'))
                    continue
                found[skill.name] = LockedSkill(skill, source, _entry(skill, source, lock_file.parent))
    warned.extend(str(warning.message) for warning in caught)
    save_known_digests()
    return ReadForLock(found, skipped)


def _entry(skill: Skill[Any], source: SkillSource, base: Path) -> LockEntry:
    files = file_digests(skill)
    if files is None:
        raise SkillError(
            f'the skill {skill.name!r} of {source!r} does not say what its files are, so it cannot be locked'
        )
    return LockEntry(source_label(source, base), skill_digest(files), files, _revision(skill, source))


def source_label(source: SkillSource, base: Path) -> str:
    """How the lock names `source`: a folder relative to `base` (the lock file's folder) when it is beneath it, a git
    URL without its secrets, with its ref, a package, or a registry."""
    if isinstance(source, (DirectorySource, CommandDirectorySource)):
        relative = os.path.relpath(source.path, base.resolve())
        return Path(relative).as_posix() if not relative.startswith('..') else str(source.path)
    if isinstance(source, GitSource):
        folder = f' {source.subdirectory}' if source.subdirectory else ''
        return f'git {redacted_url(source.url)}@{source.ref}{folder}'
    if isinstance(source, PackageSource):
        return f'package {source.package}/{source.folder}'.rstrip('/')
    label = getattr(source, 'label', None)
    return label if isinstance(label, str) else repr(source)


def _revision(skill: Skill[Any], source: SkillSource) -> str | None:
    if isinstance(source, GitSource):
        return str(source.version())
    if isinstance(source, PackageSource):
        return _package_version(source.package)
    revision = getattr(skill.content, 'revision', None)  # a registry's revision, an MCP server's
    return None if revision is None else str(revision)


def _package_version(package: str) -> str | None:
    for distribution in packages_distributions().get(package.split('.')[0], []):
        try:
            return version(distribution)
        except PackageNotFoundError:
            continue
    return None
