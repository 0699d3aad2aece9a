"""What an update of a lock file changes: skills added, removed and changed, the files of each, and a unified diff of
every text file whose earlier bytes are at hand.

The earlier bytes come from the source at the revision the lock records: a git source at the locked commit, a
registry at the locked revision of the skill. A folder or a package keeps no history, so for those the files are
named (with their sizes now) and the lock's digests are all there is to compare.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any, Literal

from ...content.base import MAX_FILE_BYTES
from ...errors import ResourceError, SkillError
from ...lock import FileChanges, LockEntry, Lockfile, file_changes
from ...markdown.bounded_read import SKILL_FILE, read_skill_file
from ...skill import Skill
from ...sources import GitSource, SkillSource
from .reading import LockedSkill, ReadForLock

__all__ = ('SkillChange', 'lock_changes', 'render_changes')

MAX_DIFF_LINES = 400
"""Lines of one file's unified diff shown; the rest is counted, not shown."""


@dataclass(frozen=True)
class SkillChange:
    """One skill an update adds, removes or changes."""

    name: str
    kind: Literal['added', 'removed', 'changed']
    files: FileChanges
    """Its files that differ (every file, for an added or removed skill)."""
    before: LockEntry | None
    """What the lock records (`None` for an added skill)."""
    after: LockedSkill | None
    """What the sources hold now (`None` for a removed skill)."""

    def headline(self) -> str:
        """`changed deploy (git ...@main: 1a2b3c4 → 5d6e7f8): changed scripts/run.sh`."""
        entry = self.after.entry if self.after is not None else self.before
        assert entry is not None
        revisions = ''
        if self.before is not None and self.after is not None and self.before.revision != self.after.entry.revision:
            revisions = f': {_short(self.before.revision)} → {_short(self.after.entry.revision)}'
        elif entry.revision is not None:
            revisions = f': {_short(entry.revision)}'
        count = len(entry.files)
        what = f': {self.files}' if self.kind == 'changed' else f' ({count} file{"" if count == 1 else "s"})'
        return f'{self.kind} {self.name} ({entry.source}{revisions}){what}'


def lock_changes(locked: Lockfile, now: ReadForLock) -> list[SkillChange]:
    """Every skill whose entry differs between `locked` and what the sources hold `now`, by name."""
    changes: list[SkillChange] = []
    for name in sorted(locked.skills.keys() | now.skills.keys()):
        before, after = locked.skills.get(name), now.skills.get(name)
        if before is None and after is not None:
            changes.append(SkillChange(name, 'added', file_changes({}, after.entry.files), None, after))
        elif after is None and before is not None:
            changes.append(SkillChange(name, 'removed', file_changes(before.files, {}), before, None))
        elif before is not None and after is not None and before.digest != after.entry.digest:
            changes.append(SkillChange(name, 'changed', file_changes(before.files, after.entry.files), before, after))
    return changes


def render_changes(changes: list[SkillChange], *, diffs: bool = True) -> str:
    """The changes as text: a line per skill, its files, and with `diffs` a unified diff of each text file."""
    lines: list[str] = []
    for change in changes:
        lines.append(change.headline())
        if diffs and change.kind != 'removed':
            lines.extend(_file_diffs(change))
    return '\n'.join(lines)


def _file_diffs(change: SkillChange) -> list[str]:
    assert change.after is not None
    now = change.after.skill
    earlier = None if change.before is None else _earlier(change.after.source, change.name, change.before.revision)
    if change.kind == 'changed' and earlier is None:
        return ['  (the earlier files are not at hand: a folder or a package keeps no history; only digests compared)']
    lines: list[str] = []
    for path in [*change.files.changed, *change.files.added, *change.files.removed]:
        old = b'' if path in change.files.added else _bytes(earlier, path)
        new = b'' if path in change.files.removed else _bytes(now, path)
        lines.extend(_unified(f'{change.name}/{path}', old, new))
    return lines


def _unified(label: str, old: bytes | None, new: bytes | None) -> list[str]:
    if old is None or new is None:
        return [f'  {label}: cannot be read now']
    before, after = _text(old), _text(new)
    if before is None or after is None:
        return [f'  {label}: binary file, {len(old):,} bytes → {len(new):,} bytes']
    diff = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), f'{label} (locked)', f'{label} (now)', lineterm=''
        )
    )
    if len(diff) > MAX_DIFF_LINES:
        diff = [*diff[:MAX_DIFF_LINES], f'[{len(diff) - MAX_DIFF_LINES:,} more lines of this diff not shown]']
    return diff


def _text(data: bytes) -> str | None:
    if b'\x00' in data:
        return None
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError:
        return None


def _bytes(skill: Skill[Any] | None, path: str) -> bytes | None:
    if skill is None:
        return None
    try:
        if path == SKILL_FILE:
            return _skill_file_bytes(skill)
        return skill.content.read_bytes(path, MAX_FILE_BYTES)
    except (ResourceError, SkillError, OSError):
        return None


def _skill_file_bytes(skill: Skill[Any]) -> bytes:
    """The `SKILL.md` as its content keeps it; for content that keeps only its parts (a registry's rows), the
    frontmatter's fields and the body as they are read, which show the same changes."""
    if skill.skill_file is not None:
        return read_skill_file(skill.skill_file)
    source = getattr(skill.content, 'source', None)
    if isinstance(source, bytes):
        return source
    fields = json.dumps(skill.metadata, sort_keys=True, ensure_ascii=False, default=str)
    text = f'name: {skill.name}\ndescription: {skill.description}\nmetadata: {fields}\n---\n{skill.load_instructions()}'
    return text.encode('utf-8', 'surrogatepass')


def _earlier(source: SkillSource, name: str, revision: str | None) -> Skill[Any] | None:
    """The skill `name` as the source held it at `revision`, when the source keeps history; else `None`."""
    if revision is None:
        return None
    try:
        if isinstance(source, GitSource):
            then: SkillSource = GitSource(
                source.url, ref=revision, subdirectory=source.subdirectory, cache_dir=source.cache_dir
            )
        elif type(source).__name__ == 'SkillRegistry' and revision.isdigit():
            from ...registry.skill_registry import SkillRegistry  # a registry source: the annex is installed

            assert isinstance(source, SkillRegistry)
            then = SkillRegistry(source.engine, pins={name: int(revision)})
        else:
            return None
        return next((skill for skill in then.read_skills().skills if skill.name == name), None)
    except SkillError:
        return None


def _short(revision: str | None) -> str:
    return 'none' if revision is None else revision[:12]
