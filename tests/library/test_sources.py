"""Skills from anywhere: `Skill.from_markdown`, a source of your own, packages (a folder, a zip on `sys.path`, entry
points) and git repositories, each loaded by a real `Agent` run; hostile entries in each are skipped or refused."""

from __future__ import annotations

import multiprocessing
import os
import zipfile
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import TextPart

from skillshelf import (
    DirectorySource,
    EntryPointSource,
    GitSource,
    LibraryOptions,
    PackageSource,
    ReadPolicy,
    ResourceError,
    Skill,
    SkillError,
    SkillFormatError,
    SkillLibrary,
    Skills,
    SkillWarning,
    SkippedSkill,
    SourceSkills,
)
from skillshelf.capability.meta_tools import MAX_PAGE_CHARACTERS
from skillshelf.content import MAX_RESOURCE_BYTES

from git_repos import commit, git, init_repository
from reliability.ledger import case
from scripted_model import Script, call, tool_returns
from skill_files import skill_md, write_skill
from warnings_said import said


def run_load(capability: Skills[Any], name: str, resource: str | None = None) -> list[object]:
    """One real run that loads `name` (and reads `resource`); the tool returns, in order."""
    steps = [[call('load_skill', name=name)]]
    if resource is not None:
        steps.append([call('read_skill_resource', name=name, path=resource)])
    script = Script([*steps, [TextPart('done')]])
    result = Agent(script.model(), capabilities=[capability]).run_sync('go')
    messages = result.all_messages()
    return tool_returns(messages, 'load_skill') + tool_returns(messages, 'read_skill_resource')


# --- Skill.from_markdown


def test_from_markdown_reads_text_and_files_like_a_folder() -> None:
    skill = Skill.from_markdown(
        skill_md('pdf-forms', '# Forms\nFill them.'), {'reference/fields.md': 'Field list', 'logo.bin': b'\x00\x01'}
    )
    assert (skill.name, skill.description, skill.load_instructions()) == (
        'pdf-forms',
        'Handles pdf-forms work.',
        '# Forms\nFill them.',
    )
    assert skill.list_resources() == ['logo.bin', 'reference/fields.md']
    assert skill.read_resource('./reference//fields.md') == 'Field list'
    with pytest.raises(SkillError, match='binary file'):
        skill.read_resource('logo.bin')


def test_from_markdown_gives_the_folder_readers_errors() -> None:
    with pytest.raises(SkillFormatError, match='does not start with a `---` frontmatter line'):
        Skill.from_markdown('name: x')
    with pytest.raises(SkillFormatError, match='has upper-case letters'):
        Skill.from_markdown(skill_md('PDF'))
    with pytest.raises(SkillFormatError, match='refused'):
        Skill.from_markdown('---\na: &a [*a, *a]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n' * 30 + '---\n')


@pytest.mark.parametrize('path', ['../x', '/etc/passwd', '~/.ssh/id_rsa', 'a/../../x', '.env', 'C:/x', 'ok/\x00'])
def test_from_markdown_refuses_files_that_would_escape(path: str) -> None:
    with pytest.raises(SkillFormatError, match='cannot be a skill file') as raised:
        Skill.from_markdown(skill_md('escape'), {path: 'secret'}, origin='catalog/escape')
    assert str(raised.value).startswith('catalog/escape: ')
    if path == '../x':
        case('Skill files', 'SKILL.md text with a file named `../x`', str(raised.value))


def test_from_markdown_serves_a_huge_file_as_a_folder_does() -> None:
    skill = Skill.from_markdown(skill_md('big'), {'big.txt': 'x' * (MAX_RESOURCE_BYTES + 1)})
    with pytest.raises(SkillError, match='over the 262,144-byte limit') as raised:
        skill.read_resource('big.txt')
    case('Resource reads', 'an in-memory skill file over the read limit', str(raised.value))
    with pytest.raises(SkillFormatError, match='the limit is'):
        Skill.from_markdown(skill_md('huge', 'y' * (3 * 1024 * 1024)))


