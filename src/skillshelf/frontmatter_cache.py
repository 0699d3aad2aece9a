"""Parsed frontmatter remembered between processes, so a warm start of a large library opens no `SKILL.md`.

Discovery reads and parses every `SKILL.md` head (YAML); on a library of thousands of skills that is
most of the start-up once the search index comes from its own cache. For a library directory with at
least `CACHE_MIN_SKILLS` skills, the parsed frontmatter of each skill is kept in one JSON file, keyed
by the `SKILL.md` path and its `stat` signature (modification and change times, size, inode): any
edit, replacement or rename makes the entry stale and the file is parsed again. Frontmatter whose
values do not survive JSON unchanged (dates, non-string keys) is simply not cached.

The cache lives beside the index cache (`$SKILLSHELF_CACHE_DIR`, see `_index_cache`) and follows
its rules: `SKILLSHELF_CACHE_DIR=off` turns it off, and a cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any, cast

import pydantic_core

from .files import write_atomically
from .markdown.frontmatter import BodyStart, Frontmatter, name_problem, parse_head
from .ranking.cache import CACHE_MIN_SKILLS, cache_directory

__all__ = ('FrontmatterCache',)

_FORMAT = 1
"""Bump when `Frontmatter` or the rules that produce it change, so old cache files are not reused."""

Signature = list[int]


class FrontmatterCache:
    """The frontmatter of one library directory's skills, read from and saved to the cache directory."""

    def __init__(self, directory: Path) -> None:
        cache = cache_directory()
        digest = hashlib.sha256(os.path.abspath(directory).encode('utf-8', 'surrogatepass')).hexdigest()[:32]
        self._file = None if cache is None else cache / f'frontmatter-{digest}.json'
        self._known = self._load()
        self._current: dict[str, list[Any]] = {}

    def parse(
        self, skill_file: str, info: os.stat_result | None, body_chars: int = 0
    ) -> tuple[Frontmatter, BodyStart | None]:
        """The frontmatter of `skill_file`, whose `stat` is `info`: from the cache when the file is unchanged, else
        parsed, with the start of the body when the file was read (see `parse_head`).

        Raises:
            SkillFormatError: as `parse_frontmatter`.
        """
        if self._file is None or info is None:
            return parse_head(skill_file, body_chars)
        signature = [info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino]
        entry = self._known.get(skill_file)
        if entry is not None and entry[0] == signature:
            front = _frontmatter_of(entry)
            if front is not None:
                self._current[skill_file] = entry
                return front, None
        front, body_start = parse_head(skill_file, body_chars)
        if (entry := _entry_of(signature, front)) is not None:
            self._current[skill_file] = entry
        return front, body_start

    def knows(self, skill_file: str) -> bool:
        """Whether the cache has an entry for `skill_file`, current or not; if so, `parse` most likely does not
        read the file. (Checking the entry against the file's `stat` is `parse`'s work; done here too, it cost a
        warm start 2 %.)"""
        return skill_file in self._known

    def save(self) -> None:
        """Write the entries used in this discovery, if they differ from the saved ones and there are enough."""
        if self._file is None or len(self._current) < CACHE_MIN_SKILLS or self._current == self._known:
            return
        try:
            data = _to_json({'format': _FORMAT, 'skills': self._current})
        except ValueError:
            return
        write_atomically(self._file, lambda file: file.write(data))

    def _load(self) -> dict[str, list[Any]]:
        if self._file is None:
            return {}
        try:
            # Bytes, decoded by `json` in one go: a text-mode read of a 100 MB cache takes seconds, not tenths.
            data: Any = json.loads(self._file.read_bytes())
            skills: dict[str, Any] = data['skills'] if data['format'] == _FORMAT else {}
            return {key: entry for key, entry in skills.items() if isinstance(entry, list) and len(entry) == 8}  # pyright: ignore[reportUnknownArgumentType]
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return {}


def _to_json(data: dict[str, Any]) -> bytes:
    """`data` as JSON: pydantic-core writes it several times faster than `json` (0.45 → 0.19 s at 100k skills)."""
    try:
        return pydantic_core.to_json(data)
    except pydantic_core.PydanticSerializationError:
        # A path with an undecodable byte holds a lone surrogate, which UTF-8 cannot carry; ASCII escapes can.
        return json.dumps(data).encode('ascii')


def _entry_of(signature: Signature, front: Frontmatter) -> list[Any] | None:
    if not _survives_json(front.metadata):
        return None
    fields = [front.name, front.description, front.license, front.compatibility]
    return [signature, *fields, list(front.allowed_tools), dict(front.metadata), list(front.notes)]


def _survives_json(value: object, depth: int = 0) -> bool:
    """Whether JSON gives `value` back unchanged: strings, booleans, integers, finite floats, lists, string-keyed dicts."""
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if depth > 64:  # frontmatter nesting is bounded far below this; JSON would refuse deeper
        return False
    if isinstance(value, list):
        return all(_survives_json(item, depth + 1) for item in cast('list[object]', value))
    if isinstance(value, dict):
        items = cast('dict[object, object]', value).items()
        return all(isinstance(key, str) and _survives_json(item, depth + 1) for key, item in items)
    return False


def _frontmatter_of(entry: list[Any]) -> Frontmatter | None:
    """The cached frontmatter, or `None` if the entry is malformed (then the file is parsed)."""
    _, name, description, license_, compatibility, allowed_tools, metadata, notes = entry
    texts = (name, description)
    optional = (license_, compatibility)
    if not all(isinstance(text, str) for text in texts) or not all(v is None or isinstance(v, str) for v in optional):
        return None
    if name_problem(name) or not description.strip():  # a `Frontmatter` is a checked one; so must a cached one be
        return None
    if not isinstance(allowed_tools, list) or not isinstance(metadata, dict) or not isinstance(notes, list):
        return None
    tools, more, problems = cast('list[Any]', allowed_tools), cast('dict[str, Any]', metadata), cast('list[Any]', notes)
    return Frontmatter(
        name, description, license_, compatibility, tuple(map(str, tools)), more, tuple(map(str, problems))
    )
