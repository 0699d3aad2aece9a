"""Revisions of a registry's skills, on SQLite and on a real PostgreSQL server: every publish kept, a rollback made
live at workers' next runs, removals undone, pins to a registry version or a skill's revision, a change read as only
the rows it changed (counted with SQLAlchemy's statement events), and a registry of the schema before revisions
moved to the current one (or one of a newer schema refused)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from pydantic_ai import Agent
from pydantic_ai.messages import TextPart
from sqlalchemy import event

from skillshelf import SkillError, Skills, SkillWarning
from skillshelf.content.base import MAX_FILE_BYTES
from skillshelf.registry.skill_registry import SkillRegistry

from binary_skills import CANVAS, canvas_files, write_canvas
from scripted_model import Script, call, tool_returns
from skill_files import skill_md


def loaded(capability: Skills[Any], name: str) -> str:
    """What `load_skill` returns for `name` in a real run of `capability`."""
    script = Script([[call('load_skill', name=name)], [TextPart('done')]])
    messages = Agent(script.model(), capabilities=[capability]).run_sync('go').all_messages()
    return str(tool_returns(messages, 'load_skill')[0])


def test_every_publish_is_kept_and_a_rollback_reaches_workers(registry_url: str) -> None:
    publisher = SkillRegistry(registry_url)
    publisher.publish_markdown(skill_md('deploy', 'Deploy v1.'), {'steps.md': 'one'})
    worker = Skills[None](sources=[SkillRegistry(registry_url)])
    assert 'Deploy v1.' in loaded(worker, 'deploy')
    publisher.publish_markdown(skill_md('deploy', 'Deploy v2, broken.'), {'steps.md': 'two', 'extra.md': 'x'})
    assert 'Deploy v2, broken.' in loaded(worker, 'deploy')

    entry = publisher.rollback('deploy')
    assert (entry.revision, entry.action, entry.restored, entry.files, entry.revisions) == (3, 'rollback', 1, 1, 3)
    assert 'Deploy v1.' in loaded(worker, 'deploy')  # seen at the worker's next run
    assert worker.library.skills['deploy'].list_resources() == ['steps.md']
    assert [(e.revision, e.action, e.version) for e in publisher.history('deploy')] == [
        (1, 'publish', 1),
        (2, 'publish', 2),
        (3, 'rollback', 3),
    ]
    with pytest.raises(SkillError, match="revision 3 of 'deploy' is live already"):
        publisher.rollback('deploy', to=3)
    with pytest.raises(SkillError, match=r"'deploy' has no revision 7 \(revisions: 1 \(publish\)"):
        publisher.rollback('deploy', to=7)
    with pytest.raises(SkillError, match="the registry has no revisions of 'ghost'"):
        publisher.rollback('ghost')
    assert publisher.current_version() == 3  # a refused rollback changes nothing

    assert publisher.remove('deploy') is True
    assert publisher.remove('deploy') is False
    loaded(worker, 'deploy')
    assert 'deploy' not in worker.library.skills
    assert publisher.rollback('deploy').restored == 3  # an unpublish is undone: the last live revision is back
    assert 'Deploy v1.' in loaded(worker, 'deploy')
    assert [e.action for e in publisher.history('deploy')] == ['publish', 'publish', 'rollback', 'remove', 'rollback']


def test_purging_deletes_the_history_and_only_unshared_bytes(registry_url: str) -> None:
    publisher = SkillRegistry(registry_url)
    publisher.publish_markdown(skill_md('one'), {'shared.bin': b'\x00same', 'own.bin': b'\x00one'})
    publisher.publish_markdown(skill_md('two'), {'shared.bin': b'\x00same'})
    assert publisher.remove('one', purge=True) is True
    assert publisher.history('one') == []
    with publisher.engine.connect() as connection:
        stored = set(connection.execute(sa.text('SELECT data FROM skillshelf_blobs')).scalars())
    assert {bytes(data) for data in stored} == {b'\x00same'}
    [skill] = SkillRegistry(registry_url).read_skills().skills
    assert skill.content.read_bytes('shared.bin', 100) == b'\x00same'
    publisher.publish_markdown(skill_md('one'))
    assert (
        publisher.history('one')[0].revision == 3
    )  # numbers are never reused (2 was the removal): a pin never meets other content


def test_a_worker_pinned_to_a_version_or_revision_keeps_it(registry_url: str) -> None:
    publisher = SkillRegistry(registry_url)
    publisher.publish_markdown(skill_md('deploy', 'Deploy v1.'))
    publisher.publish_markdown(skill_md('notes', 'Notes v1.'))
    frozen_at = publisher.current_version()
    publisher.publish_markdown(skill_md('deploy', 'Deploy v2.'))
    publisher.publish_markdown(skill_md('later', 'Published after the pin.'))
    publisher.remove('notes')

    frozen = Skills[None](sources=[SkillRegistry(registry_url, version=frozen_at)])
    assert list(frozen.library.skills) == ['deploy', 'notes']
    assert 'Deploy v1.' in loaded(frozen, 'deploy')
    assert 'Notes v1.' in loaded(frozen, 'notes')  # removed since, but not at the pinned version
    publisher.publish_markdown(skill_md('deploy', 'Deploy v3.'))
    assert 'Deploy v1.' in loaded(frozen, 'deploy')

    pinned = Skills[None](sources=[SkillRegistry(registry_url, pins={'deploy': 2})])
    assert list(pinned.library.skills) == ['deploy', 'later']
    assert 'Deploy v2.' in loaded(pinned, 'deploy')
    publisher.publish_markdown(skill_md('later', 'Later v2.'))
    assert 'Later v2.' in loaded(pinned, 'later')  # the skills not pinned follow what is live
    assert 'Deploy v2.' in loaded(pinned, 'deploy')

    with pytest.warns(SkillWarning, match=r'notes: it is pinned to revision 9, which the registry does not have'):
        Skills[None](sources=[SkillRegistry(registry_url, pins={'notes': 9})])
    with pytest.warns(SkillWarning, match=r'notes: it is pinned to revision 2, which removed it'):
        Skills[None](sources=[SkillRegistry(registry_url, pins={'notes': 2})])
    with pytest.raises(SkillError, match=r'the `version` option is 99, but registry .* is at version 7'):
        SkillRegistry(registry_url, version=99)
    with pytest.raises(SkillError, match='the `pins` option must map skill names to revisions'):
        SkillRegistry(registry_url, pins={'deploy': 'latest'})  # pyright: ignore[reportArgumentType]
    assert repr(SkillRegistry(registry_url, pins={'deploy': 2})).endswith(", pins={'deploy': 2})")


def test_a_change_reads_only_the_rows_it_changed(registry_url: str) -> None:
    publisher = SkillRegistry(registry_url)
    for number in range(40):
        publisher.publish_markdown(skill_md(f'skill-{number:02}', f'Body {number}.'))
    worker_registry = SkillRegistry(registry_url)
    worker = Skills[None](sources=[worker_registry])
    before = dict(worker.library.skills)
    statements: list[tuple[str, Any]] = []
    event.listen(worker_registry.engine, 'before_cursor_execute', lambda *a: statements.append((a[2], a[3])))  # pyright: ignore[reportUnknownArgumentType, reportUnknownLambdaType]

    publisher.publish_markdown(skill_md('skill-07', 'Body 7, changed.'))
    publisher.remove('skill-11')
    publisher.publish_markdown(skill_md('skill-40', 'New.'))
    assert 'Body 7, changed.' in loaded(worker, 'skill-07')
    reads = [sql for sql, _ in statements if 'skillshelf_catalog' in sql]
    assert len(reads) == 1, reads  # the version check, then one query for the changed rows
    assert 'skillshelf_catalog.changed >' in reads[0]
    assert [sql.split()[1] for sql, _ in statements[:2]] == ['skillshelf_registry.version'] * 2
    after = worker.library.skills
    assert 'skill-11' not in after
    assert 'skill-40' in after
    unchanged = [name for name in before if name not in ('skill-07', 'skill-11')]
    assert all(after[name] is before[name] for name in unchanged)  # kept as they were: not read again

    statements.clear()
    loaded(worker, 'skill-40')
    assert not [sql for sql, _ in statements if 'skillshelf_catalog' in sql]  # nothing changed: the check alone
    assert worker.library.search('changed', 3)[0].name == 'skill-07'  # search sees the new body start


def test_binary_files_round_trip_byte_for_byte(registry_url: str, tmp_path: Path) -> None:
    SkillRegistry(registry_url).publish(write_canvas(tmp_path))
    [skill] = SkillRegistry(registry_url).read_skills().skills
    assert skill.name == CANVAS
    assert {path: skill.content.read_bytes(path, MAX_FILE_BYTES) for path in skill.list_resources()} == canvas_files()


def test_a_registry_of_the_schema_before_revisions_is_moved_into_the_new_tables(registry_url: str) -> None:
    engine = sa.create_engine(registry_url)
    old = sa.MetaData()
    skills = sa.Table(
        'skillshelf_skills',
        old,
        *(sa.Column(name, sa.Text) for name in ('name', 'description', 'meta', 'body_start', 'text')),
        sa.Column('revision', sa.Integer),
    )
    files = sa.Table(
        'skillshelf_files', old, *(sa.Column(n, sa.Text) for n in ('skill', 'path')), sa.Column('data', sa.LargeBinary)
    )
    state = sa.Table('skillshelf_state', old, sa.Column('id', sa.Integer), sa.Column('version', sa.Integer))
    old.create_all(engine)
    with engine.begin() as connection:
        connection.execute(state.insert().values(id=1, version=5))
        for name, revision in (('deploy', 3), ('notes', 5)):
            text = skill_md(name, f'{name} body.')
            row = {'description': f'Handles {name} work.', 'meta': '{}', 'body_start': f'{name} body.', 'text': text}
            connection.execute(skills.insert().values(name=name, revision=revision, **row))
        connection.execute(files.insert().values(skill='deploy', path='logo.png', data=b'\x89PNG\x00\x01'))
        many = [{'name': f'filler-{n:03}', 'revision': 4, 'description': 'Filler.', 'meta': '{}'} for n in range(450)]
        connection.execute(skills.insert(), [{**row, 'body_start': '', 'text': skill_md(row['name'])} for row in many])
    engine.dispose()

    registry = SkillRegistry(registry_url)
    assert registry.current_version() == 5
    entries = [(e.name, e.revision, e.version, e.files, e.published_at) for e in registry.catalog()]
    assert len(entries) == 452  # copied page by page
    assert [entry for entry in entries if not entry[0].startswith('filler-')] == [
        ('deploy', 1, 3, 1, None),
        ('notes', 1, 5, 0, None),
    ]
    worker = Skills[None](sources=[SkillRegistry(registry_url)])
    assert 'deploy body.' in loaded(worker, 'deploy')
    assert worker.library.skills['deploy'].content.read_bytes('logo.png', 100) == b'\x89PNG\x00\x01'
    with registry.engine.connect() as connection:
        assert connection.execute(sa.text('SELECT count(*) FROM skillshelf_skills')).scalar_one() == 452  # kept

    with registry.engine.begin() as connection:
        connection.execute(sa.text('UPDATE skillshelf_registry SET schema = 3'))
    with pytest.raises(
        SkillError, match=r'written by a newer skillshelf \(registry schema 3; this one reads schema 2\)'
    ):
        SkillRegistry(registry_url)