# --- a source of one's own


class Catalog:
    """A source in a few lines: a dictionary of SKILL.md texts, versioned by hand."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts, self.revision = texts, 1

    def read_skills(self) -> SourceSkills:
        found = SourceSkills()
        for key in sorted(self.texts):
            try:
                found.skills.append(Skill.from_markdown(self.texts[key], origin=f'catalog/{key}'))
            except SkillFormatError as error:
                found.skipped.append(SkippedSkill(Path(f'catalog/{key}'), error.problem))
        return found

    def version(self) -> Hashable:
        return self.revision


def test_a_custom_source_feeds_an_agent_and_its_changes_reach_the_next_run(tmp_path: Path) -> None:
    catalog = Catalog({'a': skill_md('deploy', 'Run the deploy script.')})
    capability = Skills[None](sources=[catalog])
    assert run_load(capability, 'deploy')[0] is not None
    assert 'Run the deploy script.' in str(run_load(capability, 'deploy')[0])

    catalog.texts['b'] = skill_md('rollback', 'Undo the deploy.')
    catalog.texts['c'] = '---\nname: Bad Name\ndescription: x\n---\n'
    catalog.revision = 2
    with pytest.warns(SkillWarning, match=r'skipped catalog/c: .*upper-case'):
        returns = run_load(capability, 'rollback')
    assert 'Undo the deploy.' in str(returns[0])
    assert list(capability.library.skills) == ['deploy', 'rollback']


def test_sources_come_after_directories_and_the_first_name_wins(tmp_path: Path) -> None:
    (tmp_path / 'lib' / 'deploy').mkdir(parents=True)
    (tmp_path / 'lib' / 'deploy' / 'SKILL.md').write_text(skill_md('deploy', 'From the folder.'), encoding='utf-8')
    catalog = Catalog({'a': skill_md('deploy', 'From the catalog.'), 'b': skill_md('notes')})
    with pytest.warns(SkillWarning, match=r'skipped catalog/a: shadowed by .*lib/deploy \(the earlier'):
        library = SkillLibrary.build(options=LibraryOptions(directories=[tmp_path / 'lib'], sources=[catalog]))
    assert list(library.skills) == ['deploy', 'notes']
    assert library.skills['deploy'].load_instructions() == 'From the folder.'


def test_a_python_skill_and_a_source_skill_with_one_name_conflict() -> None:
    with pytest.raises(SkillError, match="the Python skill 'notes' and the skill from catalog/a share a name"):
        SkillLibrary.build([Skill('notes', 'Notes.')], LibraryOptions(sources=[Catalog({'a': skill_md('notes')})]))


def test_a_source_that_fails_names_itself_and_a_refresh_keeps_the_last_skills() -> None:
    class Flaky(Catalog):
        broken = False

        def read_skills(self) -> SourceSkills:
            if self.broken:
                raise ConnectionError('catalog server down')
            return super().read_skills()

    flaky = Flaky({'a': skill_md('notes')})
    library = SkillLibrary.build(options=LibraryOptions(sources=[flaky]))
    flaky.broken, flaky.revision = True, 2
    with pytest.warns(SkillWarning, match='could not be read: catalog server down'):
        assert library.refresh() is False
    assert list(library.skills) == ['notes']
    with pytest.raises(SkillError, match=r'the skill source .*Flaky.* could not be read: catalog server down'):
        SkillLibrary.build(options=LibraryOptions(sources=[flaky]))


@pytest.mark.parametrize(
    ('value', 'message'),
    [
        (42, 'takes skill sources, import paths or short forms'),
        ({'git': 'x', 'package': 'y'}, 'exactly one of package, entry_points, git, registry, mcp'),
        ({'package': 'acme', 'ref': 'main'}, "a 'package' source takes folder, not ref"),
        ('skill_fixtures:weather', 'does not name a skill source'),
    ],
)
def test_spec_sources_are_checked_with_the_option_name(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):  # pydantic-ai wraps the capability's error
        Agent.from_spec(
            {'model': 'test', 'capabilities': [{'Skills': {'sources': value}}]}, custom_capability_types=[Skills]
        )


# --- packages


def write_package(root: Path, name: str = 'acme_skills') -> None:
    """A package with a `skills` folder: a good skill with a file, and hostile entries."""
    skills = root / name / 'skills'
    files = {'reference/fields.md': 'Field list', 'huge.txt': 'x' * (MAX_RESOURCE_BYTES + 10)}
    write_skill(skills, 'pdf-forms', 'Fill PDF forms.', files=files)
    (root / name / '__init__.py').write_text('', encoding='utf-8')
    write_skill(skills, 'broken', text='---\nname: broken\ndescription: [unclosed\n---\n')
    write_skill(skills, 'misnamed', text=skill_md('other'))


def zip_package(root: Path, target: Path) -> None:
    with zipfile.ZipFile(target, 'w') as archive:
        for path in sorted(root.rglob('*')):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())


@pytest.mark.parametrize('installed', ['folder', 'zip'])
def test_package_skills_load_in_a_run_and_broken_ones_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installed: str
) -> None:
    package = f'acme_{installed}_skills'
    write_package(tmp_path / 'src', package)
    if installed == 'zip':
        zip_package(tmp_path / 'src', tmp_path / 'acme.zip')
        monkeypatch.syspath_prepend(str(tmp_path / 'acme.zip'))
    else:
        monkeypatch.syspath_prepend(str(tmp_path / 'src'))
    with pytest.warns(SkillWarning) as warned:
        capability = Skills[None](sources=[{'package': package}])
    messages = sorted(said(warned), key=lambda message: 'misnamed' in message)
    assert len(messages) == 2
    assert 'broken' in messages[0]
    assert 'not valid YAML' in messages[0]
    assert 'misnamed' in messages[1]
    assert "'other' does not match its folder 'misnamed'; loaded as 'other'" in messages[1]  # as Claude Code does
    if installed == 'zip':
        assert capability.library.skills['pdf-forms'].origin == f'{package}/skills/pdf-forms'
        case('Skill files', 'a zipped package with a broken SKILL.md', messages[0])
    loaded, read = run_load(capability, 'pdf-forms', 'reference/fields.md')
    assert 'Fill PDF forms.' in str(loaded)
    assert read == 'Field list'
    huge = run_load(capability, 'pdf-forms', 'huge.txt')[1]
    assert str(huge).endswith('only the first are shown]\n\n[lines 1-1 of 1]')  # one page, never the whole file
    assert len(str(huge)) < MAX_PAGE_CHARACTERS + 200
    escape = run_load(capability, 'pdf-forms', '../broken/SKILL.md')[1]
    assert 'not a path inside the skill folder' in str(escape)


def test_a_missing_package_is_a_clear_error() -> None:
    with pytest.raises(SkillError, match="the package 'no_such_skills_pkg' cannot be imported"):
        SkillLibrary.build(options=LibraryOptions(sources=[PackageSource('no_such_skills_pkg')]))


def test_entry_points_make_pip_install_enough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_package(tmp_path / 'src', 'acme_ep_skills')
    info = tmp_path / 'src' / 'acme_ep_skills-1.0.dist-info'
    info.mkdir()
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: acme-ep-skills\nVersion: 1.0\n', encoding='utf-8')
    (info / 'entry_points.txt').write_text(
        '[skillshelf.test-skills]\nacme = acme_ep_skills\nbroken = no_such_module_xyz:skills\n', encoding='utf-8'
    )
    zip_package(tmp_path / 'src', tmp_path / 'acme.zip')
    monkeypatch.syspath_prepend(str(tmp_path / 'acme.zip'))
    with pytest.warns(SkillWarning) as warned:
        library = SkillLibrary.build(options=LibraryOptions(sources=[EntryPointSource('skillshelf.test-skills')]))
    assert list(library.skills) == ['other', 'pdf-forms']  # `misnamed/` loads under its frontmatter name
    assert any('entry point broken = no_such_module_xyz:skills: cannot be loaded' in str(w.message) for w in warned)


# --- git


def make_repository(path: Path) -> Path:
    write_skill(init_repository(path), 'deploy', 'Version one.')
    commit(path, 'one')
    git('tag', 'v1', cwd=path)
    return path


def test_git_source_pins_a_ref_and_refreshes_on_request(tmp_path: Path) -> None:
    repository = make_repository(tmp_path / 'repo')
    first = git('rev-parse', 'HEAD', cwd=repository)
    (repository / 'deploy' / 'SKILL.md').write_text(skill_md('deploy', 'Version two.'), encoding='utf-8')
    (repository / 'escape').symlink_to('/etc', target_is_directory=True)
    git('add', '.', cwd=repository)
    git('commit', '-q', '-m', 'two', cwd=repository)

    cache = tmp_path / 'cache'
    for ref in ('v1', first):  # a tag, a commit
        library = SkillLibrary.build(
            options=LibraryOptions(sources=[GitSource(str(repository), ref=ref, cache_dir=cache / ref[:8])])
        )
        assert library.skills['deploy'].load_instructions() == 'Version one.'

    branch = GitSource(str(repository), ref='main', cache_dir=cache / 'main')
    with pytest.warns(
        SkillWarning, match='escape: the skill folder is a symlink to /etc, outside the library'
    ) as warned:
        capability = Skills[None](sources=[branch])
    case('Skill files', 'a git repository with a skill folder symlinked to /etc', said(warned)[0], root=cache)
    assert 'Version two.' in str(run_load(capability, 'deploy')[0])

    (repository / 'notes').mkdir()
    (repository / 'notes' / 'SKILL.md').write_text(skill_md('notes', 'Take notes.'), encoding='utf-8')
    git('add', 'notes', cwd=repository)
    git('commit', '-q', '-m', 'three', cwd=repository)
    assert 'notes' not in capability.library.skills  # pinned until refreshed
    assert branch.refresh() is True
    assert 'Take notes.' in str(run_load(capability, 'notes')[0])  # the skipped link was reported once, at first
    assert branch.refresh() is False


@pytest.mark.parametrize(
    ('url', 'ref', 'message'),
    [
        ('--upload-pack=touch /tmp/pwned', 'main', 'starts with "-"'),
        ('REPO', '--output=/tmp/x', 'starts with "-"'),
        ('REPO', 'no-such-branch', "the git ref 'no-such-branch' is not a branch, tag or commit"),
        ('ext::sh -c touch% /tmp/pwned', 'main', 'git clone --quiet --no-checkout failed'),
    ],
)
def test_git_source_refuses_hostile_urls_and_refs(tmp_path: Path, url: str, ref: str, message: str) -> None:
    repository = make_repository(tmp_path / 'repo')
    with pytest.raises(SkillError, match=message) as raised:
        SkillLibrary.build(
            options=LibraryOptions(
                sources=[GitSource(url.replace('REPO', str(repository)), ref=ref, cache_dir=tmp_path / 'c')]
            )
        )
    if url.startswith('ext::'):
        assert not Path('/tmp/pwned').exists()
        case('Skill files', 'a git source URL with the `ext::` transport', str(raised.value))


def test_git_sources_of_one_repository_at_two_refs_keep_their_own_files(tmp_path: Path) -> None:
    repository = make_repository(tmp_path / 'repo')
    (repository / 'deploy' / 'SKILL.md').write_text(skill_md('deploy', 'Version two.'), encoding='utf-8')
    git('commit', '-q', '-am', 'two', cwd=repository)
    cache = tmp_path / 'cache'  # one cache directory, as for every source of an application
    pinned = SkillLibrary.build(options=LibraryOptions(sources=[GitSource(str(repository), ref='v1', cache_dir=cache)]))
    following = SkillLibrary.build(
        options=LibraryOptions(sources=[GitSource(str(repository), ref='main', cache_dir=cache)])
    )

    # Checking out main did not change the files of the library pinned to v1 (they shared one tree before).
    assert pinned.skills['deploy'].load_instructions() == 'Version one.'
    assert following.skills['deploy'].load_instructions() == 'Version two.'


def test_a_second_git_source_reuses_a_finished_clean_checkout(tmp_path: Path) -> None:
    repository = make_repository(tmp_path / 'repo')
    first = GitSource(str(repository), ref='v1', cache_dir=tmp_path / 'cache')
    first.read_skills()
    checkout_file = first.checkout / 'deploy' / 'SKILL.md'
    written = checkout_file.stat().st_mtime_ns

    # Another worker of the same application: it finds the clone and leaves the files it may be reading alone.
    second = GitSource(str(repository), ref='v1', cache_dir=tmp_path / 'cache')
    assert [skill.name for skill in second.read_skills().skills] == ['deploy']
    assert checkout_file.stat().st_mtime_ns == written
    assert second.version() == first.version()

    # A stray file in the checkout is not part of the commit: the next worker checks out again and removes it.
    (first.checkout / 'stray.txt').write_text('left behind', encoding='utf-8')
    GitSource(str(repository), ref='v1', cache_dir=tmp_path / 'cache').read_skills()
    assert not (first.checkout / 'stray.txt').exists()


def _read_from_git(url: str, cache: str, start: Any) -> list[str]:
    start.wait()  # every worker clones and checks out at once
    return [skill.name for skill in GitSource(url, ref='v1', cache_dir=Path(cache)).read_skills().skills]


def test_workers_starting_together_share_one_clone(tmp_path: Path) -> None:
    repository = make_repository(tmp_path / 'repo')
    workers = 4
    context = multiprocessing.get_context('spawn')
    with context.Manager() as manager:
        start = manager.Barrier(workers)
        with context.Pool(workers) as pool:
            found = pool.starmap(_read_from_git, [(str(repository), str(tmp_path / 'cache'), start)] * workers)
    assert found == [['deploy']] * workers
    # One checkout (and the lock the workers took turns with), no half-made clone left behind.
    assert sorted(path.suffix for path in (tmp_path / 'cache' / 'git').iterdir()) == ['', '.lock']


def test_directory_source_still_takes_allow_hard_links_with_a_warning(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match=r'policy=ReadPolicy\(allow_hard_links=\.\.\.\)') as caught:
        source = DirectorySource(tmp_path, allow_hard_links=True)  # pyright: ignore[reportCallIssue]
    assert source.policy == ReadPolicy(allow_hard_links=True)
    [warned] = [warning for warning in caught if issubclass(warning.category, DeprecationWarning)]
    assert warned.filename == __file__
    assert str(warned.message).startswith('DirectorySource(allow_hard_links')


def test_skill_from_folder_still_takes_allow_hard_links_with_a_warning(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / 'lib', 'pdf-forms', files={'guide.md': 'Fill the form.'})
    os.link(folder / 'guide.md', tmp_path / 'other-name.md')  # a second name, outside the folder
    with pytest.warns(
        DeprecationWarning, match=r'Skill.from_folder\(allow_hard_links=\.\.\.\) is deprecated'
    ) as caught:
        skill = Skill.from_folder(folder, allow_hard_links=True)  # pyright: ignore[reportCallIssue]
    [warned] = [warning for warning in caught if issubclass(warning.category, DeprecationWarning)]
    assert warned.filename == __file__
    assert (
        skill.read_resource('guide.md')
        == Skill.from_folder(folder, policy=ReadPolicy(allow_hard_links=True)).read_resource('guide.md')
        == 'Fill the form.'
    )
    with pytest.raises(ResourceError, match='other hard links'):
        Skill.from_folder(folder).read_resource('guide.md')
