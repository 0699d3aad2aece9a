"""Writing to a registry: preparing a skill (checked like a folder skill, every file byte for byte), then publishing
it as a new revision, rolling a skill back to an earlier revision, removing it, purging its history.

Every write bumps the registry version first, in the same transaction: concurrent writers wait on that row's lock,
so registry versions are committed in order (a worker that sees version N sees every change up to N), and each
change's rows carry the version that made it.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar, cast

import sqlalchemy as sa

from ..content import TextContent
from ..content.base import MAX_FILE_BYTES, MAX_LISTED_RESOURCES, MAX_SKILL_BYTES
from ..content.folder import list_folder_resources, read_folder_bytes
from ..errors import ResourceError, SkillError, SkillFormatError
from ..markdown.bounded_read import read_skill_file
from ..markdown.frontmatter import FormatDeviation
from ..ranking.lexical import RankingConfig
from ..scan import refusal, scan_skill
from ..skill import Skill, markdown_skill
from .schema import blobs, catalog, files, revisions, state

__all__ = (
    'BODY_START_CHARS',
    'Prepared',
    'Pruned',
    'prepare_folder',
    'prepare_markdown',
    'prune',
    'remove',
    'rollback',
    'screen',
    'store',
)

BODY_START_CHARS = RankingConfig().body_chars
"""How much of each body the catalog row keeps: what search indexes, so ranking matches a folder library's."""
_CHUNK = 500
"""Names or digests per `IN (...)` list, under every database's limit on bound parameters."""
_T = TypeVar('_T')


@dataclass(frozen=True)
class Prepared:
    """A skill ready to be published: checked, its catalog fields worked out, its files read."""

    skill: Skill[Any]
    """The skill as published (its content in memory)."""
    row: dict[str, str]
    """Its `description`, `meta` (JSON), `body_start` and `text` (the whole `SKILL.md`)."""
    files: dict[str, bytes]
    """Every file, byte for byte, by relative path."""


def prepare_folder(label: str, folder: str | Path) -> Prepared:
    """The skill folder `folder`, with every file a folder skill serves (binary ones included), byte for byte.

    Raises:
        SkillFormatError: the folder is not a valid skill, has more than `MAX_LISTED_RESOURCES` files, or a file
            cannot be read or is over `MAX_FILE_BYTES` (all of them are named), or they are over `MAX_SKILL_BYTES`
            together. Nothing is left out quietly.
    """
    skill = Skill.from_folder(folder)  # warns about its deviations from the format, under the folder's name
    skill_file = skill.skill_file
    assert skill_file is not None
    paths = list_folder_resources(skill_file.folder, limit=MAX_LISTED_RESOURCES + 1)
    if len(paths) > MAX_LISTED_RESOURCES:
        raise SkillFormatError(
            skill.origin, f'it has more than {MAX_LISTED_RESOURCES} files; a skill may have at most that many'
        )
    data: dict[str, bytes] = {}
    refused: list[str] = []
    for path in paths:
        try:
            data[path] = read_folder_bytes(skill_file.folder, path, MAX_FILE_BYTES)
        except ResourceError as error:
            refused.append(str(error))
    if refused:
        raise SkillFormatError(skill.origin, f'not published, as these files cannot be stored: {"; ".join(refused)}')
    text = read_skill_file(skill_file).decode('utf-8', 'surrogateescape')
    return prepare_markdown(label, text, data, deviations=[])  # already reported under the folder's name


