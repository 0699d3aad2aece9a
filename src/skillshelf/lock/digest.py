"""A skill's content digest: the SHA-256 of every file it has, and one digest over them all.

The definition, which the lock file records and `skillshelf lock` writes:

- **The files** of a skill are its entry file, named `SKILL.md` (a Claude Code command's own `.md` file counts as
  its `SKILL.md`), and every file the skill serves: those `load_skill` lists, `read_skill_resource` reads and a
  workspace receives. Hidden files and folders (a name starting with `.`) are never served, so they are left out.
- **A file's digest** is the SHA-256 of its bytes, as lower-case hex.
- **The skill's digest** is `sha256:` followed by the SHA-256 of the lines `<file digest>  <path>\\n` (two spaces, as
  `sha256sum` prints them), one per file, sorted by path (by UTF-8 bytes, as `LC_ALL=C sort` sorts). For a skill
  folder it can be computed without skillshelf::

      cd my-skill && find . -type f ! -path '*/.*' | sed 's|^\\./||' | LC_ALL=C sort | xargs -d '\\n' sha256sum | sha256sum

Files are named by their POSIX path relative to the skill, whatever holds them (a folder, a package, a registry's
rows, an MCP server's manifest), so one skill has one digest wherever it is served from.

Digests of folder files are kept per process by the file's `stat` (device, inode, size, modification and change
times): a library read again (each run after a change) hashes only the files that changed.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from ..content import FolderContent, TextContent
from ..content.base import MAX_FILE_BYTES
from ..content.folder import list_folder_resources, read_folder_bytes
from ..errors import ResourceError, SkillFormatError
from ..files import HeldFolder
from ..markdown.bounded_read import SKILL_FILE, read_skill_file
from ..skill import Skill

__all__ = ('UNREADABLE', 'DigestedContent', 'file_digests', 'skill_digest')

UNREADABLE = 'unreadable'
"""What stands for a file's digest when the file cannot be read (too large, vanished): a file that becomes readable
later, or changes, then differs from the lock."""
_MAX_FILES = 100_000
"""Files listed for a digest: every one the bounded walk of a folder finds (it stops at `MAX_SCANNED_ENTRIES`)."""


@runtime_checkable
class DigestedContent(Protocol):
    """Content that gives its files' digests itself: a registry's rows (stored with their SHA-256), an MCP server's
    manifest (which carries each file's SHA-256, verified when the file is fetched)."""

    def file_digests(self) -> Mapping[str, str]:
        """The SHA-256 (lower-case hex) of every file of the skill, `SKILL.md` included, by relative POSIX path.

        Raises:
            SkillFormatError: the content cannot be read now.
        """
        ...


def file_digests(skill: Skill[Any]) -> dict[str, str] | None:
    """The digest of every file of `skill` (see the module's definition), by path; `None` for content that does not
    say what its files are (a Python skill, or a custom content without `file_digests`).

    Raises:
        SkillFormatError: the skill's files cannot be read now (its folder vanished, its registry is down).
    """
    content = skill.content
    if isinstance(content, FolderContent):
        return _folder_digests(content)
    if isinstance(content, DigestedContent):
        return dict(content.file_digests())
    if isinstance(content, TextContent) and content.source is not None:
        digests = {path: _sha256(data) for path, data in content.files.items()}
        return {**digests, SKILL_FILE: _sha256(content.source)}
    return None


def skill_digest(files: Mapping[str, str]) -> str:
    """The skill's digest over its files' digests: `sha256:` and the SHA-256 of their `sha256sum` lines."""
    lines = ''.join(f'{files[path]}  {path}\n' for path in sorted(files, key=lambda path: path.encode('utf-8')))
    return 'sha256:' + hashlib.sha256(lines.encode('utf-8', 'surrogatepass')).hexdigest()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_Key = tuple[int, int, int, int, int]
_known: dict[str, tuple[_Key, str]] = {}
"""The digest of each folder file hashed in this process, by absolute path, with the `stat` it was hashed at."""
_known_lock = threading.Lock()


def _folder_digests(content: FolderContent) -> dict[str, str]:
    folder = content.folder
    digests = {SKILL_FILE: _cached(folder, SKILL_FILE, lambda: read_skill_file(content.skill_file))}
    for path in list_folder_resources(folder, limit=_MAX_FILES):
        digests[path] = _cached(folder, path, lambda path=path: read_folder_bytes(folder, path, MAX_FILE_BYTES))
    return digests


def _cached(folder: HeldFolder, path: str, read: Any) -> str:
    """The digest of `path` in `folder`: the one kept for its `stat`, else read (beneath the folder, by its rules)
    and hashed now. The `stat` follows a symlink, so a link swapped to lead elsewhere is a new key, read again."""
    where = os.path.join(folder.path, path)
    try:
        info = os.stat(where)
    except OSError:
        return UNREADABLE
    key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    with _known_lock:
        known = _known.get(where)
    if known is not None and known[0] == key:
        return known[1]
    try:
        digest = _sha256(read())
    except (ResourceError, SkillFormatError, OSError):
        return UNREADABLE
    with _known_lock:
        _known[where] = (key, digest)
    return digest
