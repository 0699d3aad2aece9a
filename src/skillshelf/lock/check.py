"""Checking skills against a lock file as a library reads them: a skill whose content differs from the lock, or that
the lock does not record, is refused with the reason, and the others load.

A skill the lock does not record is refused too: a lock says which skills were reviewed, so a skill added to a
folder, a new commit or a registry since is not trusted until `skillshelf lock --update` records it. Skills defined
in Python are the application's own code and are never checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..content import FolderContent
from ..errors import SkillFormatError
from ..skill import Skill
from .digest import file_digests, save_known_digests, skill_digest
from .lockfile import Lockfile, read_lock

__all__ = ('FileChanges', 'SkillLock', 'file_changes')


@dataclass(frozen=True)
class FileChanges:
    """How one skill's files differ between two sets of digests."""

    changed: list[str] = field(default_factory=list[str])
    """Paths in both, with other bytes."""
    added: list[str] = field(default_factory=list[str])
    """Paths only in the newer."""
    removed: list[str] = field(default_factory=list[str])
    """Paths only in the older."""

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed)

    def __str__(self) -> str:
        parts = [
            f'{what} {", ".join(paths)}'
            for what, paths in (('changed', self.changed), ('added', self.added), ('removed', self.removed))
            if paths
        ]
        return '; '.join(parts)


def file_changes(before: Mapping[str, str], after: Mapping[str, str]) -> FileChanges:
    """What changed from the files `before` to the files `after` (each a map of path to digest)."""
    return FileChanges(
        changed=sorted(path for path in before.keys() & after.keys() if before[path] != after[path]),
        added=sorted(after.keys() - before.keys()),
        removed=sorted(before.keys() - after.keys()),
    )


@dataclass(frozen=True)
class SkillLock:
    """A lock file, read once, that a library checks each skill of a source against."""

    path: Path
    """The lock file."""
    lock: Lockfile
    """What it records."""

    @classmethod
    def read(cls, path: str | Path) -> SkillLock:
        """The lock file at `path`.

        Raises:
            SkillError: it cannot be read or is not a lock file (see `read_lock`).
        """
        return cls(Path(path), read_lock(path))

    @property
    def advice(self) -> str:
        """What the developer does about a refused skill."""
        return (
            f'review the change with `skillshelf diff --lock {self.path}` and accept it with '
            f'`skillshelf lock --update -o {self.path}`'
        )

    def refusal(self, skill: Skill[Any]) -> str | None:
        """Why `skill` must not load under this lock (the files that changed, named), or `None` when its content is
        what the lock records. Never raises: a skill whose files cannot be read now is refused, saying so."""
        entry = self.lock.skills.get(skill.name)
        if entry is None:
            return f'the lock file {self.path.name} does not record it, so it is not trusted'
        try:
            files = file_digests(skill)
        except SkillFormatError as error:
            return f'its files cannot be read to check them against the lock file {self.path.name} ({error.problem})'
        if files is None:
            return f'its content does not say what its files are, so the lock file {self.path.name} cannot vouch for it'
        if skill_digest(files) == entry.digest:
            return None
        changes = file_changes(entry.files, files) or 'its files are as recorded but the digest is not'
        return f'its content differs from the lock file {self.path.name} ({changes})'

    def hold(self, skill: Skill[Any]) -> None:
        """Hold a skill that passed the check to the bytes the lock records: a folder's files can change after the
        check, so each later read of them is checked too (see `FolderContent.locked`). Other content (in memory, a
        registry's revision, a package) does not change under a running library."""
        if isinstance(skill.content, FolderContent):
            skill.content = replace(skill.content, locked=self.lock.skills[skill.name].files)

    def done(self) -> None:
        """The library read every source: keep the digests hashed for the next process."""
        save_known_digests()
