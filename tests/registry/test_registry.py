"""The SQL registry on SQLite: publish, update, remove; a worker's runs see every change at their next run; hostile
rows (bad frontmatter, escaping file paths, huge files) are skipped or refused as a folder's would be."""

from __future__ import annotations

import hashlib
import json
import re
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
from skillshelf.content.base import MAX_FILE_BYTES
from skillshelf.registry.skill_registry import SkillRegistry

from binary_skills import CANVAS, canvas_files, png, write_canvas
from reliability.ledger import case
from scripted_model import Script, call, tool_returns
from skill_files import skill_md, write_skill
from warnings_said import said


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
    assert worker.library.removed == {'deploy': 'its source no longer has it (removed or unpublished)'}


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
    assert len(statements) == 2  # the version counter, then the live catalog rows (and how many files each has)
    assert not any('body_start' in statement or 'skillshelf_revision' in statement for statement in statements)
    statements.clear()
    run(Skills[None](sources=[worker_registry], auto_reload=True))
    assert statements[-1].startswith('SELECT skillshelf_registry.version')


def test_publishing_checks_like_the_folder_reader(tmp_path: Path, url: str) -> None:
    registry = SkillRegistry(url)
    with pytest.raises(SkillFormatError, match='not valid YAML'):
        registry.publish_markdown('---\nname: x\ndescription: [unclosed\n---\n')
    with pytest.raises(SkillFormatError, match='cannot be a skill file'):
        registry.publish_markdown(skill_md('notes'), {'../escape.md': 'x'})
    with pytest.raises(
        SkillFormatError, match=r"'huge.bin' \(67,108,865 bytes\) over the 67,108,864-byte limit"
    ) as raised:
        registry.publish_markdown(skill_md('notes'), {'huge.bin': bytes(MAX_FILE_BYTES + 1)})
    case('Skill files', 'publishing a file over the 64 MiB limit to the registry', str(raised.value))
    with pytest.raises(SkillFormatError, match='201 files; a skill may have at most 200'):
        registry.publish_markdown(skill_md('notes'), {f'{n}.md': 'x' for n in range(201)})
    assert registry.catalog() == []


def test_a_folder_is_published_byte_for_byte_or_not_at_all(tmp_path: Path, url: str) -> None:
    registry = SkillRegistry(url)
    folder = write_canvas(tmp_path / 'lib')
    registry.publish(folder)
    [entry] = registry.catalog()
    assert (entry.name, entry.revision, entry.files) == (CANVAS, 1, len(canvas_files()))
    assert entry.bytes == sum(map(len, canvas_files().values()))
    [skill] = SkillRegistry(url).read_skills().skills
    assert {path: skill.content.read_bytes(path, MAX_FILE_BYTES) for path in skill.list_resources()} == canvas_files()
    returns = run(
        Skills[None](sources=[SkillRegistry(url)]),
        [call('load_skill', name=CANVAS)],
        [call('read_skill_resource', name=CANVAS, path='assets/swatch.png')],
    )
    assert 'is a binary file' in str(returns[1])  # the model is told, the bytes are kept for the workspace

    crowded = write_skill(tmp_path / 'crowded', 'crowded', files={f'page-{n:03}.md': 'x' for n in range(201)})
    with pytest.raises(SkillFormatError, match='more than 200 files; a skill may have at most that many'):
        registry.publish(crowded)
    large = write_skill(tmp_path / 'large', 'large', files={'small.txt': 'x'})
    with open(large / 'data.bin', 'wb') as sparse:
        sparse.truncate(MAX_FILE_BYTES + 1)  # sparse: refused from its size, never read
    with pytest.raises(
        SkillFormatError, match=r"not published, as these files cannot be stored: 'data.bin' is"
    ) as raised:
        registry.publish_many([write_skill(tmp_path / 'fine', 'fine'), large])
    case('Skill files', 'publishing a folder with a file over the 64 MiB limit', str(raised.value), root=str(tmp_path))
    assert [entry.name for entry in registry.catalog()] == [CANVAS]  # all or nothing


