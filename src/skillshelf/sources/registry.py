"""`SkillRegistry`: skills published to a SQL database (SQLAlchemy; the `registry` extra) and read by every worker.

What is stored: each skill's `SKILL.md` text and files, its catalog row (name, description, metadata, the start of
its body that search indexes) and a version counter bumped by every change. What a worker keeps: the catalog rows
of its last read. A run checks the counter (one query); only a changed counter reads the catalog rows again (one
query). A body is read when a skill is loaded, a file when it is read, the body starts once, at the first search.
SQLite is the embedded default (`sqlite:///skills.db`); PostgreSQL (`postgresql+psycopg://...`) serves a fleet.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias, cast

import sqlalchemy as sa
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from .._text import shown
from ..content import MAX_RESOURCE_BYTES, safe_relative_path
from ..content.base import MAX_LISTED_RESOURCES, too_large
from ..errors import ResourceError, SkillError, SkillFormatError, SkillWarning
from ..markdown.bounded_read import read_skill_file
from ..markdown.frontmatter import read_markdown
from ..ranking.lexical import RankingConfig
from ..skill import Skill
from .base import SourceSkills, skipped

__all__ = ('SkillRegistry',)

BODY_START_CHARS = RankingConfig().body_chars
"""How much of each body the catalog row keeps: what search indexes, so ranking matches a folder library's."""

_schema = sa.MetaData()
_skills = sa.Table(
    'skillshelf_skills',
    _schema,
    sa.Column('name', sa.String(64), primary_key=True),
    sa.Column('description', sa.Text, nullable=False),
    sa.Column('meta', sa.Text, nullable=False),
    sa.Column('body_start', sa.Text, nullable=False),
    sa.Column('text', sa.Text, nullable=False),
    sa.Column('revision', sa.Integer, nullable=False),
)
_files = sa.Table(
    'skillshelf_files',
    _schema,
    sa.Column('skill', sa.String(64), primary_key=True),
    sa.Column('path', sa.String(1024), primary_key=True),
    sa.Column('data', sa.LargeBinary, nullable=False),
)
_Prepared: TypeAlias = 'tuple[Skill[Any], dict[str, str], dict[str, bytes]]'  # a skill, its catalog row, its files

_state = sa.Table(
    'skillshelf_state',
    _schema,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
    sa.Column('version', sa.Integer, nullable=False),
)


