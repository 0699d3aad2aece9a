"""`SkillRegistry`: skills published to a SQL database (SQLAlchemy; the `registry` extra) and read by every worker.

Every publish keeps a revision: a skill's `SKILL.md` text and every file, byte for byte (binary ones too, each file
stored once however many revisions or skills have it). A rollback makes an earlier revision live again as a new
revision; a removal is a revision too, so it can be rolled back. A registry version counts every change; a worker
checks it once per run (one query) and, when it moved, reads only the catalog rows changed since its last read. A
worker can pin the whole registry to a version, or single skills to revisions (`RegistryPins`). Bodies are read when
a skill is loaded, files when they are read or copied into a run's workspace, body starts once, at the first search.
SQLite is the embedded default (`sqlite:///skills.db`); PostgreSQL (`postgresql+psycopg://...`) serves a fleet.
"""

from __future__ import annotations

import warnings
from collections.abc import Generator, Hashable, Iterable, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, cast

import sqlalchemy as sa
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from .._text import hide_passwords
from ..content.base import MAX_FILE_BYTES, MAX_SKILL_BYTES
from ..errors import SkillError, SkillWarning
from ..skill import Skill
from ..sources.base import SourceSkills
from . import store
from .pins import RegistryPins
from .reader import CatalogReader, Unreachable
from .schema import SCHEMA, SCHEMA_1_TABLES, AnyRow, AnySelect, catalog, open_schema, revisions, state

__all__ = (
    'MAX_FILE_BYTES',
    'MAX_SKILL_BYTES',
    'SCHEMA',
    'SCHEMA_1_TABLES',
    'RegistryEntry',
    'RegistryPins',
    'SkillRegistry',
)


class RegistryEntry(NamedTuple):
    """One revision of a skill in a registry (`SkillRegistry.catalog`, `SkillRegistry.history`)."""

    name: str
    """The skill's name."""
    description: str
    """Its description in this revision."""
    revision: int
    """The revision: 1 for the first publish, one more for every publish, rollback and removal of the skill."""
    version: int
    """The registry version that made it."""
    action: str
    """`'publish'`, `'rollback'` (a copy of revision `restored`) or `'remove'`."""
    restored: int | None
    """For a rollback, the revision it made live again."""
    published_at: datetime | None
    """When it was made (UTC); `None` for a skill moved from a registry of skillshelf before revisions."""
    files: int
    """How many files it has (besides `SKILL.md`)."""
    bytes: int
    """Their size together."""
    revisions: int
    """How many revisions the skill has in all (its history)."""