def insert_rows(registry: SkillRegistry, rows: list[dict[str, Any]], files: list[dict[str, Any]] = ()) -> None:  # pyright: ignore[reportArgumentType]
    """Write catalog and revision rows (and files) straight into the tables, as a hostile writer could, then bump the
    registry version. Values wrapped in `raw(...)` are stored as TEXT holding those bytes, UTF-8 or not."""
    with registry.engine.begin() as connection:
        version = connection.execute(sa.text('SELECT version FROM skillshelf_registry')).scalar_one() + 1
        connection.execute(sa.text('UPDATE skillshelf_registry SET version = :v'), {'v': version})
        for row in rows:
            values = {'revision': 1, 'body_start': '', 'text': '', 'files': 0, 'description': 'x', 'meta': '{}', **row}
            texts = {key: f'CAST(:{key} AS TEXT)' for key in ('name', 'description', 'meta', 'body_start', 'text')}
            connection.execute(
                sa.text(
                    'INSERT INTO skillshelf_catalog (name, revision, live, changed, description, meta, body_start, '
                    f'files) VALUES ({texts["name"]}, :revision, 1, :changed, {texts["description"]}, {texts["meta"]}, '
                    f'{texts["body_start"]}, :files)'
                ),
                {**values, 'changed': version},
            )
            connection.execute(
                sa.text(
                    'INSERT INTO skillshelf_revisions (name, revision, version, action, description, meta, body_start, '
                    f"text, files, bytes) VALUES ({texts['name']}, :revision, :version, 'publish', "
                    f'{texts["description"]}, {texts["meta"]}, {texts["body_start"]}, {texts["text"]}, :files, 0)'
                ),
                {**values, 'version': version},
            )
        for row in files:
            digest = row.get('blob', hashlib.sha256(row['data']).hexdigest())
            connection.execute(
                sa.text('INSERT OR IGNORE INTO skillshelf_blobs (sha256, data) VALUES (:h, :d)'),
                {'h': digest, 'd': row['data']},
            )
            connection.execute(
                sa.text(
                    'INSERT INTO skillshelf_revision_files (name, revision, path, blob, size) '
                    'VALUES (:name, 1, CAST(:path AS TEXT), :h, :size)'
                ),
                {'name': row['name'], 'path': row['path'], 'h': digest, 'size': len(row['data'])},
            )


def test_hostile_rows_are_skipped_or_refused(tmp_path: Path, url: str) -> None:
    registry = SkillRegistry(url)
    registry.publish_markdown(skill_md('good'))
    insert_rows(
        registry,
        [
            {'name': 'Bad Name'},
            {'name': 'not-json', 'meta': '[1]'},
            {'name': 'bad-json', 'meta': '{"unclosed'},
            {'name': b'bad-\xffname'},
            {'name': 'bad-description', 'description': b'caf\xe9 au lait'},
            {'name': 'bad-start', 'body_start': b'\xff\xfe', 'text': skill_md('bad-start')},
            {'name': 'liar', 'text': skill_md('someone-else')},
            {'name': 'huge', 'text': skill_md('huge'), 'files': 1},
            {'name': 'tampered', 'text': skill_md('tampered'), 'files': 1},
        ],
        [
            {'name': 'good', 'path': '../../etc/passwd', 'data': b'root:x'},
            {'name': 'good', 'path': '/etc/shadow', 'data': b'x'},
            {'name': 'good', 'path': b'caf\xe9.md', 'data': b'x'},
            {'name': 'huge', 'path': 'big.txt', 'data': b'x' * (MAX_RESOURCE_BYTES + 1)},
            {
                'name': 'tampered',
                'path': 'run.sh',
                'data': b'echo evil',
                'blob': hashlib.sha256(b'echo fine').hexdigest(),
            },
        ],
    )
    with pytest.warns(SkillWarning) as warned:
        worker = Skills[None](sources=[SkillRegistry(url)])  # a new worker starts, whatever the rows hold
    problems = sorted(said(warned))
    assert len(problems) == 5, problems
    assert 'Bad Name: ' in problems[0]
    assert 'upper-case' in problems[0]
    assert 'bad-description: its description is not valid UTF-8' in problems[1]
    assert 'bad-json: its metadata is not valid JSON' in problems[2]
    assert 'bad-\ufffdname: its name is not valid UTF-8' in problems[3]
    assert 'not-json: its metadata is not a JSON object' in problems[4]
    for problem, what in zip(problems, ('name breaking the rules', 'description', 'metadata', 'name'), strict=False):
        case('Skill files', f'a registry row whose {what} cannot be decoded', problem, root=str(tmp_path))
    assert list(worker.library.skills) == ['bad-start', 'good', 'huge', 'liar', 'tampered']
    assert worker.library.search('bad start', 5)[0].name == 'bad-start'  # a start that is not UTF-8: still searched

    assert worker.library.skills['good'].list_resources() == []  # escaping or undecodable paths are never listed
    returns = run(
        worker,
        [call('load_skill', name='good')],
        [call('read_skill_resource', name='good', path='../../etc/passwd')],
        [call('load_skill', name='huge')],
        [call('read_skill_resource', name='huge', path='big.txt')],
        [call('load_skill', name='tampered')],
        [call('read_skill_resource', name='tampered', path='run.sh')],
        [call('load_skill', name='liar')],
    )
    read_escape, read_huge, read_tampered = (str(returns[index]) for index in (-3, -2, -1))
    assert 'not a path inside the skill folder' in read_escape
    assert read_huge.endswith('only the first are shown]\n\n[lines 1-1 of 1]')  # one page, never the whole file
    assert len(read_huge) < MAX_PAGE_CHARACTERS + 200
    assert "'run.sh' no longer matches the checksum it was published with" in read_tampered
    case('Resource reads', 'a registry file stored as `../../etc/passwd`', read_escape)
    case('Resource reads', 'a registry file larger than a page', read_huge[-200:])
    case('Resource reads', 'a registry file whose bytes were changed in the database', read_tampered)
    assert "is named 'someone-else', not 'liar'" in str(returns[3])

    insert_rows(registry, [{'name': b'late-\xff'}, {'name': 'late-good', 'text': skill_md('late-good')}])
    with pytest.warns(SkillWarning, match=r'late-\ufffd: its name is not valid UTF-8'):
        run(worker)  # a hostile row that arrives later is skipped at the next run's check, the rest is read
    assert 'late-good' in worker.library.skills