def prepare_markdown(
    label: str,
    text: str,
    files: Mapping[str, str | bytes] | None,
    deviations: list[FormatDeviation] | None = None,
) -> Prepared:
    """A skill from `SKILL.md` text and its files, checked as `Skill.from_markdown` checks them (deviations from the
    format go to `deviations`, or are warned about when it is `None`).

    Raises:
        SkillFormatError: the text breaks the format, a file's path is unsafe, there are more than
            `MAX_LISTED_RESOURCES` files, one is over `MAX_FILE_BYTES` or all are over `MAX_SKILL_BYTES`.
    """
    if files is not None and len(files) > MAX_LISTED_RESOURCES:
        raise SkillFormatError(label, f'{len(files)} files; a skill may have at most {MAX_LISTED_RESOURCES}')
    if deviations is None:
        skill = Skill.from_markdown(text, files, origin=label)
    else:
        skill = markdown_skill(text, files, origin=label, folder=None, deviations=deviations)
    data = dict(cast(TextContent, skill.content).files)
    over = [f'{path!r} ({len(blob):,} bytes)' for path, blob in data.items() if len(blob) > MAX_FILE_BYTES]
    if over:
        raise SkillFormatError(
            label, f'{", ".join(over)} over the {MAX_FILE_BYTES:,}-byte limit for one file of a skill'
        )
    if (total := sum(map(len, data.values()))) > MAX_SKILL_BYTES:
        raise SkillFormatError(
            label, f'its files are {total:,} bytes together, over the {MAX_SKILL_BYTES:,}-byte limit for one skill'
        )
    row = {
        'description': skill.description,
        'meta': json.dumps(skill.metadata, default=str, sort_keys=True),
        'body_start': skill.load_instructions(BODY_START_CHARS),
        'text': text,
    }
    return Prepared(skill, row, data)


def screen(prepared: Sequence[Prepared]) -> None:
    """The content scan of skills about to be published, as a library runs it at load.

    Raises:
        SkillFormatError: a skill has a critical finding (each is named); nothing is published.
    """
    for item in prepared:
        critical = [finding for finding in scan_skill(item.skill) if finding.severity == 'critical']
        if critical:
            raise SkillFormatError(item.skill.origin, refusal(critical, 'publish it with `force=True` (`--force`)'))


def store(connection: sa.Connection, prepared: Sequence[Prepared]) -> list[int]:
    """Publish every skill of `prepared` as its next revision, as one change; the revisions, in order.

    Raises:
        SkillFormatError: two of them have the same name.
    """
    names = [item.skill.name for item in prepared]
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise SkillFormatError(None, f'{", ".join(map(repr, twice))} given more than once in one publish')
    version = bump(connection)
    heads: dict[str, int] = {}
    for chunk in _chunks(names):
        found = connection.execute(sa.select(catalog.c.name, catalog.c.revision).where(catalog.c.name.in_(chunk)))
        heads.update((name, revision) for name, revision in found)
    _put_blobs(
        connection, {hashlib.sha256(data).hexdigest(): data for item in prepared for data in item.files.values()}
    )
    now = datetime.now(timezone.utc)
    numbers: list[int] = []
    revision_rows: list[dict[str, Any]] = []
    catalog_rows: list[dict[str, Any]] = []
    file_rows: list[dict[str, Any]] = []
    for item in prepared:
        name, number = item.skill.name, heads.get(item.skill.name, 0) + 1
        numbers.append(number)
        size = sum(map(len, item.files.values()))
        revision_rows.append(
            {'name': name, 'revision': number, 'version': version, 'action': 'publish', 'restored': None}
            | {'published_at': now, **item.row, 'files': len(item.files), 'bytes': size}
        )
        catalog_rows.append(_catalog_row(name, number, version, item.row, len(item.files)))
        file_rows.extend(
            {
                'name': name,
                'revision': number,
                'path': path,
                'blob': hashlib.sha256(data).hexdigest(),
                'size': len(data),
            }
            for path, data in item.files.items()
        )
    for chunk in _chunks(names):
        connection.execute(catalog.delete().where(catalog.c.name.in_(chunk)))
    connection.execute(catalog.insert(), catalog_rows)
    connection.execute(revisions.insert(), revision_rows)
    if file_rows:
        connection.execute(files.insert(), file_rows)
    return numbers


