"""A skill's content digest: the SHA-256 of every file it has, and one digest over them all.

The definition, which the lock file records and `skillshelf lock` writes:

- **The files** of a skill are its entry file, named `SKILL.md` (a Claude Code command's own `.md` file counts as
  its `SKILL.md`), and every other regular file beneath its folder: symlinks to files followed, symlinked folders
  not entered (as every read of a skill's files does), names starting with `.` left out (hidden files and folders
  are never served), at most `MAX_RESOURCE_DEPTH` folders deep and `MAX_SCANNED_ENTRIES` entries looked at. Those
  are the files `load_skill` lists, `read_skill_resource` reads and a workspace receives, and whatever the listing
  leaves out is refused when read under a lock, not served unchecked.
- **A file's digest** is the SHA-256 of its bytes, as lower-case hex.
- **The skill's digest** is `sha256:` followed by the SHA-256 of the lines `<file digest>  <path>\\n` (two spaces, as
  `sha256sum` prints them), one per file, sorted by path (by UTF-8 bytes, as `LC_ALL=C sort` sorts). For a skill
  folder it can be computed without skillshelf::

      cd my-skill && find . -type f ! -path '*/.*' | sed 's|^\\./||' | LC_ALL=C sort | xargs -d '\\n' sha256sum | sha256sum

Files are named by their POSIX path relative to the skill, whatever holds them (a folder, a package, a registry's
rows, an MCP server's manifest), so one skill has one digest wherever it is served from.

Digests of folder files are kept by the file's `stat` (see `known_digests`): a library read again (a run start after
a change) or a worker started again hashes only the files that changed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Mapping
from itertools import islice
from typing import Any, Protocol, runtime_checkable

from ..content import FolderContent, TextContent
from ..content.base import MAX_FILE_BYTES
from ..content.folder import MAX_RESOURCE_DEPTH, MAX_SCANNED_ENTRIES, read_folder_bytes
from ..errors import ResourceError, SkillFormatError
from ..markdown.bounded_read import SKILL_FILE, read_skill_file
from ..skill import Skill
from .known_digests import KnownDigests, known_digests

__all__ = ('UNREADABLE', 'DigestedContent', 'file_digests', 'save_known_digests', 'skill_digest')

UNREADABLE = 'unreadable'
"""What stands for a file's digest when the file cannot be read (too large, vanished): a file that becomes readable
later, or changes, then differs from the lock."""


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


def _folder_digests(content: FolderContent) -> dict[str, str]:
    folder = content.folder
    try:
        folder.check()
    except OSError as error:
        raise SkillFormatError(folder.path, f'the skill folder changed ({folder.change()})') from error
    digests: dict[str, str] = {}
    known = known_digests()
    for path, info in _walk(folder.path):
        read = (
            (lambda: read_skill_file(content.skill_file))
            if path == SKILL_FILE
            else (lambda path=path: read_folder_bytes(folder, path, MAX_FILE_BYTES))
        )
        digests[path] = _cached(known, os.path.join(folder.path, path), info, read)
    return digests


def _walk(root: str) -> list[tuple[str, os.stat_result]]:
    """Every regular file beneath `root` by relative POSIX path, with its `stat` (a symlink followed), within the
    bounds of the module's definition; a folder that cannot be listed lists nothing."""
    found: list[tuple[str, os.stat_result]] = []
    pending: list[tuple[str, str, int]] = [(root, '', 0)]
    scanned = 0
    while pending and scanned <= MAX_SCANNED_ENTRIES:
        directory, prefix, depth = pending.pop()
        try:
            with os.scandir(directory) as scan:
                entries = list(islice(scan, MAX_SCANNED_ENTRIES - scanned + 1))
        except OSError:
            continue
        scanned += len(entries)
        for entry in entries:
            if entry.name.startswith('.') or not _is_utf8(entry.name):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth < MAX_RESOURCE_DEPTH:
                        pending.append((entry.path, f'{prefix}{entry.name}/', depth + 1))
                    continue
                info = entry.stat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                found.append((prefix + entry.name, info))
    return found


def _is_utf8(name: str) -> bool:
    try:
        name.encode('utf-8')
    except UnicodeEncodeError:  # bytes that were not UTF-8, as surrogates: no path the model sends can name it
        return False
    return True


def _cached(known: KnownDigests, where: str, info: os.stat_result, read: Callable[[], bytes]) -> str:
    """The digest of the file at `where`, whose `stat` is `info`: known from an earlier read of the same `stat`
    (see `known_digests`), else read (beneath the skill folder, by its rules) and hashed now."""

    def compute() -> str | None:
        try:
            return _sha256(read())
        except (ResourceError, SkillFormatError, OSError):
            return None

    return known.digest(where, info, compute) or UNREADABLE


def save_known_digests() -> None:
    """Keep the digests hashed so far for the next process (the library calls this after each read)."""
    known_digests().save()