class SkillRegistry:
    """A registry of skills in a SQL database: publish, update and remove skills; as a `SkillSource`, every
    worker's library reads it, and a change reaches each worker at its next run.

    ```python
    registry = SkillRegistry('postgresql+psycopg://skills@db/skills')
    registry.publish('skills/pdf-forms')
    agent = Agent(model, capabilities=[Skills(sources=[registry])])
    ```
    """

    def __init__(self, url: str | sa.URL | sa.Engine) -> None:
        """Connect to the database at `url` (an SQLAlchemy URL or engine) and create the tables if they are missing.

        Raises:
            SkillError: the database cannot be reached, or its driver is not installed.
        """
        try:
            self.engine = url if isinstance(url, sa.Engine) else sa.create_engine(url, pool_pre_ping=True)
            _schema.create_all(self.engine)
            with self.engine.begin() as connection:
                if connection.execute(sa.select(_state.c.version)).first() is None:
                    connection.execute(_state.insert().values(id=1, version=0))
        except (SQLAlchemyError, ImportError) as error:
            if not _raced(self.engine if hasattr(self, 'engine') else None):
                raise SkillError(
                    f'the skill registry {_shown_url(url)} cannot be used: {_first_line(error)}'
                ) from error
        self.label = f'registry {_shown_url(self.engine)}'
        """How the registry is named in messages and in its skills' `origin`."""

    def __repr__(self) -> str:
        return f'SkillRegistry({_shown_url(self.engine)!r})'

    def version(self) -> Hashable:
        """The change counter: one more for every publish and removal."""
        with self.engine.connect() as connection:
            return connection.execute(sa.select(_state.c.version).where(_state.c.id == 1)).scalar_one()

    def read_skills(self) -> SourceSkills:
        """The catalog rows, in name order, as skills whose bodies and files are read when they are used."""
        has_files = sa.exists().where(_files.c.skill == _skills.c.name).label('has_files')
        columns = (_skills.c.name, _skills.c.description, _skills.c.meta, has_files)
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(*columns).order_by(_skills.c.name)).all()
        result = SourceSkills()
        starts = _BodyStarts(self)
        for name, description, meta, files in rows:
            origin = f'{self.label}/{name}'
            try:
                content = _RegistryContent(self, starts, name, origin, bool(files))
                result.skills.append(self._catalog_skill(content, description, json.loads(meta)))
            except (SkillFormatError, ValueError) as error:
                result.skipped.append(skipped(origin, getattr(error, 'problem', str(error))))
        return result

    def _catalog_skill(self, content: _RegistryContent, description: str, meta: object) -> Skill[Any]:
        if not isinstance(meta, dict):
            raise ValueError('its metadata is not a JSON object')
        return Skill.from_content(content.name, description, content, metadata=cast('dict[str, Any]', meta))

    def publish(self, folder: str | Path) -> Skill[Any]:
        """Publish the skill folder `folder` (its `SKILL.md` and text files), replacing a skill of the same name.

        Raises:
            SkillFormatError: the folder is not a valid skill, or a file is too large or too many.
        """
        return self.publish_many([folder])[0]

    def publish_many(self, folders: Iterable[str | Path]) -> list[Skill[Any]]:
        """Publish several skill folders like `publish`, in one transaction: workers see all of them or none, and a
        large library is published in one commit instead of one per skill.

        Raises:
            SkillFormatError: a folder is not a valid skill, or a file is too large or too many; nothing is published.
        """
        prepared: list[_Prepared] = []
        for folder in folders:
            skill = Skill.from_folder(folder)
            assert skill.skill_file is not None
            files: dict[str, str | bytes] = {}
            for path in skill.list_resources():
                try:
                    files[path] = skill.read_resource(path)
                except ResourceError as error:  # binary or too large: unreadable from the folder too
                    warnings.warn(SkillWarning(f'{skill.origin}: not published: {error}'), stacklevel=2)
            prepared.append(self._prepare(read_skill_file(skill.skill_file).decode('utf-8', 'surrogateescape'), files))
        self._store(prepared)
        return [skill for skill, _, _ in prepared]

    def publish_markdown(self, text: str, files: Mapping[str, str | bytes] | None = None) -> Skill[Any]:
        """Publish a skill from `SKILL.md` text and its files (see `Skill.from_markdown`), replacing one of the same
        name; the checks are a folder skill's. Returns the skill as published.

        Raises:
            SkillFormatError: the text breaks the format, or a file's path is unsafe, its size over the read limit,
                or there are more than `MAX_LISTED_RESOURCES` files.
        """
        prepared = self._prepare(text, files)
        self._store([prepared])
        return prepared[0]

    def _prepare(self, text: str, files: Mapping[str, str | bytes] | None) -> _Prepared:
        if files is not None and len(files) > MAX_LISTED_RESOURCES:
            raise SkillFormatError(self.label, f'{len(files)} files; a skill may have at most {MAX_LISTED_RESOURCES}')
        skill = Skill.from_markdown(text, files, origin=self.label)
        data: dict[str, bytes] = {}
        for path in skill.list_resources():
            try:
                data[path] = skill.content.read_bytes(path, MAX_RESOURCE_BYTES)
            except ResourceError:
                raise SkillFormatError(
                    self.label, f'{path!r} is over the {MAX_RESOURCE_BYTES:,}-byte read limit'
                ) from None
        row = {
            'name': skill.name,
            'description': skill.description,
            'meta': json.dumps(skill.metadata, default=str, sort_keys=True),
            'body_start': skill.load_instructions(BODY_START_CHARS),
            'text': text,
        }
        return skill, row, data

    def _store(self, prepared: list[_Prepared]) -> None:
        with self.engine.begin() as connection:
            revision = self._bump(connection)  # first, so concurrent publishers wait on the counter's row lock
            for skill, row, data in prepared:
                connection.execute(_files.delete().where(_files.c.skill == skill.name))
                connection.execute(_skills.delete().where(_skills.c.name == skill.name))
                connection.execute(_skills.insert().values(**row, revision=revision))
                if data:
                    connection.execute(
                        _files.insert(), [{'skill': skill.name, 'path': p, 'data': d} for p, d in data.items()]
                    )

    def remove(self, name: str) -> bool:
        """Remove the skill `name` and its files; returns whether there was one."""
        with self.engine.begin() as connection:
            gone = connection.execute(_skills.delete().where(_skills.c.name == name)).rowcount
            connection.execute(_files.delete().where(_files.c.skill == name))
            if gone:
                self._bump(connection)
        return bool(gone)

    def catalog(self) -> list[tuple[str, str, int]]:
        """Each published skill's name, description and revision (the version that published it), by name."""
        columns = (_skills.c.name, _skills.c.description, _skills.c.revision)
        with self.engine.connect() as connection:
            return [tuple(row) for row in connection.execute(sa.select(*columns).order_by(_skills.c.name))]  # pyright: ignore[reportReturnType]

    def _bump(self, connection: sa.Connection) -> int:
        connection.execute(_state.update().where(_state.c.id == 1).values(version=_state.c.version + 1))
        return connection.execute(sa.select(_state.c.version).where(_state.c.id == 1)).scalar_one()

    def _fetch(self, statement: sa.Select[Any]) -> sa.Row[Any] | None:
        with self.engine.connect() as connection:
            return connection.execute(statement).first()


