"""The registry's tables (schema 2), opening a database with them, and moving a schema-1 registry's rows into them.

Schema 2 keeps every revision of every skill:

- `skillshelf_registry`: one row, the registry version (one more for every change) and the schema number.
- `skillshelf_catalog`: one row per skill name ever published, the head: its live revision's catalog fields, or a
  tombstone once it is removed (`live` false). `changed` is the registry version of the row's last change, so a
  worker reads only the rows changed since its last read (removals included).
- `skillshelf_revisions`: every revision of every skill (publish, rollback, remove), never changed once written;
  `version` is the registry version that wrote it, so the registry as of any version can be read back.
- `skillshelf_revision_files`: each revision's files, by path, naming their bytes by SHA-256.
- `skillshelf_blobs`: file bytes, stored once per content (a file kept across revisions, or shared by skills, once).

Schema 1 (skillshelf 0.x before revisions) had `skillshelf_skills`, `skillshelf_files` and `skillshelf_state`, one
row per skill. Opening such a database copies its rows into schema 2 (each skill as its revision 1) in one
transaction and leaves the old tables as they were, so workers of the older version keep reading them until they are
upgraded; drop them after that. A database written by a newer schema is refused with a message saying so.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any, TypeAlias

import sqlalchemy as sa
from typing_extensions import Unpack

from ..errors import SkillError

AnySelect: TypeAlias = 'sa.Select[Unpack[tuple[Any, ...]]]'
"""A query of any columns."""
AnyRow: TypeAlias = 'sa.Row[Unpack[tuple[Any, ...]]]'
"""A row of such a query."""

__all__ = (
    'SCHEMA',
    'SCHEMA_1_TABLES',
    'AnyRow',
    'AnySelect',
    'blobs',
    'catalog',
    'files',
    'metadata',
    'open_schema',
    'revisions',
    'state',
    'text',
)

SCHEMA = 2
"""The schema this version of skillshelf writes."""
NAME_LENGTH = 64

metadata = sa.MetaData()
state = sa.Table(
    'skillshelf_registry',
    metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
    sa.Column('version', sa.Integer, nullable=False),
    sa.Column('schema', sa.Integer, nullable=False),
)
catalog = sa.Table(
    'skillshelf_catalog',
    metadata,
    sa.Column('name', sa.String(NAME_LENGTH), primary_key=True),
    sa.Column('revision', sa.Integer, nullable=False),
    sa.Column('live', sa.Boolean, nullable=False),
    sa.Column('changed', sa.Integer, nullable=False, index=True),
    sa.Column('description', sa.Text, nullable=False),
    sa.Column('meta', sa.Text, nullable=False),
    sa.Column('body_start', sa.Text, nullable=False),
    sa.Column('files', sa.Integer, nullable=False),
)
revisions = sa.Table(
    'skillshelf_revisions',
    metadata,
    sa.Column('name', sa.String(NAME_LENGTH), primary_key=True),
    sa.Column('revision', sa.Integer, primary_key=True, autoincrement=False),
    sa.Column('version', sa.Integer, nullable=False, index=True),
    sa.Column('action', sa.String(16), nullable=False),
    sa.Column('restored', sa.Integer, nullable=True),
    sa.Column('published_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('description', sa.Text, nullable=False),
    sa.Column('meta', sa.Text, nullable=False),
    sa.Column('body_start', sa.Text, nullable=False),
    sa.Column('text', sa.Text, nullable=False),
    sa.Column('files', sa.Integer, nullable=False),
    sa.Column('bytes', sa.BigInteger, nullable=False),
)
files = sa.Table(
    'skillshelf_revision_files',
    metadata,
    sa.Column('name', sa.String(NAME_LENGTH), primary_key=True),
    sa.Column('revision', sa.Integer, primary_key=True, autoincrement=False),
    sa.Column('path', sa.String(1024), primary_key=True),
    sa.Column('blob', sa.String(64), nullable=False, index=True),
    sa.Column('size', sa.BigInteger, nullable=False),
)
blobs = sa.Table(
    'skillshelf_blobs',
    metadata,
    sa.Column('sha256', sa.String(64), primary_key=True),
    sa.Column('data', sa.LargeBinary, nullable=False),
)

_old = sa.MetaData()
_old_skills = sa.Table(
    'skillshelf_skills',
    _old,
    sa.Column('name', sa.String(64), primary_key=True),
    sa.Column('description', sa.Text),
    sa.Column('meta', sa.Text),
    sa.Column('body_start', sa.Text),
    sa.Column('text', sa.Text),
    sa.Column('revision', sa.Integer),
)
_old_files = sa.Table(
    'skillshelf_files',
    _old,
    sa.Column('skill', sa.String(64), primary_key=True),
    sa.Column('path', sa.String(1024), primary_key=True),
    sa.Column('data', sa.LargeBinary),
)
_old_state = sa.Table(
    'skillshelf_state', _old, sa.Column('id', sa.Integer, primary_key=True), sa.Column('version', sa.Integer)
)


def open_schema(engine: sa.Engine) -> None:
    """Create the tables if they are missing, and the registry row (copying a schema-1 registry's rows in first).

    Raises:
        SkillError: the database was written by a newer skillshelf (a later schema).
        SQLAlchemyError: the database cannot be used (another process creating the same rows at the same time
            makes this fail too; the caller checks whether the registry is usable then).
    """
    metadata.create_all(engine)
    with engine.begin() as connection:
        row = connection.execute(sa.select(state.c.version, state.c.schema).where(state.c.id == 1)).first()
        if row is not None:
            check_schema(row[1])
            return
        # The registry row first: a process opening the database at the same time fails on its key and rolls back.
        connection.execute(state.insert().values(id=1, version=0, schema=SCHEMA))
        version = _copy_schema_1(connection)
        if version:
            connection.execute(state.update().where(state.c.id == 1).values(version=version))


def check_schema(schema: int) -> None:
    """Refuse a database of a later schema than this skillshelf writes.

    Raises:
        SkillError: saying which schema and what to do.
    """
    if schema > SCHEMA:
        raise SkillError(
            f'it was written by a newer skillshelf (registry schema {schema}; this one reads schema {SCHEMA}): '
            'upgrade skillshelf to use it'
        )


def _copy_schema_1(connection: sa.Connection) -> int:
    """Copy a schema-1 registry's skills and files, each skill as its revision 1, published at the registry version
    that published it then; the registry version it had (0 when there is no schema-1 registry)."""
    inspector = sa.inspect(connection)
    if not all(inspector.has_table(table.name) for table in (_old_skills, _old_files, _old_state)):
        return 0
    version = connection.execute(sa.select(sa.func.max(_old_state.c.version))).scalar() or 0
    counted = sa.select(_old_files.c.skill, sa.func.count(), sa.func.sum(sa.func.length(_old_files.c.data)))
    sizes = {name: (count, size or 0) for name, count, size in connection.execute(counted.group_by(_old_files.c.skill))}
    for row in _pages(connection, sa.select(_old_skills), (_old_skills.c.name,)):
        count, size = sizes.get(row['name'], (0, 0))
        fields = {key: row[key] or '' for key in ('description', 'meta', 'body_start')}
        published = row['revision'] or 0
        connection.execute(
            revisions.insert().values(
                name=row['name'], revision=1, version=published, action='publish', restored=None, published_at=None,
                text=row['text'] or '', files=count, bytes=size, **fields,
            )
        )  # fmt: skip
        connection.execute(
            catalog.insert().values(name=row['name'], revision=1, live=True, changed=published, files=count, **fields)
        )
    known: set[str] = set()
    for row in _pages(connection, sa.select(_old_files), (_old_files.c.skill, _old_files.c.path)):
        data = bytes(row['data'] or b'')
        digest = hashlib.sha256(data).hexdigest()
        if digest not in known:
            connection.execute(blobs.insert().values(sha256=digest, data=data))
            known.add(digest)
        values = {'name': row['skill'], 'revision': 1, 'path': row['path'], 'blob': digest, 'size': len(data)}
        connection.execute(files.insert().values(**values))
    return int(version)


def _pages(
    connection: sa.Connection, statement: AnySelect, key: tuple[sa.Column[Any], ...], size: int = 200
) -> Iterator[sa.RowMapping]:
    """The rows of `statement` in pages ordered by `key` (its primary key), so a large registry is copied without
    holding it all, on any database (no server-side cursor beside the inserts)."""
    last: tuple[Any, ...] | None = None
    while True:
        page = statement.order_by(*key).limit(size)
        if last is not None:
            page = page.where(sa.tuple_(*key) > sa.tuple_(*last))
        rows = connection.execute(page).mappings().all()
        yield from rows
        if len(rows) < size:
            return
        last = tuple(rows[-1][column.name] for column in key)


SCHEMA_1_TABLES = tuple(table.name for table in (_old_skills, _old_files, _old_state))
"""The schema-1 tables a migration leaves in place (drop them once no worker of an older version reads them)."""


def text(value: object, errors: str = 'strict', *, what: str = 'name') -> str:
    """A text column's value as `str`, from the bytes SQLite is read as.

    Raises:
        ValueError: the bytes are not UTF-8 (with `errors='strict'`), naming `what`.
    """
    if isinstance(value, memoryview):
        value = value.tobytes()
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode('utf-8', errors)
        except UnicodeDecodeError:
            raise ValueError(f'its {what} is not valid UTF-8') from None
    if not isinstance(value, str):
        raise TypeError(f'its {what} is not text')
    return value