@pytest.mark.parametrize(('depth', 'kind'), [(100_000, 'list'), (100_000, 'object'), (40, 'object')])
def test_a_row_whose_metadata_is_nested_too_deep_is_skipped_and_the_rest_load(
    tmp_path: Path, url: str, depth: int, kind: str
) -> None:
    registry = SkillRegistry(url)
    registry.publish_markdown(skill_md('good'))
    inner = '[' * depth + ']' * depth if kind == 'list' else '{"a":' * depth + '1' + '}' * depth
    insert_rows(registry, [{'name': 'deep', 'meta': '{"x": ' + inner + '}', 'text': skill_md('deep')}])
    with pytest.warns(SkillWarning) as warned:
        worker = Skills[None](sources=[SkillRegistry(url)])  # a new worker starts, whatever the rows hold
    [problem] = said(warned)
    assert 'deep: its metadata is nested more than 32 levels deep' in problem
    assert list(worker.library.skills) == ['good']
    [loaded] = run(worker, [call('load_skill', name='good')])
    assert str(loaded).startswith("Loaded skill 'good'.")
    if depth == 100_000:
        case('Skill files', f'a registry row whose metadata is a JSON {kind} nested {depth:,} deep', problem)


def test_an_unreachable_registry_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match=r'the skill registry .* cannot be used'):
        SkillRegistry(f'sqlite:///{tmp_path / "missing-dir" / "x.db"}')
    with pytest.raises(SkillError, match='cannot be used'):
        SkillRegistry('nosuchdriver://x')


def test_spec_short_form_builds_a_registry_source(url: str) -> None:
    registry = SkillRegistry(url)
    registry.publish_markdown(skill_md('notes', 'From the spec.'))
    registry.publish_markdown(skill_md('notes', 'Changed later.'))
    script = Script([[call('load_skill', name='notes')], [TextPart('done')]])
    spec = {'model': 'test', 'capabilities': [{'Skills': {'sources': [{'registry': url, 'pins': {'notes': 1}}]}}]}
    agent = Agent.from_spec(spec, custom_capability_types=[Skills], model=script.model())
    messages = agent.run_sync('go').all_messages()
    assert 'From the spec.' in str(tool_returns(messages, 'load_skill')[0])
    assert [(entry.name, entry.revision, entry.revisions) for entry in registry.catalog()] == [('notes', 2, 2)]
    with pytest.raises(SkillError, match=r'the `version` option must be a registry version'):
        Skills[None](sources=[{'registry': url, 'version': 'latest'}])
    with pytest.raises(SkillError, match=r'a .registry. source takes version, pins, not ref'):
        Skills[None](sources=[{'registry': url, 'ref': 'main'}])