@dataclass
class _BodyStarts:
    """The body starts of one catalog read, fetched in one query when the first search builds its index."""

    registry: SkillRegistry
    starts: dict[str, str] | None = field(default=None)

    def of(self, name: str) -> str:
        if self.starts is None:
            with self.registry.engine.connect() as connection:
                rows = connection.execute(sa.select(_skills.c.name, _skills.c.body_start))
                self.starts = {row[0]: row[1] for row in rows}
        return self.starts.get(name, '')


@dataclass(frozen=True)
class _RegistryContent:
    """A published skill's content as a worker sees it: the body and files are read from the registry when they are
    used, and the start of the body comes from the catalog read that the first search makes."""

    registry: SkillRegistry
    starts: _BodyStarts
    name: str
    origin: str
    stored_files: bool
    """Whether the catalog read found files stored for the skill."""

    def instructions(self, max_chars: int | None = None) -> str:
        """The body: from the catalog read for the search index's share of it, else read from the registry now."""
        if max_chars is not None and max_chars <= BODY_START_CHARS:
            return self.starts.of(self.name)[:max_chars]
        row = self.registry._fetch(sa.select(_skills.c.text).where(_skills.c.name == self.name))  # pyright: ignore[reportPrivateUsage]
        if row is None:
            raise SkillFormatError(self.origin, 'the skill was removed from the registry; the next run drops it')
        front, body = read_markdown(self.origin, row[0])
        if front.name != self.name:
            raise SkillFormatError(self.origin, f'the stored SKILL.md is named {front.name!r}, not {self.name!r}')
        return body[:max_chars]

    def list_files(self) -> list[str]:
        """The stored file paths that are plain relative paths (anything else could not be read), in order."""
        with self.registry.engine.connect() as connection:
            statement = sa.select(_files.c.path).where(_files.c.skill == self.name).order_by(_files.c.path)
            paths = list(connection.execute(statement.limit(MAX_LISTED_RESOURCES)).scalars())
        return [path for path in paths if _is_plain(path)]

    def has_files(self) -> bool:
        """Whether the catalog read found files stored for the skill (no query of its own)."""
        return self.stored_files

    def read_bytes(self, path: str, max_bytes: int) -> bytes:
        """One stored file, refused like a folder's: unsafe paths, missing, over `max_bytes`."""
        relative = safe_relative_path(path).as_posix()
        where = (_files.c.skill == self.name) & (_files.c.path == relative)
        size = self.registry._fetch(sa.select(sa.func.length(_files.c.data)).where(where))  # pyright: ignore[reportPrivateUsage]
        if size is None:
            raise ResourceError(f'no resource {shown(path)}')
        if size[0] > max_bytes:
            raise too_large(path, size[0], max_bytes)
        row = self.registry._fetch(sa.select(_files.c.data).where(where))  # pyright: ignore[reportPrivateUsage]
        if row is None:
            raise ResourceError(f'no resource {shown(path)}')
        return bytes(row[0])


def _is_plain(path: str) -> bool:
    try:
        return safe_relative_path(path).as_posix() == path
    except ResourceError:
        return False


def _raced(engine: sa.Engine | None) -> bool:
    """Whether another process created the tables or the counter while this one did (then they are usable)."""
    if engine is None:
        return False
    try:
        with engine.connect() as connection:
            return connection.execute(sa.select(_state.c.version)).first() is not None
    except SQLAlchemyError:
        return False


def _shown_url(url: str | sa.URL | sa.Engine) -> str:
    """The URL without its password, for messages."""
    try:
        parsed = url.url if isinstance(url, sa.Engine) else sa.make_url(url)
    except ArgumentError:
        return repr(url)
    return parsed.render_as_string(hide_password=True)


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
