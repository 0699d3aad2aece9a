"""The lock digests of a registry's skills (see `lock.digest`): each file's SHA-256 as it was stored with the file,
and the `SKILL.md`'s hashed from the stored text; read for every skill a worker holds in two queries, the first time
a lock asks, and kept, since a revision never changes.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import sqlalchemy as sa

from ..content.base import text_bytes
from ..errors import SkillFormatError
from ..markdown.bounded_read import SKILL_FILE
from .schema import AnyRow, AnySelect, files, revisions, text

__all__ = ('RevisionDigests',)

_CHUNK = 400
"""Revisions per `IN (...)` list, under every database's limit on bound parameters."""


class _Rows(Protocol):
    def fetch_all(self, statement: AnySelect) -> Sequence[AnyRow]:
        """Every row of `statement`, for a run (`Unreachable` when the database fails)."""
        ...


class CatalogReader(Protocol):
    """What the digests need of a worker's `reader.CatalogReader` (a protocol, so this module sits below it)."""

    @property
    def registry(self) -> _Rows:
        """The registry read."""
        ...

    @property
    def skills(self) -> Mapping[str, object]:
        """Every skill read, by name."""
        ...

    def raw(self, column: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
        """`column` as stored (bytes on SQLite)."""
        ...


class RevisionDigests:
    """The digests of the revisions one worker reads, by name and revision, each read once."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, int], dict[str, str]] = {}
        self._lock = threading.Lock()

    def of(self, reader: CatalogReader, name: str, revision: int, origin: str) -> dict[str, str]:
        """The digests of revision `revision` of `name`; with them, those of every other revision the worker holds
        that were not read yet.

        Raises:
            SkillFormatError: the revision is no longer in the registry (its history was pruned or purged).
            Unreachable: the registry cannot be read.
        """
        with self._lock:
            if (name, revision) not in self._known:
                held = {(skill, int(getattr(item, 'revision', 0))) for skill, item in _contents(reader)}
                wanted = sorted(({(name, revision)} | held) - self._known.keys())
                for start in range(0, len(wanted), _CHUNK):
                    self._read(reader, wanted[start : start + _CHUNK])
            found = self._known.get((name, revision))
        if found is None:
            raise SkillFormatError(origin, f'revision {revision} is no longer in the registry')
        return dict(found)

    def _read(self, reader: CatalogReader, pairs: list[tuple[str, int]]) -> None:
        wanted = sa.tuple_(revisions.c.name, revisions.c.revision).in_(pairs)
        texts = sa.select(reader.raw(revisions.c.name), revisions.c.revision, reader.raw(revisions.c.text))
        read: dict[tuple[str, int], dict[str, str]] = {}
        for name, revision, stored in reader.registry.fetch_all(texts.where(wanted)):
            raw = stored if isinstance(stored, str) else text(stored, 'surrogateescape')
            read[text(name, 'replace'), int(revision)] = {SKILL_FILE: hashlib.sha256(text_bytes(raw)).hexdigest()}
        rows = sa.select(reader.raw(files.c.name), files.c.revision, reader.raw(files.c.path), files.c.blob)
        for name, revision, path, blob in reader.registry.fetch_all(
            rows.where(sa.tuple_(files.c.name, files.c.revision).in_(pairs))
        ):
            if (key := (text(name, 'replace'), int(revision))) in read:
                read[key][text(path, 'replace')] = str(blob)
        self._known.update(read)


def _contents(reader: CatalogReader) -> Iterable[tuple[str, Any]]:
    """Each skill the worker holds, with its content."""
    for name, item in list(reader.skills.items()):
        content = getattr(item, 'content', None)
        if content is not None and hasattr(content, 'revision'):
            yield name, content
