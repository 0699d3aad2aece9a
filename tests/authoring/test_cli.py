"""The `skillshelf` command line, run through Typer's test runner: output, JSON and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

import skillshelf.content.folder
import skillshelf.ranking.semantic as semantic
from skillshelf import Skill, Skills
from skillshelf.authoring.cli import main
from skillshelf.authoring.cli.app import app
from skillshelf.ranking.cache import CACHE_MIN_SKILLS
from skillshelf.sources.directory import discover

from repo_paths import SAMPLE_SKILLS
from skill_files import write_skill
from skill_fixtures import WordEncoder, weather

runner = CliRunner(env={'COLUMNS': '200', 'NO_COLOR': '1'})
SAMPLE_NAMES = sorted(path.name for path in SAMPLE_SKILLS.iterdir() if (path / 'SKILL.md').is_file())


def run(*args: str | Path) -> Result:
    return runner.invoke(app, [str(arg) for arg in args])


def run_json(*args: str | Path, code: int = 0) -> Any:
    result = run(*args, '--json')
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


GOOD = 'description: Formats Python code with black. Use when the user asks to format or tidy Python files.'


# --- list ---------------------------------------------------------------------------------------


def test_list_shows_every_sample_skill_with_its_files() -> None:
    result = run('list', SAMPLE_SKILLS)
    assert result.exit_code == 0, result.output
    for name in SAMPLE_NAMES:
        assert name in result.stdout
    assert f'{len(SAMPLE_NAMES)} skills.' in result.stdout

    data = run_json('list', SAMPLE_SKILLS)
    assert [skill['name'] for skill in data['skills']] == SAMPLE_NAMES
    by_name = {skill['name']: skill for skill in data['skills']}
    assert by_name['csv-analysis']['resources'] == ['scripts/profile.py']
    assert by_name['csv-analysis']['tools'] == []
    assert by_name['csv-analysis']['source'] == str(SAMPLE_SKILLS / 'csv-analysis')
    assert data['skipped'] == []


def test_list_reports_skipped_folders_with_the_reason(tmp_path: Path) -> None:
    write_skill(tmp_path, 'good', frontmatter=f'name: good\n{GOOD}')
    write_skill(tmp_path, 'Broken', frontmatter='name: Broken\ndescription: x')  # nor could the folder name it
    result = run('list', tmp_path)
    assert result.exit_code == 0, result.output
    assert '1 skill, 1 skipped.' in result.stdout
    assert 'upper-case' in result.stdout

    data = run_json('list', tmp_path)
    assert [skill['name'] for skill in data['skills']] == ['good']
    assert data['skipped'] == [
        {'path': str(tmp_path / 'Broken' / 'SKILL.md'), 'problem': data['skipped'][0]['problem']}
    ]
    assert 'upper-case' in data['skipped'][0]['problem']


def test_list_includes_python_skills_by_import_path() -> None:
    data = run_json('list', SAMPLE_SKILLS, '--skill', 'skill_fixtures:weather')
    assert data['skills'][0] == {
        'name': 'weather',
        'description': 'Current weather, forecasts and alerts for a city.',
        'source': 'python: skill_fixtures:weather',
        'tools': weather.tool_names,
        'resources': [],
    }
    assert 'get_forecast' in weather.tool_names
    assert len(data['skills']) == len(SAMPLE_NAMES) + 1


def test_bad_import_path_exits_1_with_the_reason() -> None:
    result = run('list', SAMPLE_SKILLS, '--skill', 'skill_fixtures:nothing_here')
    assert result.exit_code == 1
    assert 'has no attribute' in result.stderr


def test_list_defaults_to_the_skills_folder_of_the_working_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SAMPLE_SKILLS.parent)
    data = run_json('list')
    assert [skill['name'] for skill in data['skills']] == SAMPLE_NAMES


# --- validate -----------------------------------------------------------------------------------


def test_validate_passes_the_sample_skills() -> None:
    result = run('validate', SAMPLE_SKILLS)
    assert result.exit_code == 0, result.output
    assert f'{len(SAMPLE_NAMES)} skills checked: {len(SAMPLE_NAMES)} valid, 0 with errors' in result.stdout
    data = run_json('validate', SAMPLE_SKILLS)
    assert data['valid'] is True
    assert [skill['findings'] for skill in data['skills']] == [[] for _ in SAMPLE_NAMES]


def test_validate_reports_every_broken_rule_and_exits_1(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        'wrong-folder',
        frontmatter='name: Bad--Name\ndescription: x\ncompatibility: ' + 'y' * 501 + '\ntags: a b',
        body='See [the guide](references/guide.md) and `scripts/run.py`.',
    )
    result = run('validate', tmp_path)
    assert result.exit_code == 1
    assert '✗ Bad--Name' in result.stdout
    assert '1 with errors' in result.stdout

    data = run_json('validate', tmp_path, code=1)
    findings = data['skills'][0]['findings']
    rules = {(finding['rule'], finding['severity']) for finding in findings}
    assert rules == {
        ('unknown-field', 'error'),
        ('name', 'error'),
        ('name-folder', 'error'),
        ('compatibility', 'error'),
        ('description-short', 'warning'),
        ('description-when', 'warning'),
        ('missing-resource', 'error'),
        ('missing-resource', 'warning'),
    }
    assert {finding['rule'] for finding in findings if finding['spec']} == {
        'unknown-field',
        'name',
        'name-folder',
        'compatibility',
    }
    assert any('references/guide.md' in finding['message'] for finding in findings)


@pytest.mark.parametrize(
    ('frontmatter', 'rule', 'fragment'),
    [
        ('name: demo\ndescription: Use when: the user asks for a demo of the thing', 'frontmatter', 'quote'),
        ('name: demo\ndescription: Shows demos. Use when asked.\nallowed-tools: [Read]', 'frontmatter', 'flow-style'),
        ('name: demo\nname: demo\ndescription: Shows demos. Use when asked.', 'frontmatter', 'more than once'),
        ('- a list', 'frontmatter', 'mapping'),
        ('name: demo', 'description', 'no `description`'),
        ('name: demo\ndescription: ' + 'word ' * 210 + 'when', 'description-length', 'the limit is 1024'),
        ('name: demo\ndescription: 42', 'field-type', 'quote it'),
        ('name: demo\ndescription: Shows demos when asked.\nmetadata: plain', 'loads', '`metadata` must be a mapping'),
    ],
)
def test_validate_names_the_rule_that_fails(tmp_path: Path, frontmatter: str, rule: str, fragment: str) -> None:
    write_skill(tmp_path, 'demo', frontmatter=frontmatter)
    data = run_json('validate', tmp_path, code=1)
    errors = [finding for finding in data['skills'][0]['findings'] if finding['severity'] == 'error']
    assert [finding['rule'] for finding in errors] == [rule]
    assert fragment in errors[0]['message']


def test_warnings_fail_validate_only_with_strict(tmp_path: Path) -> None:
    write_skill(tmp_path, 'demo', body='', description='I can do demos.')
    data = run_json('validate', tmp_path)
    assert data['valid'] is True
    assert {finding['rule'] for finding in data['skills'][0]['findings']} == {
        'description-short',
        'description-when',
        'description-person',
        'body-empty',
    }
    assert run('validate', tmp_path).exit_code == 0
    assert run('validate', tmp_path, '--strict').exit_code == 1


def test_validate_flags_oversized_bodies_and_shadowed_names(tmp_path: Path) -> None:
    first, second = tmp_path / 'first', tmp_path / 'second'
    write_skill(first, 'demo', frontmatter=f'name: demo\n{GOOD}', body='line\n' * 600)
    write_skill(second, 'demo', frontmatter=f'name: demo\n{GOOD}')
    data = run_json('validate', first, second)
    assert [finding['rule'] for finding in data['skills'][0]['findings']] == ['body-size']
    assert [finding['rule'] for finding in data['skills'][1]['findings']] == ['shadowed']


def test_validate_fails_on_a_missing_or_empty_directory(tmp_path: Path) -> None:
    result = run('validate', tmp_path / 'nowhere')
    assert result.exit_code == 1
    assert 'does not exist' in result.stdout
    data = run_json('validate', tmp_path, code=1)
    assert data['problems'] == [f'{tmp_path}: no skill folder (a folder holding a SKILL.md) was found']


def test_validate_points_at_a_lower_case_skill_md(tmp_path: Path) -> None:
    write_skill(tmp_path, 'good', frontmatter=f'name: good\n{GOOD}')
    (write_skill(tmp_path, 'demo', frontmatter=f'name: demo\n{GOOD}') / 'SKILL.md').rename(
        tmp_path / 'demo' / 'skill.md'
    )
    data = run_json('validate', tmp_path, code=1)
    assert data['problems'] == [f'{tmp_path / "demo" / "skill.md"}: skillshelf reads only SKILL.md; rename the file']
    assert [skill['name'] for skill in data['skills']] == ['good']


def test_validate_checks_the_folders_the_library_reads(tmp_path: Path) -> None:
    library = tmp_path / 'library'
    write_skill(library, 'good', frontmatter=f'name: good\n{GOOD}')
    write_skill(library, 'broken', text='no frontmatter, so the library skips it and says why\n')
    write_skill(tmp_path, 'outside', frontmatter=f'name: outside\n{GOOD}')
    (library / 'away').symlink_to(tmp_path / 'outside')  # outside the library: never read
    (library / 'alias').symlink_to(library / 'good')  # the same skill under another name: not read
    data = run_json('validate', library, code=1)
    read = discover(library)
    assert [skill['folder'] for skill in data['skills']] == [str(library / 'broken'), str(library / 'good')]
    assert [skill.name for skill in read.skills] == ['good']
    assert [str(skipped.path) for skipped in read.skipped] == [
        str(library / 'alias'),
        str(library / 'away'),
        str(library / 'broken' / 'SKILL.md'),
    ]


def test_validate_accepts_a_skill_folder_itself() -> None:
    data = run_json('validate', SAMPLE_SKILLS / 'sql-review')
    assert [skill['name'] for skill in data['skills']] == ['sql-review']


# --- show ---------------------------------------------------------------------------------------


def test_show_prints_what_load_skill_returns() -> None:
    body = Skill.from_folder(SAMPLE_SKILLS / 'sql-review').load_instructions()
    data = run_json('show', 'sql-review', SAMPLE_SKILLS)
    assert data['load_skill'].startswith(f"Loaded skill 'sql-review'.\n\n{body.strip()}")
    assert data['load_skill'].endswith('Files (read with `read_skill_resource`): references/checklist.md.')
    assert data['size']['characters'] == len(data['load_skill'])
    checklist = SAMPLE_SKILLS / 'sql-review' / 'references' / 'checklist.md'
    assert data['resources'] == [{'path': 'references/checklist.md', 'bytes': checklist.stat().st_size}]
    assert data['tools'] == []

    result = run('show', 'sql-review', SAMPLE_SKILLS)
    assert result.exit_code == 0
    assert "load_skill('sql-review') returns" in result.stdout
    assert body.splitlines()[0] in result.stdout
    assert 'references/checklist.md' in result.stdout


def test_show_lists_the_tools_a_python_skill_unlocks() -> None:
    data = run_json('show', 'weather', SAMPLE_SKILLS, '--skill', 'skill_fixtures:weather')
    assert [tool['name'] for tool in data['tools']] == weather.tool_names
    forecast = next(tool for tool in data['tools'] if tool['name'] == 'get_forecast')
    assert forecast['parameters']['required'] == ['city']
    assert f'Tools available from your next response: {", ".join(weather.tool_names)}.' in data['load_skill']


def test_show_reads_a_resource() -> None:
    expected = (SAMPLE_SKILLS / 'csv-analysis' / 'scripts' / 'profile.py').read_text(encoding='utf-8')
    data = run_json('show', 'csv-analysis', SAMPLE_SKILLS, '--resource', 'scripts/profile.py')
    assert data['resource'] == {'path': 'scripts/profile.py', 'content': expected}
    result = run('show', 'csv-analysis', SAMPLE_SKILLS, '-r', '../../pyproject.toml')
    assert result.exit_code == 1
    assert 'outside' in result.stderr or 'inside the skill folder' in result.stderr


def test_show_unknown_skill_suggests_close_names() -> None:
    result = run('show', 'sql-reveiw', SAMPLE_SKILLS)
    assert result.exit_code == 1
    assert "There is no skill named 'sql-reveiw'. Did you mean 'sql-review'?" in result.stderr


def test_show_explains_why_a_skill_folder_was_skipped(tmp_path: Path) -> None:
    write_skill(tmp_path, 'pdf-tools', frontmatter='name: pdf-tools', body='')  # no instructions to describe it either
    result = run('show', 'pdf-tools', tmp_path)
    assert result.exit_code == 1
    assert 'was skipped: the frontmatter has no `description` field' in ' '.join(result.stderr.split())


# --- catalog ------------------------------------------------------------------------------------


def test_catalog_shows_the_first_request_and_the_cost_of_loading_everything() -> None:
    data = run_json('catalog', SAMPLE_SKILLS, '--skill', 'skill_fixtures:weather')
    # five skills listed whole: no search; weather brings tools: unload; sample skills bundle files: reads
    assert sorted(tool['name'] for tool in data['tools']) == ['load_skill', 'read_skill_resource', 'unload_skill']
    for name in [*SAMPLE_NAMES, 'weather']:
        assert f'- {name}: ' in data['instructions']
    first = data['first_request']
    assert first['instructions']['characters'] == len(data['instructions'])
    tools_chars = sum(len(json.dumps(tool, ensure_ascii=False)) for tool in data['tools'])
    assert first['tools']['characters'] == tools_chars
    assert first['characters'] == len(data['instructions']) + tools_chars
    assert first['tokens'] == -(-first['characters'] // 4)

    everything = data['every_skill_in_context']
    assert everything['skills'] == len(SAMPLE_NAMES) + 1
    bodies = sum(len(Skill.from_folder(SAMPLE_SKILLS / name).load_instructions()) for name in SAMPLE_NAMES)
    assert everything['instructions']['characters'] > bodies
    assert everything['tools']['characters'] > 0  # get_forecast's schema, hidden on the first request
    assert everything['characters'] == everything['instructions']['characters'] + everything['tools']['characters']

    result = run('catalog', SAMPLE_SKILLS)
    assert result.exit_code == 0
    assert 'Instructions on the first request' in result.stdout
    assert 'Every skill in context (5 skills, 0 tools)' in result.stdout
    assert 'Kept off the first request' in result.stdout


def test_catalog_budget_shortens_the_catalog_as_the_capability_does() -> None:
    data = run_json('catalog', SAMPLE_SKILLS, '--budget', '600')
    assert all(f'- {name}: ' in data['instructions'] for name in SAMPLE_NAMES)  # each description cut to its share
    assert len(data['instructions']) <= 600
    data = run_json('catalog', SAMPLE_SKILLS, '--budget', '300')
    assert 'Skills: ' + ', '.join(SAMPLE_NAMES) + '.' in data['instructions']
    assert len(data['instructions']) <= 300
    data = run_json('catalog', SAMPLE_SKILLS, '--budget', '10')
    assert 'too large to list here' in data['instructions']


# --- search -------------------------------------------------------------------------------------


def test_search_returns_ranked_skills_with_scores() -> None:
    data = run_json('search', 'review this SQL migration for a slow query', SAMPLE_SKILLS, '--limit', '3')
    results = data['results']
    assert results[0]['name'] == 'sql-review'
    assert all(0 < result['score'] <= 1 for result in results)
    assert 1 <= len(results) <= 3
    assert [result['score'] for result in results] == sorted((result['score'] for result in results), reverse=True)
    assert data['message'] is None

    top = run_json('search', 'write a commit message', SAMPLE_SKILLS)['results'][0]
    result = run('search', 'write a commit message', SAMPLE_SKILLS)
    assert result.exit_code == 0
    assert top['name'] == 'commit-messages'
    filled = round(top['score'] * 10)
    assert f'{top["score"]:.3f} ' + '█' * filled + '·' * (10 - filled) in result.stdout


def test_search_and_catalog_mention_skipped_folders_on_stderr(tmp_path: Path) -> None:
    write_skill(tmp_path, 'good', frontmatter=f'name: good\n{GOOD}')
    write_skill(tmp_path, 'broken', frontmatter='name: broken\ndescription:\n  what: a mapping, not text')
    for args in (('search', 'format python', tmp_path), ('catalog', tmp_path)):
        result = run(*args)
        assert result.exit_code == 0
        assert '1 skill folder was skipped' in result.stderr
        assert 'folder was skipped' not in run(*args, '--json').stderr  # the warning line stays, not the summary


def test_search_without_a_match_says_so() -> None:
    data = run_json('search', 'zzzqqq', SAMPLE_SKILLS)
    assert data['results'] == []
    assert data['message'].startswith("No skill matches 'zzzqqq'.")
    result = run('search', 'zzzqqq', SAMPLE_SKILLS)
    assert 'No skill matches' in result.stdout


def test_search_limit_is_bounded_like_search_skills() -> None:
    assert run('search', 'sql', SAMPLE_SKILLS, '--limit', '21').exit_code == 2


# --- index --------------------------------------------------------------------------------------


def test_index_saves_the_index_that_an_agent_then_loads_without_reading_a_body(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(CACHE_MIN_SKILLS):
        topic = 'kubernetes clusters' if n == 7 else f'topic {n}'
        write_skill(tmp_path / 'lib', f'skill-{n:03d}', description=f'Handle {topic}.')

    result = run('index', tmp_path / 'lib')
    assert result.exit_code == 0, result.output
    assert f'Indexed {CACHE_MIN_SKILLS} skills in ' in result.stdout
    assert f'Cached in {cache_dir}' in ' '.join(result.stdout.split())
    data = run_json('index', tmp_path / 'lib')
    assert data['skills'] == CACHE_MIN_SKILLS
    assert data['search'] == 'lexical'
    assert data['cache']['saved'] is True
    assert Path(data['cache']['path']).parent == cache_dir
    assert Path(data['cache']['path']).is_file()

    def no_body_reads(skill_file: Path, max_chars: int | None = None) -> str:
        raise AssertionError(f'{skill_file} was read: the cached index was not used')

    monkeypatch.setattr(skillshelf.content.folder, 'read_body', no_body_reads)
    capability = Skills(tmp_path / 'lib')
    assert [hit.name for hit in capability.library.search('kubernetes', 1)] == ['skill-007']


def test_index_hybrid_saves_the_embeddings_too(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = WordEncoder()
    monkeypatch.setattr(semantic, 'find_spec', lambda name, package=None: object())
    monkeypatch.setattr(semantic, 'load_encoder', lambda: encoder)
    monkeypatch.setattr(semantic, '_shared', [])
    for n in range(CACHE_MIN_SKILLS):
        write_skill(tmp_path / 'lib', f'skill-{n:03d}', description=f'Handle topic {n}.')

    result = run('index', tmp_path / 'lib', '--hybrid')
    assert result.exit_code == 0, result.output
    assert f'Indexed {CACHE_MIN_SKILLS} skills in ' in result.stdout
    assert 'with the embeddings beside it' in ' '.join(result.stdout.split())
    assert len(list(cache_dir.glob('vectors-*.npz'))) == 1
    assert len(encoder.texts) == 1 + CACHE_MIN_SKILLS  # the model probe, then every skill once


def test_index_says_why_a_library_is_not_cached(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = run_json('index', SAMPLE_SKILLS)
    assert data['skills'] == len(SAMPLE_NAMES)
    assert data['cache'] == {
        'saved': False,
        'path': None,
        'reason': f'libraries of fewer than {CACHE_MIN_SKILLS} folder skills are not cached; they index quickly '
        'at the first search',
    }
    assert not cache_dir.exists()

    monkeypatch.setenv('SKILLSHELF_CACHE_DIR', 'off')
    result = run('index', SAMPLE_SKILLS)
    assert result.exit_code == 0, result.output
    assert 'Not cached: caching is off (SKILLSHELF_CACHE_DIR).' in result.stdout


def test_index_reports_an_encoder_failure_without_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> semantic.Encoder:
        raise RuntimeError('the model file is damaged')

    monkeypatch.setattr(semantic, 'find_spec', lambda name, package=None: object())
    monkeypatch.setattr(semantic, 'load_encoder', broken)
    monkeypatch.setattr(semantic, '_shared', [])
    result = run('index', SAMPLE_SKILLS, '--hybrid')
    assert result.exit_code == 1
    assert 'error: the index was not built: the model file is damaged' in result.stderr
    assert 'Traceback' not in result.output


# --- eval ---------------------------------------------------------------------------------------


def write_queries(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text(''.join(json.dumps(record) + '\n' for record in records), encoding='utf-8')
    return path


def test_eval_scores_labelled_queries(tmp_path: Path) -> None:
    queries = write_queries(
        tmp_path / 'queries.jsonl',
        [
            {'query': 'review my SQL migration', 'relevant': ['sql-review']},
            {'query': 'write release notes for the new version', 'relevant': ['release-notes']},
            # Worded for commit messages, labelled for release notes: a miss that must be reported.
            {'query': 'git commit message', 'relevant': ['release-notes']},
            {'query': 'zzzqqq', 'relevant': []},
            {'query': 'sql query', 'not_relevant': ['sql-review']},
        ],
    )
    data = run_json('eval', queries, SAMPLE_SKILLS)
    assert (data['queries'], data['positives'], data['negatives']) == (5, 3, 2)
    assert data['precision_at_1'] == pytest.approx(2 / 3)
    assert data['false_trigger_rate'] == pytest.approx(1 / 2)
    miss = data['worst_misses'][0]
    assert miss['query'] == 'git commit message'
    assert miss['got'][0] == 'commit-messages'
    assert miss['rank'] != 1
    assert data['mrr'] == pytest.approx((1 + 1 + (1 / miss['rank'] if miss['rank'] else 0)) / 3)
    assert data['unknown_labels'] == []
    by_skill = {item['name']: item for item in data['skills']}
    assert data['skills'][0]['name'] == 'release-notes'  # the worst: found first for one of its two queries
    assert (by_skill['release-notes']['queries'], by_skill['release-notes']['precision_at_1']) == (2, 0.5)
    assert by_skill['commit-messages']['wrongly_first'] == 1  # took the release-notes query
    assert (by_skill['sql-review']['precision_at_1'], by_skill['sql-review']['wrongly_first']) == (1.0, 1)

    result = run('eval', queries, SAMPLE_SKILLS)
    assert result.exit_code == 0
    assert 'Precision@1' in result.stdout
    assert 'Worst misses' in result.stdout
    assert 'git commit message' in result.stdout
    assert 'By skill' not in result.stdout
    assert 'By skill, worst first' in run('eval', queries, SAMPLE_SKILLS, '--by-skill').stdout


def test_eval_reads_the_agentskills_trigger_format(tmp_path: Path) -> None:
    evals = tmp_path / 'evals.json'
    evals.write_text(
        json.dumps(
            [
                {'query': 'check this SQL query for injection', 'should_trigger': True},
                {'query': 'draft a commit message', 'should_trigger': False},
            ]
        ),
        encoding='utf-8',
    )
    data = run_json('eval', evals, SAMPLE_SKILLS, '--target', 'sql-review')
    assert (data['positives'], data['negatives']) == (1, 1)
    assert (data['precision_at_1'], data['false_trigger_rate']) == (1.0, 0.0)

    result = run('eval', evals, SAMPLE_SKILLS)
    assert result.exit_code == 1
    assert '--target' in result.stderr


def test_eval_infers_the_skill_from_its_evals_folder(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, 'sql-review', description='Review SQL queries. Use when asked.')
    (folder / 'evals').mkdir()
    evals = folder / 'evals' / 'trigger-eval.json'
    evals.write_text(json.dumps([{'query': 'review SQL', 'should_trigger': True}]), encoding='utf-8')
    data = run_json('eval', evals, tmp_path)
    assert (data['positives'], data['precision_at_1']) == (1, 1.0)


def test_eval_reports_labels_that_name_no_skill_and_accepts_repo_prefixed_ids(tmp_path: Path) -> None:
    queries = write_queries(
        tmp_path / 'q.jsonl',
        [
            {'query': 'review SQL', 'relevant': ['someone/repo:sql-review']},
            {'query': 'review SQL', 'relevant': ['no-such-skill']},
        ],
    )
    data = run_json('eval', queries, SAMPLE_SKILLS)
    assert data['precision_at_1'] == 0.5
    assert data['unknown_labels'] == ['no-such-skill']


@pytest.mark.parametrize(
    ('content', 'fragment'),
    [('{"query": "x"\n', 'line 1: not valid JSON'), ('{"relevant": []}\n', 'string "query"'), ('', 'no queries')],
)
def test_eval_rejects_a_malformed_file(tmp_path: Path, content: str, fragment: str) -> None:
    queries = tmp_path / 'q.jsonl'
    queries.write_text(content, encoding='utf-8')
    result = run('eval', queries, SAMPLE_SKILLS)
    assert result.exit_code == 1
    assert fragment in result.stderr


# --- entry points -------------------------------------------------------------------------------


def test_help_lists_every_command() -> None:
    result = run('--help')
    assert result.exit_code == 0
    for command in ('list', 'validate', 'show', 'catalog', 'search', 'eval'):
        assert command in result.stdout


def test_python_dash_m_runs_the_command_line() -> None:
    completed = subprocess.run(
        [sys.executable, '-m', 'skillshelf', 'list', str(SAMPLE_SKILLS), '--json'],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert [skill['name'] for skill in json.loads(completed.stdout)['skills']] == SAMPLE_NAMES


def test_missing_cli_extra_explains_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, 'typer', None)
    monkeypatch.delitem(sys.modules, 'skillshelf.authoring.cli.app')
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 1
    assert 'pip install "skillshelf[cli]"' in capsys.readouterr().err


def test_eval_fail_under_gates_on_precision_at_1(tmp_path: Path) -> None:
    queries = write_queries(
        tmp_path / 'queries.jsonl',
        [
            {'query': 'review my SQL migration', 'relevant': ['sql-review']},
            {'query': 'git commit message', 'relevant': ['release-notes']},  # a miss: P@1 is 0.5
        ],
    )
    passing = run('eval', queries, SAMPLE_SKILLS, '--fail-under', '0.5')
    assert passing.exit_code == 0, passing.output

    failing = run('eval', queries, SAMPLE_SKILLS, '--fail-under', '0.6', '--json')
    assert failing.exit_code == 1
    assert json.loads(failing.stdout)['precision_at_1'] == 0.5  # the report is still printed
    assert 'Precision@1 is 0.500, below --fail-under 0.6' in failing.stderr


def test_hybrid_flag_without_the_extra_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(semantic, 'find_spec', lambda name, package=None: None)
    queries = write_queries(tmp_path / 'queries.jsonl', [{'query': 'review my SQL', 'relevant': ['sql-review']}])
    for command in (['search', 'review my SQL'], ['eval', queries]):
        result = run(*command, SAMPLE_SKILLS, '--hybrid')
        assert result.exit_code == 1, command
        assert "pip install 'skillshelf[semantic]'" in ' '.join(result.stderr.split()), command


def test_hybrid_flag_ranks_with_the_bundled_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(semantic, 'find_spec', lambda name, package=None: object())
    monkeypatch.setattr(semantic, 'load_encoder', WordEncoder)
    monkeypatch.setattr(semantic, '_shared', [])

    data = run_json('search', 'review my SQL migration', SAMPLE_SKILLS, '--hybrid')

    assert data['results'][0]['name'] == 'sql-review'
    assert len(semantic._shared) == 1  # pyright: ignore[reportPrivateUsage]  # the model was loaded: hybrid ranked