class SkillRegistry:
    """A registry of skills in a SQL database: publish, roll back and remove skills; as a `SkillSource`, every
    worker's library reads it, and a change reaches each worker at its next run.

    ```python
    registry = SkillRegistry('postgresql+psycopg://skills@db/skills')
    registry.publish('skills/pdf-forms')
    agent = Agent(model, capabilities=[Skills(sources=[registry])])
    pinned = SkillRegistry(url, version=41)  # the registry as it was at version 41, for a reproducible fleet
    ```
    """

    reports_version = True
    """A read says which registry version it is as of (see `SourceSkills.version`): no separate query for it."""

    def __init__(
        self, url: str | sa.URL | sa.Engine, *, version: int | None = None, pins: Mapping[str, int] | None = None
    ) -> None:
        """Connect to the database at `url` (an SQLAlchemy URL or engine), creating the tables if they are missing
        (a registry of an older skillshelf is moved to the current tables, see `schema`); `version` and `pins` say
        which revisions a worker reads (see `RegistryPins`).

        Raises:
            SkillError: an option is wrong, the database cannot be reached or was written by a newer skillshelf, its
                driver is not installed, or `version` is later than the registry's.
        """
        self.pins = RegistryPins(version, dict(pins or {}))
        """Which revisions this worker reads."""
        self._password = url.password if isinstance(url, sa.URL) else None
        try:
            self.engine = url if isinstance(url, sa.Engine) else sa.create_engine(url, pool_pre_ping=True)
            self._password = self.engine.url.password
            open_schema(self.engine)
        except SkillError as error:
            raise SkillError(f'the skill registry {_shown_url(url)} cannot be used: {error}') from None
        except (SQLAlchemyError, ImportError, ValueError) as error:
            if not _raced(getattr(self, 'engine', None)):
                problem = self._hidden(_first_line(error))
                raise SkillError(f'the skill registry {_shown_url(url)} cannot be used: {problem}') from None
        self.label = f'registry {_shown_url(self.engine)}'
        """How the registry is named in messages and in its skills' `origin`."""
        self._reader = CatalogReader(self)
        if self.pins.version is not None and self.pins.version > (now := self.current_version()):
            raise SkillError(f'the `version` option is {self.pins.version}, but {self.label} is at version {now}')

    def __repr__(self) -> str:
        pinned = ''.join(f', {key}={value!r}' for key, value in vars(self.pins).items() if value)
        return f'SkillRegistry({_shown_url(self.engine)!r}{pinned})'

    def version(self) -> Hashable:
        """What changes when a read would find other skills: the registry version (one more for every change); a
        constant for a registry pinned to a version."""
        return self.version_token(None if self.pins.frozen else self.current_version())

    def version_token(self, version: int | None) -> Hashable:
        """`version()` for a read made at registry version `version`."""
        return ('pinned', self.pins.version) if self.pins.frozen else version

    def current_version(self) -> int:
        """The registry version now: one more for every publish, rollback and removal.

        Raises:
            SkillError: the registry cannot be read.
        """
        with self.connect() as connection:
            return connection.execute(sa.select(state.c.version).where(state.c.id == 1)).scalar_one()

    def read_skills(self) -> SourceSkills:
        """The skills, in name order, as skills whose bodies and files are read when they are used: every live (or
        pinned) catalog row at the first read, only the rows changed since at a later one."""
        return self._reader.read()

    @property
    def rows_read(self) -> int:
        """Catalog rows this handle's reads have fetched so far, for measurements: every live row at the first read,
        then only the rows each change made."""
        return self._reader.rows

    def publish(self, folder: str | Path, *, force: bool = False) -> Skill[Any]:
        """Publish the skill folder `folder` (its `SKILL.md` and every file, byte for byte) as the skill's next
        revision. Returns the skill as published.

        The content scan runs first (see `skillshelf scan`): a skill with a critical finding is not published
        unless `force` (say, after a person read it).

        Raises:
            SkillFormatError: the folder is not a valid skill, or a file cannot be stored (each is named): more than
                `MAX_LISTED_RESOURCES` files, one over `MAX_FILE_BYTES`, all over `MAX_SKILL_BYTES` together; or
                the scan refused it.
        """
        return self.publish_many([folder], force=force)[0]

    def publish_many(self, folders: Iterable[str | Path], *, force: bool = False) -> list[Skill[Any]]:
        """Publish several skill folders like `publish`, in one transaction: workers see all of them or none, and a
        large library is published in one commit instead of one per skill.

        Raises:
            SkillFormatError: a folder is not a valid skill, a file cannot be stored, two folders hold skills of
                the same name, or the scan refused one (unless `force`); nothing is published.
        """
        return self._store([store.prepare_folder(self.label, folder) for folder in folders], force)

    def publish_markdown(
        self, text: str, files: Mapping[str, str | bytes] | None = None, *, force: bool = False
    ) -> Skill[Any]:
        """Publish a skill from `SKILL.md` text and its files (text or bytes, by relative path; see
        `Skill.from_markdown`) as its next revision; the checks are a folder skill's. Returns the skill as published.

        Raises:
            SkillFormatError: the text breaks the format, or a file's path is unsafe, one is over `MAX_FILE_BYTES`,
                all are over `MAX_SKILL_BYTES`, or there are more than `MAX_LISTED_RESOURCES` files.
        """
        return self._store([store.prepare_markdown(self.label, text, files)], force)[0]

    def _store(self, prepared: Sequence[store.Prepared], force: bool) -> list[Skill[Any]]:
        if not force:
            store.screen(prepared)
        with self.connect(writing=True) as connection:
            store.store(connection, prepared)
        return [item.skill for item in prepared]

    def rollback(self, name: str, to: int | None = None) -> RegistryEntry:
        """Make revision `to` of skill `name` live again (default: the revision before the live one, or the last one
        before the skill was removed), as a new revision that copies it; workers see it at their next run.

        Raises:
            SkillError: there is no such skill or revision, `to` is the skill's removal or is live already.
        """
        with self.connect(writing=True) as connection:
            number = store.rollback(connection, name, to)
        return next(entry for entry in self.history(name) if entry.revision == number)

    def remove(self, name: str, *, purge: bool = False) -> bool:
        """Remove skill `name` from the catalog (workers drop it at their next run); its history stays, so a
        `rollback` brings it back. `purge` deletes its history too, and the file bytes no other revision uses.
        Returns whether anything changed."""
        try:
            with self.connect(writing=True) as connection:
                return store.remove(connection, name, purge=purge)
        except store.Unchanged:
            return False

    def prune(
        self,
        keep: int = 5,
        *,
        pins: Mapping[str, int | Iterable[int]] | None = None,
        versions: Iterable[int] = (),
        dry_run: bool = False,
    ) -> store.Pruned:
        """Delete old revisions, keeping for every skill its `keep` latest revisions, its live one (or its removal),
        the revisions `pins` names (`{'deploy': 3}`, as workers or lock files pin them) and the revisions live at
        each registry version of `versions` (the versions workers are pinned to); then the file contents no kept
        revision uses. Workers see no change. `remove(name, purge=True)` deletes a skill's whole history instead.
        Returns what was deleted (with `dry_run`, what would be, and nothing is).

        Raises:
            SkillError: `keep` is below 1, or the registry cannot be written.
        """
        if isinstance(keep, bool) or not isinstance(cast(object, keep), int) or keep < 1:
            raise SkillError(f'`keep` must be a number of revisions from 1 (the live one), not {keep!r}')
        held = {name: {value} if isinstance(value, int) else set(value) for name, value in (pins or {}).items()}
        with self.connect(writing=not dry_run) as connection:
            return store.prune(connection, keep, held, versions, dry_run=dry_run)

    def catalog(self) -> list[RegistryEntry]:
        """The live revision of every published skill, by name."""
        joined = catalog.join(
            revisions, (catalog.c.name == revisions.c.name) & (catalog.c.revision == revisions.c.revision)
        )
        return self._entries(sa.select(*_ENTRY).select_from(joined).where(catalog.c.live))

    def history(self, name: str | None = None) -> list[RegistryEntry]:
        """Every revision kept of skill `name` (of every skill, by name, when `None`), oldest first; empty for a name
        never published, or purged."""
        statement = sa.select(*_ENTRY)
        return self._entries(statement if name is None else statement.where(revisions.c.name == name))

    def _entries(self, statement: AnySelect) -> list[RegistryEntry]:
        counts = sa.select(revisions.c.name, sa.func.count().label('n')).group_by(revisions.c.name).subquery()
        statement = statement.add_columns(counts.c.n).join(counts, counts.c.name == revisions.c.name)
        with self.connect() as connection:
            rows = connection.execute(statement.order_by(revisions.c.name, revisions.c.revision)).all()
        return [RegistryEntry(*row) for row in rows]

    @contextmanager
    def connect(self, *, writing: bool = False) -> Generator[sa.Connection]:
        """A connection (in a transaction, committed at the end, when `writing`).

        Raises:
            SkillError: the database failed; the message never holds the URL's password.
        """
        try:
            with self.engine.begin() if writing else self.engine.connect() as connection:
                yield connection
        except SQLAlchemyError as error:
            raise SkillError(f'{self.label} failed: {self._hidden(_first_line(error))}') from None

    def fetch(self, statement: AnySelect) -> AnyRow | None:
        """The first row of `statement`, for a run using a skill.

        Raises:
            Unreachable: the database failed (the model is told without the registry's address).
        """
        return next(iter(self.fetch_all(statement)), None)

    def fetch_all(self, statement: AnySelect) -> Sequence[AnyRow]:
        """Every row of `statement`, for a run using a skill.

        Raises:
            Unreachable: the database failed.
        """
        try:
            with self.engine.connect() as connection:
                return connection.execute(statement).all()
        except SQLAlchemyError as error:
            warnings.warn(
                SkillWarning(f'{self.label} could not be read: {self._hidden(_first_line(error))}'), stacklevel=3
            )
            raise Unreachable from None

    def _hidden(self, text: str) -> str:
        return hide_passwords(text, self._password)


_ENTRY = (
    revisions.c.name,
    revisions.c.description,
    revisions.c.revision,
    revisions.c.version,
    revisions.c.action,
    revisions.c.restored,
    revisions.c.published_at,
    revisions.c.files,
    revisions.c.bytes,
)


def _raced(engine: sa.Engine | None) -> bool:
    """Whether another process created the tables or the registry row while this one did (then they are usable)."""
    if engine is None:
        return False
    try:
        with engine.connect() as connection:
            return connection.execute(sa.select(state.c.version)).first() is not None
    except SQLAlchemyError:
        return False


def _shown_url(url: str | sa.URL | sa.Engine) -> str:
    """The URL without its password, for messages; one that cannot be parsed is shown with any password hidden."""
    try:
        parsed = url.url if isinstance(url, sa.Engine) else sa.make_url(url)
    except (ArgumentError, ValueError, TypeError):
        return hide_passwords(repr(url))
    return parsed.render_as_string(hide_password=True)


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
