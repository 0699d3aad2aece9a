"""`skillshelf lock`, `lock --check`, `lock --update` and `diff`, through Typer's test runner: the lock file written,
exit codes for CI, and what an update changes (skills, files, unified diffs where the source keeps history)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from skillshelf import Skills, SkillWarning
from skillshelf.authoring.cli.app import app

from git_repos import commit, git, init_repository
from skill_files import skill_md, write_skill

runner = CliRunner(env={'COLUMNS': '200', 'NO_COLOR': '1'})


def run(*args: str | Path) -> Result:
    return runner.invoke(app, [str(arg) for arg in args])


def write_two(root: Path) -> Path:
    write_skill(root, 'deploy', 'Run scripts/deploy.sh.', files={'scripts/deploy.sh': 'echo deploying\n'})
    write_skill(root, 'notes', 'Take notes.')
    return root


def test_lock_writes_a_readable_lock_and_check_exits_1_naming_the_changed_file(tmp_path: Path) -> None:
    skills, lock = write_two(tmp_path / 'skills'), tmp_path / 'skills.lock'
    written = run('lock', skills, '-o', lock)
    assert written.exit_code == 0, written.output
    assert written.stdout == f'locked 2 skills in {lock}\n'
    held = json.loads(lock.read_text(encoding='utf-8'))
    assert held['skillshelf-lock'] == 1
    assert held['skills']['deploy']['source'] == 'skills'  # relative to the lock file's folder
    assert sorted(held['skills']['deploy']['files']) == ['SKILL.md', 'scripts/deploy.sh']
    assert 'revision' not in held['skills']['deploy']  # a folder has none
    assert run('lock', skills, '-o', lock, '--check').exit_code == 0

    (skills / 'deploy' / 'scripts' / 'deploy.sh').write_text('echo deploying.\n', encoding='utf-8')
    checked = run('lock', skills, '-o', lock, '--check')
    assert checked.exit_code == 1
    assert checked.stdout == 'changed deploy (skills): changed scripts/deploy.sh\n'
    assert f'{lock} differs from the skills in 1 skill (above)' in checked.stderr

    refused = run('lock', skills, '-o', lock)  # an existing lock is replaced only with --update
    assert refused.exit_code == 1
    assert 'exists and differs from the skills in 1 skill' in refused.stderr
    assert lock.read_text(encoding='utf-8') == json.dumps(held, indent=2, sort_keys=True) + '\n'

    shown = run('diff', skills, '--lock', lock)
    assert shown.exit_code == 0
    assert shown.stdout.splitlines() == [
        'changed deploy (skills): changed scripts/deploy.sh',
        '  (the earlier files are not at hand: a folder or a package keeps no history; only digests compared)',
    ]
    updated = run('lock', skills, '-o', lock, '--update')
    assert updated.exit_code == 0
    assert 'updated' in updated.stdout
    assert run('lock', skills, '-o', lock, '--check').exit_code == 0
    with_lock = Skills[None](directories=[skills], lock=lock)  # the updated lock loads both, without a warning
    assert sorted(with_lock.library.skills) == ['deploy', 'notes']


def test_check_without_a_lock_file_and_a_bad_source_exit_1(tmp_path: Path) -> None:
    skills = write_two(tmp_path / 'skills')
    missing = run('lock', skills, '-o', tmp_path / 'none.lock', '--check')
    assert missing.exit_code == 1
    assert 'there is no lock file' in missing.stderr
    bad = run('lock', '--source', '{"git": ', '-o', tmp_path / 'x.lock')
    assert bad.exit_code == 1
    assert 'is not valid JSON' in bad.stderr


@pytest.mark.usefixtures('cache_dir')
def test_diff_of_a_git_source_shows_the_commits_and_a_unified_diff(tmp_path: Path) -> None:
    repository = init_repository(tmp_path / 'repo')
    write_two(repository / 'skills')
    first = commit(repository, 'one')
    source, lock = json.dumps({'git': str(repository), 'ref': 'main'}), tmp_path / 'skills.lock'
    assert run('lock', '--source', source, '-o', lock).exit_code == 0
    entry = json.loads(lock.read_text(encoding='utf-8'))['skills']['deploy']
    assert (entry['source'], entry['revision']) == (f'git {repository}@main', first)

    (repository / 'skills' / 'deploy' / 'scripts' / 'deploy.sh').write_text('echo deploying?\n', encoding='utf-8')
    write_skill(repository / 'skills', 'newcomer', 'Brand new.')
    second = commit(repository, 'two')

    shown = run('diff', '--source', source, '--lock', lock)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0] == (
        f'changed deploy (git {repository}@main: {first[:12]} → {second[:12]}): changed scripts/deploy.sh'
    )
    assert lines[1:6] == [
        '--- deploy/scripts/deploy.sh (locked)',
        '+++ deploy/scripts/deploy.sh (now)',
        '@@ -1 +1 @@',
        '-echo deploying',
        '+echo deploying?',
    ]
    assert lines[6] == f'added newcomer (git {repository}@main: {second[:12]}) (1 file)'
    assert '+Brand new.' in lines
    assert run('lock', '--source', source, '-o', lock, '--check').exit_code == 1

    assert run('lock', '--source', source, '-o', lock, '--update').exit_code == 0
    (repository / 'README.md').write_text('Our skills.\n', encoding='utf-8')
    commit(repository, 'readme')
    assert run('lock', '--source', source, '-o', lock, '--check').exit_code == 0  # the skills are as locked
    moved = run('lock', '--source', source, '-o', lock, '--update')
    assert moved.stdout == f'{lock} has its revisions updated: 3 skills, as locked\n'
    entry = json.loads(lock.read_text(encoding='utf-8'))['skills']['deploy']
    assert entry['revision'] == git('rev-parse', 'HEAD', cwd=repository)


def test_diff_of_a_registry_shows_the_revisions_and_a_unified_diff(registry_url: str, tmp_path: Path) -> None:
    from skillshelf.registry import SkillRegistry

    registry = SkillRegistry(registry_url)
    registry.publish_many(sorted(write_two(tmp_path / 'skills').iterdir()))
    lock = tmp_path / 'skills.lock'
    assert run('lock', '--registry', registry_url, '-o', lock).exit_code == 0
    registry.publish_markdown(
        skill_md('deploy', 'Run scripts/deploy.sh twice.'), {'scripts/deploy.sh': 'echo deploying\n'}
    )

    shown = run('diff', '--registry', registry_url, '--lock', lock)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0].startswith('changed deploy (registry ')
    assert lines[0].endswith(': 1 → 2): changed SKILL.md')
    assert '-Run scripts/deploy.sh.' in lines
    assert '+Run scripts/deploy.sh twice.' in lines
    with pytest.warns(SkillWarning, match=r'deploy: refused: .*\(changed SKILL.md\)'):
        worker = Skills[None](sources=[SkillRegistry(registry_url)], lock=lock)
    assert list(worker.library.skills) == ['notes']