def rollback(connection: sa.Connection, name: str, to: int | None) -> int:
    """Make revision `to` of `name` live again (default: the revision before the live one, or the last one before the
    skill was removed), as a new revision that copies it; the new revision's number.

    Raises:
        SkillError: there is no such skill or revision, `to` is the removal of the skill or is live already.
    """
    version = bump(connection)
    head = connection.execute(sa.select(catalog.c.revision, catalog.c.live).where(catalog.c.name == name)).first()
    history = connection.execute(
        sa.select(revisions.c.revision, revisions.c.action)
        .where(revisions.c.name == name)
        .order_by(revisions.c.revision)
    ).all()
    if head is None or not history:
        kept = '' if head is None else ' (its history was purged)'
        raise SkillError(f'the registry has no revisions of {name!r}{kept}')
    actions: dict[int, str] = dict(history)  # pyright: ignore[reportArgumentType]
    if to is None:
        earlier = [number for number, action in history if action != 'remove' and number < head.revision]
        if not earlier:
            raise SkillError(f'{name!r} has no earlier revision to roll back to (revisions: {_listed(actions)})')
        to = earlier[-1]
    elif to not in actions:
        raise SkillError(f'{name!r} has no revision {to} (revisions: {_listed(actions)})')
    elif actions[to] == 'remove':
        raise SkillError(f'revision {to} of {name!r} is its removal; roll back to a revision that published it')
    elif head.live and to == head.revision:
        raise SkillError(f'revision {to} of {name!r} is live already')
    source = (
        connection.execute(sa.select(revisions).where((revisions.c.name == name) & (revisions.c.revision == to)))
        .mappings()
        .one()
    )
    number = head.revision + 1
    row = {key: source[key] for key in ('description', 'meta', 'body_start', 'text')}
    connection.execute(
        revisions.insert().values(
            name=name, revision=number, version=version, action='rollback', restored=to,
            published_at=datetime.now(timezone.utc), files=source['files'], bytes=source['bytes'], **row,
        )
    )  # fmt: skip
    copied = sa.select(files.c.name, sa.literal(number), files.c.path, files.c.blob, files.c.size)
    connection.execute(
        files.insert().from_select(
            ['name', 'revision', 'path', 'blob', 'size'],
            copied.where((files.c.name == name) & (files.c.revision == to)),
        )
    )
    connection.execute(catalog.delete().where(catalog.c.name == name))
    connection.execute(catalog.insert().values(**_catalog_row(name, number, version, row, source['files'])))
    return number


def remove(connection: sa.Connection, name: str, *, purge: bool) -> bool:
    """Remove `name` from the catalog as a revision of its own (so it can be rolled back); with `purge`, delete its
    history and the file bytes no other revision uses. Whether anything changed.

    Raises:
        _Unchanged: nothing to do (the caller rolls back the version bump).
    """
    version = bump(connection)
    head = connection.execute(sa.select(catalog).where(catalog.c.name == name)).mappings().first()
    if head is None:
        raise Unchanged
    changed = False
    if head['live']:
        number = head['revision'] + 1
        connection.execute(
            revisions.insert().values(
                name=name, revision=number, version=version, action='remove', restored=None,
                published_at=datetime.now(timezone.utc), description=head['description'], meta=head['meta'],
                body_start='', text='', files=0, bytes=0,
            )
        )  # fmt: skip
        connection.execute(
            catalog.update()
            .where(catalog.c.name == name)
            .values(revision=number, live=False, changed=version, body_start='', files=0)
        )
        changed = True
    if purge:
        used = list(connection.execute(sa.select(files.c.blob).where(files.c.name == name).distinct()).scalars())
        connection.execute(files.delete().where(files.c.name == name))
        changed = connection.execute(revisions.delete().where(revisions.c.name == name)).rowcount > 0 or changed
        for chunk in _chunks(used):
            still = sa.select(files.c.blob).where(files.c.blob.in_(chunk))
            connection.execute(blobs.delete().where(blobs.c.sha256.in_(chunk) & blobs.c.sha256.not_in(still)))
    if not changed:
        raise Unchanged
    return True


@dataclass(frozen=True)
class Pruned:
    """What a prune deleted (or, as a dry run, would delete)."""

    revisions: int
    """Revisions deleted, with their files' rows."""
    blobs: int
    """File contents no kept revision uses any more, deleted."""
    bytes: int
    """Their size together."""


