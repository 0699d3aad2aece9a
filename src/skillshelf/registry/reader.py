"""Reading a registry as a worker: the catalog rows as skills whose bodies and files are read when they are used, kept
between reads so a change reads only the rows it changed.

The first read takes every live catalog row (one query); a later read, once the registry version moved, takes only
the rows changed since (`changed > last seen`, removals included) and keeps every other skill as it was, the same
object. Pinned skills (`RegistryPins`) are read once: a revision never changes. A row that cannot be decoded (text
that is not UTF-8, metadata that is not a JSON object, a name that breaks the rules) is skipped with the reason, never
failing the read.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Hashable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import sqlalchemy as sa

from .._text import shown
from ..content import safe_relative_path
from ..content.base import MAX_LISTED_RESOURCES, too_large
from ..errors import ResourceError, SkillFormatError
from ..markdown.frontmatter import read_markdown
from ..markdown.guarded_yaml import MAX_YAML_DEPTH, nested_deeper_than
from ..skill import Skill
from ..sources.base import SkippedSkill, SourceSkills, skipped
from .digests import RevisionDigests
from .pins import RegistryPins
from .schema import AnyRow, AnySelect, blobs, catalog, files, revisions, state, text
from .store import BODY_START_CHARS

__all__ = ('CatalogReader', 'RegistryContent', 'RegistryHandle', 'Unreachable')


class RegistryHandle(Protocol):
    """What a reader uses of its `SkillRegistry` (a protocol, so this module sits below the registry's)."""

    @property
    def pins(self) -> RegistryPins:
        """Which revisions the worker reads."""
        ...

    @property
    def label(self) -> str:
        """How the registry is named in messages and origins."""
        ...

    @property
    def engine(self) -> sa.Engine:
        """The database."""
        ...

    def connect(self, *, writing: bool = False) -> AbstractContextManager[sa.Connection]:
        """A connection whose failures are `SkillError`s without the URL's password."""
        ...

    def version_token(self, version: int | None) -> Hashable:
        """The source version of a read made at registry version `version`."""
        ...

    def fetch(self, statement: AnySelect) -> AnyRow | None:
        """The first row of `statement`, for a run (`Unreachable` when the database fails)."""
        ...

    def fetch_all(self, statement: AnySelect) -> Sequence[AnyRow]:
        """Every row of `statement`, for a run (`Unreachable` when the database fails)."""
        ...


@dataclass
class CatalogReader:
    """One registry's skills as its last read left them, brought up to date by the next read."""

    registry: RegistryHandle
    """The registry read (its engine, label and pins)."""
    seen: int | None = None
    """The registry version of the last read of the live rows; `None` before the first."""
    skills: dict[str, Skill[Any] | SkippedSkill] = field(default_factory=dict[str, 'Skill[Any] | SkippedSkill'])
    """Every skill read (or the reason its row was skipped), by name, pinned ones included."""
    starts: BodyStarts = field(init=False)
    """The body starts search indexes, read at the first search."""
    digests: RevisionDigests = field(default_factory=RevisionDigests)
    """The lock digests of the revisions read, read the first time a lock asks."""
    rows: int = 0
    """Catalog rows read so far (for measurements: a change reads only the rows it changed)."""
    _listed: tuple[list[Skill[Any]], list[SkippedSkill]] | None = None
    """`skills` in name order, split into skills and skipped rows; made again after a read that changed any."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.starts = BodyStarts(self)

    def read(self) -> SourceSkills:
        """The skills now, in name order, with the registry version they are as of.

        Raises:
            SkillError: the registry cannot be read (the message hides the URL's password).
        """
        pins = self.registry.pins
        with self._lock:
            if self.seen is None or not pins.frozen:  # a registry pinned to a version is read once
                with self.registry.connect() as connection:
                    version = connection.execute(sa.select(state.c.version).where(state.c.id == 1)).scalar_one()
                    if self.seen is None:
                        if pins.pins:
                            self._take(self._pinned(connection), pinned=True)
                        self._take(self._snapshot(connection) if pins.frozen else self._live(connection), pinned=False)
                    elif version != self.seen:
                        self._take(self._changed(connection, self.seen), pinned=False)
                self.seen = version
            if self._listed is None:
                self._listed = _split(self.skills[name] for name in sorted(self.skills))
            listed, version = self._listed, self.seen
        return SourceSkills(list(listed[0]), list(listed[1]), version=self.registry.version_token(version))

    def _live(self, connection: sa.Connection) -> Sequence[AnyRow]:
        columns = (*self._columns(catalog), sa.literal(True))
        return self._run(connection, sa.select(*columns).where(catalog.c.live))

    def _changed(self, connection: sa.Connection, since: int) -> Sequence[AnyRow]:
        columns = (*self._columns(catalog), catalog.c.live, self.raw(catalog.c.body_start))
        return self._run(connection, sa.select(*columns).where(catalog.c.changed > since))

    def _snapshot(self, connection: sa.Connection) -> Sequence[AnyRow]:
        """The revisions live at the pinned registry version."""
        latest = snapshot(self.registry.pins.version or 0)
        columns = (*self._columns(revisions), revisions.c.action != 'remove')
        return self._run(connection, sa.select(*columns).join(latest, _at(latest)))

    def _pinned(self, connection: sa.Connection) -> Sequence[AnyRow]:
        wanted = sa.or_(
            *(
                (revisions.c.name == name) & (revisions.c.revision == revision)
                for name, revision in self.registry.pins.pins.items()
            )
        )
        columns = (*self._columns(revisions), revisions.c.action != 'remove')
        rows = self._run(connection, sa.select(*columns).where(wanted))
        found = {(text(row[0], 'replace'), row[1]) for row in rows}
        for name, revision in self.registry.pins.pins.items():
            if (name, revision) not in found:
                self.skills[name] = skipped(
                    f'{self.registry.label}/{name}',
                    f'it is pinned to revision {revision}, which the registry does not have',
                )
        return rows

    def _columns(self, table: sa.Table) -> tuple[Any, ...]:
        return (
            self.raw(table.c.name),
            table.c.revision,
            self.raw(table.c.description),
            self.raw(table.c.meta),
            table.c.files,
        )

    def _run(self, connection: sa.Connection, statement: AnySelect) -> Sequence[AnyRow]:
        rows = connection.execute(statement).all()
        self.rows += len(rows)
        return rows

    def raw(self, column: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
        """`column` as stored: SQLite keeps whatever bytes a TEXT column was given and its driver fails the whole
        query on one that is not UTF-8, so text is read there as bytes and decoded row by row."""
        return sa.cast(column, sa.LargeBinary) if self.registry.engine.dialect.name == 'sqlite' else column

    def _take(self, rows: Iterable[AnyRow], *, pinned: bool) -> None:
        held = self.registry.pins.pins
        for row in rows:
            self._listed = None
            name = text(row[0], 'replace')
            if name in held and not pinned:
                continue  # a pinned skill keeps its revision whatever is live
            if not row[5]:
                self.skills.pop(name, None)  # removed (or, pinned, the revision that removed it)
                if pinned:
                    self.skills[name] = skipped(
                        f'{self.registry.label}/{name}', f'it is pinned to revision {row[1]}, which removed it'
                    )
                continue
            self.skills[name] = self._decode(name, row)
            if len(row) > 6:
                self.starts.put(name, int(row[1]), text(row[6], 'replace'))

    def _decode(self, name: str, row: AnyRow) -> Skill[Any] | SkippedSkill:
        origin = f'{self.registry.label}/{name}'
        try:
            text(row[0])
            description, meta = text(row[2], what='description'), text(row[3], what='metadata')
            try:
                metadata: object = json.loads(meta)
                too_deep = nested_deeper_than(metadata, MAX_YAML_DEPTH)
            except ValueError:
                raise SkillFormatError(origin, 'its metadata is not valid JSON') from None
            except RecursionError:  # nested past what the decoder itself recurses into
                metadata, too_deep = None, True
            if too_deep:
                raise SkillFormatError(
                    origin, f'its metadata is nested more than {MAX_YAML_DEPTH} levels deep, as no SKILL.md may be'
                )
            if not isinstance(metadata, dict):
                raise SkillFormatError(origin, 'its metadata is not a JSON object')
            fields = cast('dict[str, Any]', metadata)
            content = RegistryContent(self, name, int(row[1]), origin, bool(row[4]))
            return Skill.from_content(name, description, content, metadata=fields)
        except SkillFormatError as error:
            return skipped(origin, error.problem)
        except (ValueError, TypeError) as error:
            return skipped(origin, str(error))


class Unreachable(SkillFormatError, ResourceError):
    """The registry could not be read while a run used a skill (a load, a file read): the run goes on, and the
    model is told, in words without the registry's address."""

    def __init__(self) -> None:
        super().__init__(None, 'the skill registry cannot be read just now; try again later')


def _split(found: Iterable[Skill[Any] | SkippedSkill]) -> tuple[list[Skill[Any]], list[SkippedSkill]]:
    skills: list[Skill[Any]] = []
    skipped_rows: list[SkippedSkill] = []
    for item in found:
        (skills if isinstance(item, Skill) else skipped_rows).append(item)  # pyright: ignore[reportArgumentType]
    return skills, skipped_rows


def snapshot(version: int) -> sa.Subquery:
    """Each skill's last revision at registry `version` (a removal included: the caller leaves those out)."""
    return (
        sa.select(revisions.c.name.label('name'), sa.func.max(revisions.c.version).label('version'))
        .where(revisions.c.version <= version)
        .group_by(revisions.c.name)
        .subquery()
    )


def _at(latest: sa.Subquery) -> sa.ColumnElement[bool]:
    return (revisions.c.name == latest.c.name) & (revisions.c.version == latest.c.version)


class BodyStarts:
    """The body starts of the skills read, by name and revision: read in one query at the first search, then kept
    (a later read brings those of the rows it changed)."""

    def __init__(self, reader: CatalogReader) -> None:
        self._reader = reader
        self._starts: dict[tuple[str, int], str] | None = None
        self._lock = threading.Lock()

    def of(self, name: str, revision: int) -> str:
        """The start of revision `revision` of `name`'s body (`''` if it cannot be read)."""
        with self._lock:
            if self._starts is None:
                self._starts = self._load()
            if (name, revision) not in self._starts:
                where = (revisions.c.name == name) & (revisions.c.revision == revision)
                row = self._reader.registry.fetch(sa.select(self._reader.raw(revisions.c.body_start)).where(where))
                self._starts[name, revision] = '' if row is None else text(row[0], 'replace')
            return self._starts[name, revision]

    def put(self, name: str, revision: int, start: str) -> None:
        """Keep the start a read brought along, once the others are read."""
        with self._lock:
            if self._starts is not None:
                self._starts[name, revision] = start

    def _load(self) -> dict[tuple[str, int], str]:
        reader, pins = self._reader, self._reader.registry.pins
        if pins.frozen:
            latest = snapshot(pins.version or 0)
            statement = sa.select(
                reader.raw(revisions.c.name), revisions.c.revision, reader.raw(revisions.c.body_start)
            ).join(latest, _at(latest))
        else:
            statement = sa.select(reader.raw(catalog.c.name), catalog.c.revision, reader.raw(catalog.c.body_start))
            statement = statement.where(catalog.c.live)
        rows = reader.registry.fetch_all(statement)
        return {(text(name, 'replace'), int(revision)): text(start, 'replace') for name, revision, start in rows}


@dataclass(frozen=True)
class RegistryContent:
    """One revision of a published skill as a worker sees it: the body and files are read from the registry when they
    are used (so a run sees one revision throughout), the start of the body from the catalog read the first search
    makes."""

    reader: CatalogReader
    name: str
    revision: int
    """The skill's revision (1 for its first publish, one more for every publish, rollback and removal)."""
    origin: str
    stored_files: bool
    """Whether the catalog row says the revision has files."""

    def instructions(self, max_chars: int | None = None) -> str:
        """The body: from the catalog read for the search index's share of it, else read from the registry now."""
        if max_chars is not None and max_chars <= BODY_START_CHARS:
            return self.reader.starts.of(self.name, self.revision)[:max_chars]
        row = self.reader.registry.fetch(sa.select(self.reader.raw(revisions.c.text)).where(self._revision))
        if row is None:
            raise SkillFormatError(
                self.origin, f'revision {self.revision} is no longer in the registry (its history was purged)'
            )
        try:
            stored = text(row[0], what='SKILL.md')
        except ValueError as error:
            raise SkillFormatError(self.origin, str(error)) from None
        front, body = read_markdown(self.origin, stored)
        if front.name != self.name:
            raise SkillFormatError(self.origin, f'the stored SKILL.md is named {front.name!r}, not {self.name!r}')
        return body[:max_chars]

    def list_files(self) -> list[str]:
        """The stored file paths that are plain relative paths (anything else could not be read), in order."""
        statement = sa.select(self.reader.raw(files.c.path)).where(self._files).order_by(files.c.path)
        try:
            paths = [row[0] for row in self.reader.registry.fetch_all(statement.limit(MAX_LISTED_RESOURCES))]
        except Unreachable:
            return []  # as a folder that vanished lists nothing; the load that follows says why
        return [path for path in map(_decoded, paths) if path is not None and _is_plain(path)]

    def has_files(self) -> bool:
        """Whether the catalog row says the revision has files (no query of its own)."""
        return self.stored_files

    def read_bytes(self, path: str, max_bytes: int) -> bytes:
        """One stored file, byte for byte, refused like a folder's: unsafe paths, missing, over `max_bytes`; and
        bytes that no longer match the checksum they were stored under."""
        relative = safe_relative_path(path).as_posix()
        where = self._files & (files.c.path == relative)
        joined = files.join(blobs, files.c.blob == blobs.c.sha256)
        found = self.reader.registry.fetch(
            sa.select(sa.func.length(blobs.c.data), files.c.blob).select_from(joined).where(where)
        )
        if found is None:
            raise ResourceError(f'no resource {shown(path)}')
        if found[0] > max_bytes:
            raise too_large(path, found[0], max_bytes)
        row = self.reader.registry.fetch(sa.select(blobs.c.data).where(blobs.c.sha256 == found[1]))
        if row is None:
            raise ResourceError(f'no resource {shown(path)}')
        data = bytes(row[0])
        if hashlib.sha256(data).hexdigest() != found[1]:
            raise ResourceError(f'{shown(path)} no longer matches the checksum it was published with; it is not served')
        return data

    def file_digests(self) -> dict[str, str]:
        """Each stored file's SHA-256 (kept with it) and the `SKILL.md`'s, by path (see `registry.digests`)."""
        return self.reader.digests.of(self.reader, self.name, self.revision, self.origin)

    @property
    def _revision(self) -> sa.ColumnElement[bool]:
        return (revisions.c.name == self.name) & (revisions.c.revision == self.revision)

    @property
    def _files(self) -> sa.ColumnElement[bool]:
        return (files.c.name == self.name) & (files.c.revision == self.revision)


def _decoded(raw: object) -> str | None:
    """A stored path as text; `None` for one that is not UTF-8 (it could never be asked for)."""
    try:
        return text(raw, what='path')
    except (ValueError, TypeError):
        return None


def _is_plain(path: str) -> bool:
    try:
        return safe_relative_path(path).as_posix() == path
    except ResourceError:
        return False
