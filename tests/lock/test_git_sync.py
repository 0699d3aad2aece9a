"""`GitSource(sync_every=...)`: the repository is fetched in the background when a run starts after the interval; a
new commit is taken at the next run start, unless it changes a skill the lock records; a failed fetch keeps the
skills as they are, with a warning. Driven by real `git` on a local repository, with no sleeps: each test waits for
the fetch itself (`wait_for_sync`)."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

from skillshelf import GitSource, LibraryOptions, SkillError, SkillLibrary
from skillshelf.library.source_spec import resolve_sources
from skillshelf.lock import LockEntry, Lockfile, file_digests, skill_digest

from git_repos import commit, git, init_repository
from skill_files import skill_md, write_skill
from warnings_said import said


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    path = tmp_path / 'repo'
    write_skill(path / 'skills', 'deploy', 'Run scripts/deploy.sh.', files={'scripts/deploy.sh': 'echo one\n'})
    write_skill(path / 'skills', 'notes', 'Take notes.')
    init_repository(path)
    commit(path, 'one')
    return path


def locked_library(source: GitSource, lock: Path) -> SkillLibrary:
    entries: dict[str, LockEntry] = {}
    for name, skill in SkillLibrary.build(options=LibraryOptions(sources=[source])).skills.items():
        files = file_digests(skill)
        assert files is not None
        entries[name] = LockEntry('git', skill_digest(files), files)
    Lockfile(entries).write(lock)
    library = SkillLibrary.build(options=LibraryOptions(sources=[source], lock=lock))
    source.wait_for_sync()  # the second read started a fetch: let it end before the tests commit
    return library


def sync(library: SkillLibrary, source: GitSource) -> tuple[bool, list[str]]:
    """Two run starts with a fetch between them: the first starts it, the second takes what it brought."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        library.refresh()
        source.wait_for_sync()
        changed = library.refresh()
    return changed, said(caught)


def test_a_commit_that_leaves_the_locked_skills_alone_is_taken(repository: Path, tmp_path: Path) -> None:
    source = GitSource(str(repository), ref='main', cache_dir=tmp_path / 'cache', sync_every=1e-9)
    library = locked_library(source, tmp_path / 'skills.lock')
    (repository / 'README.md').write_text('Our skills.\n', encoding='utf-8')
    second = commit(repository, 'readme')
    changed, warned = sync(library, source)
    assert (source.version(), changed, warned) == (second, False, [])  # the skills are the same
    assert sorted(library.skills) == ['deploy', 'notes']


def test_a_commit_that_changes_a_locked_skill_is_not_taken_and_the_skill_keeps_working(
    repository: Path, tmp_path: Path
) -> None:
    source = GitSource(str(repository), ref='main', cache_dir=tmp_path / 'cache', sync_every=1e-9)
    library = locked_library(source, tmp_path / 'skills.lock')
    first = git('rev-parse', 'HEAD', cwd=repository)
    (repository / 'skills' / 'deploy' / 'scripts' / 'deploy.sh').write_text('echo two\n', encoding='utf-8')
    second = commit(repository, 'two')

    changed, warned = sync(library, source)
    assert (source.version(), changed) == (first, False)
    assert warned == [
        f'{source!r}: commit {second[:12]} is not taken, as it changes deploy, which the lock file '
        f'{tmp_path / "skills.lock"} records; the skills stay at {first[:12]}. Review the change with '
        f'`skillshelf diff --lock {tmp_path / "skills.lock"}` and accept it with `skillshelf lock --update`'
    ]
    assert library.skills['deploy'].content.read_bytes('scripts/deploy.sh', 100) == b'echo one\n'
    assert sync(library, source)[1] == []  # said once per commit


def test_without_a_lock_a_new_commit_reaches_the_next_run(repository: Path, tmp_path: Path) -> None:
    source = GitSource(str(repository), ref='main', cache_dir=tmp_path / 'cache', sync_every=1e-9)
    library = SkillLibrary.build(options=LibraryOptions(sources=[source]))
    (repository / 'skills' / 'deploy' / 'SKILL.md').write_text(skill_md('deploy', 'Version two.'), encoding='utf-8')
    write_skill(repository / 'skills', 'extra', 'Extra.')
    commit(repository, 'two')
    changed, warned = sync(library, source)
    assert (changed, warned) == (True, [])
    assert library.skills['deploy'].load_instructions() == 'Version two.'
    assert sorted(library.skills) == ['deploy', 'extra', 'notes']


def test_a_failed_fetch_keeps_the_skills_and_says_so(repository: Path, tmp_path: Path) -> None:
    source = GitSource(str(repository), ref='main', cache_dir=tmp_path / 'cache', sync_every=1e-9)
    library = SkillLibrary.build(options=LibraryOptions(sources=[source]))
    first = git('rev-parse', 'HEAD', cwd=repository)
    shutil.rmtree(repository)  # the server is gone
    changed, warned = sync(library, source)
    assert (source.version(), changed) == (first, False)
    assert len(warned) == 1
    assert warned[0].startswith(f'{source!r}: the periodic fetch failed, the skills stay as they are: git -C ')
    assert ' fetch failed: ' in warned[0]
    assert sorted(library.skills) == ['deploy', 'notes']


def test_sync_every_is_checked_and_the_spec_takes_it() -> None:
    with pytest.raises(SkillError, match='`sync_every` must be a number of seconds above 0'):
        GitSource('https://example.com/skills.git', sync_every=0)
    [source] = resolve_sources([{'git': 'https://example.com/skills.git', 'sync_every': 600}])
    assert isinstance(source, GitSource)
    assert source.sync_every == 600
