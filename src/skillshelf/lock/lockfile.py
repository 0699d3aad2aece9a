"""The lock file: for each skill, where it came from, its revision there, and the digest of its content.

JSON, one key per line, sorted, so a change to one skill is a change to its lines only and reads well in a diff:

```json
{
  "skills": {
    "deploy": {
      "digest": "sha256:5d41...",
      "files": {
        "SKILL.md": "2c26...",
        "scripts/deploy.sh": "fcde..."
      },
      "revision": "9f1c2e...",
      "source": "git https://github.com/acme/skills.git@main"
    }
  },
  "skillshelf-lock": 1
}
```

`digest` and `files` are defined in `lock.digest`; `revision` is the source's own (a git commit, a package version,
a registry revision) and is left out for a folder. `source` and `revision` are for people and for
`skillshelf diff`; a skill is checked by its name and content only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ..errors import SkillError

__all__ = ('LOCK_FORMAT', 'LockEntry', 'Lockfile', 'read_lock')

LOCK_FORMAT = 1
"""The lock file format this skillshelf writes and reads (`"skillshelf-lock": 1`)."""


@dataclass(frozen=True)
class LockEntry:
    """One skill as the lock records it."""

    source: str
    """Where it was read from, in words (a folder, `git URL@ref`, `package NAME`, a registry)."""
    digest: str
    """Its content digest (`sha256:...`, see `lock.digest`)."""
    files: Mapping[str, str]
    """Each file's SHA-256 by path, `SKILL.md` included."""
    revision: str | None = None
    """The source's revision of it: a git commit, a package version, a registry revision; `None` for a folder."""

    def as_json(self) -> dict[str, Any]:
        """The entry as the file holds it."""
        held: dict[str, Any] = {'source': self.source, 'digest': self.digest, 'files': dict(self.files)}
        return held if self.revision is None else {**held, 'revision': self.revision}


@dataclass(frozen=True)
class Lockfile:
    """Every skill a lock file records, by name."""

    skills: Mapping[str, LockEntry] = field(default_factory=dict[str, LockEntry])
    """The entries, by skill name."""

    def dumps(self) -> str:
        """The lock file's text: JSON, keys sorted, two-space indents, ending with a newline."""
        held = {
            'skillshelf-lock': LOCK_FORMAT,
            'skills': {name: entry.as_json() for name, entry in self.skills.items()},
        }
        return json.dumps(held, indent=2, sort_keys=True, ensure_ascii=False) + '\n'

    def write(self, path: str | Path) -> None:
        """Write the lock to `path` (replacing it whole, so a reader never sees half of it)."""
        target = Path(path)
        partial = target.with_name(f'.{target.name}.partial')
        partial.write_text(self.dumps(), encoding='utf-8')
        partial.replace(target)


def read_lock(path: str | Path) -> Lockfile:
    """The lock file at `path`.

    Raises:
        SkillError: it is missing, not JSON, of another format, or an entry lacks its digest (the message says which
            and what to do).
    """
    try:
        text = Path(path).read_text(encoding='utf-8')
    except FileNotFoundError:
        raise SkillError(
            f'the lock file {str(path)!r} does not exist; write it with `skillshelf lock DIR... -o {path}`'
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise SkillError(f'the lock file {str(path)!r} cannot be read: {error}') from None
    try:
        held: object = json.loads(text)
    except ValueError as error:
        raise SkillError(f'the lock file {str(path)!r} is not valid JSON ({error}); write it again') from None
    if not isinstance(held, dict) or cast('dict[str, Any]', held).get('skillshelf-lock') != LOCK_FORMAT:
        raise SkillError(
            f'the lock file {str(path)!r} is not a skillshelf lock file of format {LOCK_FORMAT}; '
            'write it again with `skillshelf lock`'
        )
    skills = cast('dict[str, Any]', held).get('skills', {})
    if not isinstance(skills, dict):
        raise SkillError(f'the lock file {str(path)!r}: "skills" must map skill names to entries')
    return Lockfile({name: _entry(path, name, value) for name, value in cast('dict[str, Any]', skills).items()})


def _entry(path: str | Path, name: str, value: object) -> LockEntry:
    if isinstance(value, dict):
        held = cast('dict[str, Any]', value)
        files, digest, source = held.get('files'), held.get('digest'), held.get('source', '')
        revision = held.get('revision')
        if (
            isinstance(files, dict)
            and all(isinstance(item, str) for item in cast('dict[Any, Any]', files).values())
            and isinstance(digest, str)
            and isinstance(source, str)
            and (revision is None or isinstance(revision, str))
        ):
            return LockEntry(source, digest, cast('dict[str, str]', files), revision)
    raise SkillError(
        f'the lock file {str(path)!r}: the entry of {name!r} needs "source", "digest" and "files" (a map of paths to '
        'SHA-256 digests); write the lock again with `skillshelf lock`'
    )