def test_cli_publishes_lists_rolls_back_and_unpublishes(tmp_path: Path, url: str) -> None:
    from typer.testing import CliRunner

    from skillshelf.authoring.cli.app import app

    runner = CliRunner(env={'COLUMNS': '200', 'NO_COLOR': '1'})
    library = tmp_path / 'lib'
    write_skill(library, 'deploy', 'Deploy.', files={'steps.md': 'Steps'})
    write_skill(library, 'notes', 'Notes.')
    (library / 'broken').mkdir()
    (library / 'broken' / 'SKILL.md').write_text('no frontmatter', encoding='utf-8')

    published = runner.invoke(app, ['publish', str(library), '--registry', url])
    assert published.exit_code == 0, published.output
    assert 'published deploy: revision 1, 1 file, 5 bytes' in published.output
    assert '2 skills published (1 file, 5 bytes) to registry sqlite:///' in published.output
    assert 'broken' in published.output
    write_skill(library, 'deploy', 'Deploy v2.', files={'steps.md': 'Steps', 'logo.png': png(2, 2)})
    with open(library / 'notes' / 'video.bin', 'wb') as sparse:
        sparse.truncate(MAX_FILE_BYTES + 1)
    again = runner.invoke(app, ['publish', str(library), '--registry', url])
    assert again.exit_code == 1  # a skill was not published: the count says so, and so does the exit code
    assert 'published deploy: revision 2, 2 files' in again.output
    assert 'not published: ' in again.output
    assert "'video.bin' is 67,108,865 bytes" in again.output
    assert '1 skill published (2 files, ' in again.output
    assert '; 1 not published (see above).' in again.output

    table = runner.invoke(app, ['list', '--registry', url])
    assert table.exit_code == 0, table.output
    files_revision_revisions = r'deploy .*│ +2 │ +2 │ +2$'
    assert re.search(files_revision_revisions, table.output, re.MULTILINE), table.output
    assert '2 skills at registry version 3.' in table.output  # one version per publish: deploy, notes, deploy
    rolled = runner.invoke(app, ['rollback', 'deploy', '--registry', url])
    assert rolled.exit_code == 0, rolled.output
    assert 'deploy: revision 3 is live, a copy of revision 1 (1 file, 5 bytes), at registry version 4.' in rolled.output
    wrong = runner.invoke(app, ['rollback', 'deploy', '--registry', url, '--to', '9'])
    assert wrong.exit_code == 1
    assert "'deploy' has no revision 9 (revisions: 1 (publish), 2 (publish), 3 (rollback))" in wrong.output

    listed = runner.invoke(app, ['list', '--registry', url, '--json'])
    assert listed.exit_code == 0, listed.output
    data = json.loads(listed.stdout)
    skills = data['skills']
    assert [(skill['name'], skill['resources'], skill['revision']) for skill in skills] == [
        ('deploy', ['steps.md'], 3),
        ('notes', [], 1),
    ]
    assert [(item['action'], item['restored'], item['files']) for item in skills[0]['revisions']] == [
        ('publish', None, 1),
        ('publish', None, 2),
        ('rollback', 1, 1),
    ]
    assert skills[0]['source'].startswith('registry sqlite:///')
    assert data['registry_version'] == 4

    assert runner.invoke(app, ['unpublish', 'notes', '--registry', url]).exit_code == 0
    missing = runner.invoke(app, ['unpublish', 'notes', '--registry', url])
    assert missing.exit_code == 1
    assert "no published skill 'notes'" in missing.output
    assert [entry.name for entry in SkillRegistry(url).catalog()] == ['deploy']
    assert runner.invoke(app, ['rollback', 'notes', '--registry', url]).exit_code == 0  # an unpublish is undone
    assert runner.invoke(app, ['unpublish', 'notes', '--purge', '--registry', url]).exit_code == 0
    gone = runner.invoke(app, ['rollback', 'notes', '--registry', url])
    assert gone.exit_code == 1
    assert "the registry has no revisions of 'notes' (its history was purged)" in gone.output