def prune(
    connection: sa.Connection,
    keep: int,
    pins: Mapping[str, Collection[int]],
    versions: Iterable[int],
    *,
    dry_run: bool = False,
) -> Pruned:
    """Delete every revision of every skill but its `keep` latest, its head (the live revision, or the removal of a
    removed skill), the revisions `pins` names and the revision live at each registry version of `versions` (a worker
    pinned to a version reads those); then the file contents no kept revision uses. The catalog is not touched, so
    workers see no change and the registry version does not move."""
    connection.execute(sa.select(state.c.version).where(state.c.id == 1).with_for_update())  # writers take turns
    heads = {str(row[0]): int(row[1]) for row in connection.execute(sa.select(catalog.c.name, catalog.c.revision))}
    history: defaultdict[str, list[tuple[int, int]]] = defaultdict(list)
    for name, revision, version in connection.execute(
        sa.select(revisions.c.name, revisions.c.revision, revisions.c.version).order_by(revisions.c.revision)
    ):
        history[name].append((revision, version))
    pinned_versions = sorted(set(versions))
    doomed: dict[str, list[int]] = {}
    for name, kept_rows in history.items():
        kept = {revision for revision, _ in kept_rows[-keep:]} | set(pins.get(name, ())) | {heads.get(name, 0)}
        for pinned in pinned_versions:
            live_then = [revision for revision, version in kept_rows if version <= pinned]
            kept.update(live_then[-1:])
        if gone := [revision for revision, _ in kept_rows if revision not in kept]:
            doomed[name] = gone
    used: dict[str, tuple[int, bool]] = {}  # blob: (size, whether a kept revision uses it)
    for name, revision, blob, size in connection.execute(
        sa.select(files.c.name, files.c.revision, files.c.blob, files.c.size)
    ):
        stays = revision not in doomed.get(name, ())
        used[blob] = (size, stays or used.get(blob, (0, False))[1])
    freed = {blob: size for blob, (size, stays) in used.items() if not stays}
    if not dry_run:
        for name, gone in doomed.items():
            for chunk in _chunks(gone):
                connection.execute(files.delete().where((files.c.name == name) & files.c.revision.in_(chunk)))
                connection.execute(
                    revisions.delete().where((revisions.c.name == name) & revisions.c.revision.in_(chunk))
                )
        for chunk in _chunks(list(freed)):
            connection.execute(blobs.delete().where(blobs.c.sha256.in_(chunk)))
    return Pruned(sum(map(len, doomed.values())), len(freed), sum(freed.values()))


class Unchanged(Exception):
    """A write found nothing to change: its transaction is rolled back, so the registry version does not move."""


def bump(connection: sa.Connection) -> int:
    """One more registry version, locking its row until the transaction ends; the new version."""
    connection.execute(state.update().where(state.c.id == 1).values(version=state.c.version + 1))
    return connection.execute(sa.select(state.c.version).where(state.c.id == 1)).scalar_one()


def _put_blobs(connection: sa.Connection, data: dict[str, bytes]) -> None:
    """Store the bytes the registry does not hold yet (writers take turns on the version row, so none races)."""
    held: set[str] = set()
    for chunk in _chunks(list(data)):
        held.update(connection.execute(sa.select(blobs.c.sha256).where(blobs.c.sha256.in_(chunk))).scalars())
    missing = [{'sha256': digest, 'data': blob} for digest, blob in data.items() if digest not in held]
    if missing:
        connection.execute(blobs.insert(), missing)


def _catalog_row(name: str, revision: int, version: int, row: Mapping[str, str], count: int) -> dict[str, Any]:
    fields = {key: row[key] for key in ('description', 'meta', 'body_start')}
    return {'name': name, 'revision': revision, 'live': True, 'changed': version, 'files': count, **fields}


def _listed(actions: Mapping[int, str]) -> str:
    return ', '.join(f'{number} ({action})' for number, action in actions.items())


def _chunks(items: Sequence[_T]) -> Iterator[Sequence[_T]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]
