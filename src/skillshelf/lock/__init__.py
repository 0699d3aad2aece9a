"""The lock: a file recording each skill's source, revision and content digest, and the check a library makes
against it, so a skill whose files changed since they were reviewed is refused and the others load (writing the
lock is the authoring annex's `skillshelf lock`)."""

from .check import FileChanges, SkillLock, file_changes
from .digest import DigestedContent, file_digests, skill_digest
from .lockfile import LockEntry, Lockfile, read_lock

__all__ = (
    'DigestedContent',
    'FileChanges',
    'LockEntry',
    'Lockfile',
    'SkillLock',
    'file_changes',
    'file_digests',
    'read_lock',
    'skill_digest',
)
