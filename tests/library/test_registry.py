"""The SQL registry on SQLite: publish, update, remove; a worker's runs see every change at their next run; hostile
rows (bad frontmatter, escaping file paths, huge files) are skipped or refused as a folder's would be."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from pydantic_ai import Agent
from pydantic_ai.messages import TextPart
from sqlalchemy import event

from skillshelf import SkillError, SkillFormatError, Skills, SkillWarning
from skillshelf.capability.meta_tools import MAX_PAGE_CHARACTERS
from skillshelf.content import MAX_RESOURCE_BYTES
from skillshelf.sources.registry import SkillRegistry

from reliability.ledger import case
from scripted_model import Script, call, tool_returns
from skill_files import skill_md, write_skill


def run(capability: Skills[Any], *steps: list[object]) -> list[object]:
    script = Script([*steps, [TextPart('done')]])  # pyright: ignore[reportArgumentType]
    messages = Agent(script.model(), capabilities=[capability]).run_sync('go').all_messages()
    return [*tool_returns(messages, 'load_skill'), *tool_returns(messages, 'read_skill_resource')]


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f'sqlite:///{tmp_path / "skills.db"}'


def test_publish_update_remove_reach_a_worker_at_its_next_run(tmp_path: Path, url: str) -> None:
    publisher = SkillRegistry(url)
    publisher.publish(write_skill(tmp_path / 'v1', 'deploy', 'Deploy v1.', files={'reference/steps.md': 'Step list'}))
    worker = Skills[None](sources=[SkillRegistry(url)])  # another handle, as another process would have

    returns = run(
        worker,
        [call('load_skill', name='deploy')],
        [call('read_skill_resource', name='deploy', path='reference/steps.md')],
    )
    assert 'Deploy v1.' in str(returns[0])
    assert returns[1] == 'Step list'

    publisher.publish(write_skill(tmp_path / 'v2', 'deploy', 'Deploy v2.'))
    publisher.publish_markdown(skill_md('rollback', 'Undo it.'), {'notes.md': 'n'})
    returns = run(worker, [call('load_skill', name='rollback')], [call('load_skill', name='deploy')])
    assert 'Undo it.' in str(returns[0])
    assert 'Deploy v2.' in str(returns[1])
    assert [row[:2] for row in publisher.catalog()] == [
        ('deploy', 'Handles deploy work.'),
        ('rollback', 'Handles rollback work.'),
    ]

    assert publisher.remove('deploy') is True
    assert publisher.remove('deploy') is False
    run(worker)
    assert list(worker.library.skills) == ['rollback']
    assert worker.library.removed == {'deploy': 'its folder was deleted or moved'}


def test_publish_many_is_one_change_and_all_or_nothing(tmp_path: Path, url: str) -> None:
    publisher = SkillRegistry(url)
    publisher.publish_markdown(skill_md('deploy', 'Deploy v1.'))
    worker = Skills[None](sources=[SkillRegistry(url)])
    before = publisher.version()
    assert isinstance(before, int)
    broken = tmp_path / 'broken'
    broken.mkdir()
    (broken / 'SKILL.md').write_text('---\nname: broken\n---\n', encoding='utf-8')  # nothing describes it
    folders = [write_skill(tmp_path / 'lib', name, f'{name} body.', files={'a.md': name}) for name in ('csv', 'deploy')]
    with pytest.raises(SkillFormatError, match='description'):
        publisher.publish_many([*folders, broken])
    assert publisher.version() == before
    assert [row[0] for row in publisher.catalog()] == ['deploy']

    published = publisher.publish_many(folders)
    assert [skill.name for skill in published] == ['csv', 'deploy']
    assert publisher.version() == before + 1  # one change: workers see both skills at once
    returns = run(
        worker,
        [call('load_skill', name='deploy'), call('load_skill', name='csv')],
        [call('read_skill_resource', name='csv', path='a.md')],
    )
    assert 'deploy body.' in str(returns[0])
    assert returns[2] == 'csv'


def test_search_ranks_registry_skills_as_it_ranks_folder_skills(tmp_path: Path, url: str) -> None:
    registry = SkillRegistry(url)
    for name, body in [('csv-tools', 'Parse CSV files and spreadsheets.'), ('pdf-tools', 'Split PDF documents.')]:
        registry.publish(write_skill(tmp_path / 'lib', name, body, fields={'keywords': f'[{name}-kw]'}))
    from_registry = Skills[None](sources=[registry]).library
    from_folders = Skills[None](directories=[tmp_path / 'lib']).library
    for query in ('spreadsheet', 'pdf-tools-kw', 'split documents'):
        assert from_registry.search(query, 5) == from_folders.search(query, 5)


def test_a_worker_does_not_read_bodies_or_files_at_start(tmp_path: Path, url: str) -> None:
    registry = SkillRegistry(url)
    registry.publish_markdown(skill_md('notes'), {'a.md': 'A'})
    statements: list[str] = []
    worker_registry = SkillRegistry(url)
    event.listen(worker_registry.engine, 'before_cursor_execute', lambda *args: statements.append(args[2]))  # pyright: ignore[reportUnknownArgumentType, reportUnknownLambdaType]
    Skills[None](sources=[worker_registry])
    assert len(statements) == 2  # the version counter, then the catalog rows (and whether each has files)
    assert not any('body_start' in statement or 'skillshelf_files.path' in statement for statement in statements)
    statements.clear()
    run(Skills[None](sources=[worker_registry], auto_reload=True))
    assert statements[-1].startswith('SELECT skillshelf_state.version')


def test_publishing_checks_like_the_folder_reader(tmp_path: Path, url: str) -> None:
    registry = SkillRegistry(url)
    with pytest.raises(SkillFormatError, match='not valid YAML'):
        registry.publish_markdown('---\nname: x\ndescription: [unclosed\n---\n')
    with pytest.raises(SkillFormatError, match='cannot be a skill file'):
        registry.publish_markdown(skill_md('notes'), {'../escape.md': 'x'})
    with pytest.raises(SkillFormatError, match='over the 262,144-byte read limit') as raised:
        registry.publish_markdown(skill_md('notes'), {'huge.txt': 'x' * (MAX_RESOURCE_BYTES + 1)})
    case('Skill files', 'publishing a file over the read limit to the registry', str(raised.value))
    folder = write_skill(tmp_path, 'images', 'Has a picture.')
    (folder / 'logo.png').write_bytes(b'\x89PNG\x00\x00')
    with pytest.warns(SkillWarning, match=r'logo.png.* binary file'):
        registry.publish(folder)
    assert registry.catalog()[0][0] == 'images'


def test_hostile_rows_are_skipped_or_refused(tmp_path: Path, url: str) -> None:
    registry = SkillRegistry(url)
    registry.publish_markdown(skill_md('good'))
    with registry.engine.begin() as connection:
        row = {'body_start': '', 'revision': 99}
        connection.execute(
            sa.text(
                'INSERT INTO skillshelf_skills (name, description, meta, body_start, text, revision) VALUES '
                "('Bad Name', 'x', '{}', '', '', 99), ('not-json', 'x', '[1]', '', '', 99),"
                "('liar', 'x', '{}', '', :liar, 99), ('huge', 'x', '{}', '', :huge, 99)"
            ),
            {'liar': skill_md('someone-else'), 'huge': skill_md('huge'), **row},
        )
        connection.execute(
            sa.text('INSERT INTO skillshelf_files (skill, path, data) VALUES (:s, :p, :d)'),
            [
                {'s': 'good', 'p': '../../etc/passwd', 'd': b'root:x'},
                {'s': 'good', 'p': '/etc/shadow', 'd': b'x'},
                {'s': 'huge', 'p': 'big.txt', 'd': b'x' * (MAX_RESOURCE_BYTES + 1)},
            ],
        )
        connection.execute(sa.text('UPDATE skillshelf_state SET version = version + 1'))
    with pytest.warns(SkillWarning) as warned:
        worker = Skills[None](sources=[SkillRegistry(url)])
    problems = sorted(str(warning.message) for warning in warned)
    assert len(problems) == 2
    assert 'Bad Name' in problems[0]
    assert 'upper-case' in problems[0]
    assert 'not-json: its metadata is not a JSON object' in problems[1]
    case('Skill files', 'a registry row whose name breaks the rules', problems[0], root=str(tmp_path))
    assert list(worker.library.skills) == ['good', 'huge', 'liar']

    assert worker.library.skills['good'].list_resources() == []  # the escaping paths are never listed
    returns = run(
        worker,
        [call('load_skill', name='good')],
        [call('read_skill_resource', name='good', path='../../etc/passwd')],
        [call('load_skill', name='huge')],
        [call('read_skill_resource', name='huge', path='big.txt')],
        [call('load_skill', name='liar')],
    )
    read_escape, read_huge = str(returns[-2]), str(returns[-1])
    assert 'not a path inside the skill folder' in read_escape
    assert read_huge.endswith('only the first are shown]\n\n[lines 1-1 of 1]')  # one page, never the whole file
    assert len(read_huge) < MAX_PAGE_CHARACTERS + 200
    case('Resource reads', 'a registry file stored as `../../etc/passwd`', read_escape)
    case('Resource reads', 'a registry file larger than a page', read_huge[-200:])
    assert "is named 'someone-else', not 'liar'" in str(returns[2])


def test_an_unreachable_registry_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match=r'the skill registry .* cannot be used'):
        SkillRegistry(f'sqlite:///{tmp_path / "missing-dir" / "x.db"}')
    with pytest.raises(SkillError, match='cannot be used'):
        SkillRegistry('nosuchdriver://x')


def test_spec_short_form_builds_a_registry_source(url: str) -> None:
    SkillRegistry(url).publish_markdown(skill_md('notes', 'From the spec.'))
    script = Script([[call('load_skill', name='notes')], [TextPart('done')]])
    spec = {'model': 'test', 'capabilities': [{'Skills': {'sources': [{'registry': url}]}}]}
    agent = Agent.from_spec(spec, custom_capability_types=[Skills], model=script.model())
    messages = agent.run_sync('go').all_messages()
    assert 'From the spec.' in str(tool_returns(messages, 'load_skill')[0])
    assert json.loads(json.dumps(SkillRegistry(url).catalog()))[0][0] == 'notes'


def test_cli_publishes_lists_and_unpublishes(tmp_path: Path, url: str) -> None:
    from typer.testing import CliRunner

    from skillshelf.cli.app import app

    runner = CliRunner(env={'COLUMNS': '200', 'NO_COLOR': '1'})
    library = tmp_path / 'lib'
    write_skill(library, 'deploy', 'Deploy.', files={'steps.md': 'Steps'})
    write_skill(library, 'notes', 'Notes.')
    (library / 'broken').mkdir()
    (library / 'broken' / 'SKILL.md').write_text('no frontmatter', encoding='utf-8')

    published = runner.invoke(app, ['publish', str(library), '--registry', url])
    assert published.exit_code == 0, published.output
    assert 'published deploy' in published.output
    assert '2 published to registry sqlite:///' in published.output
    assert 'broken' in published.output

    listed = runner.invoke(app, ['list', '--registry', url, '--json'])
    assert listed.exit_code == 0, listed.output
    skills = json.loads(listed.stdout)['skills']
    assert [(skill['name'], skill['resources']) for skill in skills] == [('deploy', ['steps.md']), ('notes', [])]
    assert skills[0]['source'].startswith('registry sqlite:///')

    assert runner.invoke(app, ['unpublish', 'notes', '--registry', url]).exit_code == 0
    missing = runner.invoke(app, ['unpublish', 'notes', '--registry', url])
    assert missing.exit_code == 1
    assert "no skill 'notes'" in missing.output
    assert [row[0] for row in SkillRegistry(url).catalog()] == ['deploy']
