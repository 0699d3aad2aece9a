"""`include` / `exclude`, the usual skill locations (`standard_directories`), named directories that must exist, and
relative paths in an agent spec."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from pydantic_ai import Agent, Tool
from pydantic_ai.messages import TextPart

from skillshelf import LibraryOptions, Skill, SkillError, SkillLibrary, Skills
from skillshelf.library.locations import standard_directories

from scripted_model import SMALL, Script, call, tool_returns
from skill_files import write_library, write_skill
from warnings_said import said

T = TypeVar('T')


def library_dir(root: Path) -> Path:
    return write_library(
        root,
        {
            'pdf-forms': 'Fill PDF forms.',
            'pdf-merge': 'Merge PDF files into one.',
            'sql-review': 'Review SQL queries.',
            'deploy': 'Deploy the service.',
        },
    )


def caught(build: Callable[[], T]) -> tuple[T, list[str]]:
    """What `build()` returns, and the `SkillWarning`s it emitted."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter('always')
        result = build()
    return result, said(seen)


def test_excluded_skills_are_absent_from_catalog_search_and_load(tmp_path: Path) -> None:
    capability = Skills(library_dir(tmp_path), include=['pdf-*', 'deploy'], exclude='pdf-merge')
    script = Script(
        [
            [call('search_skills', query='merge pdf files')],
            [call('load_skill', name='pdf-merge')],
            [call('load_skill', name='pdf-forms')],
            [TextPart('done')],
        ]
    )
    result = Agent(script.model(), capabilities=[capability]).run_sync('merge these PDFs')

    assert result.output == 'done'
    assert list(capability.library.skills) == ['deploy', 'pdf-forms']
    catalog = script.requests[0].instructions or ''
    assert '- pdf-forms' in catalog
    assert '- deploy' in catalog
    assert '- pdf-merge' not in catalog
    assert '- sql-review' not in catalog
    [found] = tool_returns(result.all_messages(), 'search_skills')
    assert 'pdf-merge' not in str(found)
    refused, loaded = tool_returns(result.all_messages(), 'load_skill')
    assert str(refused).startswith("There is no skill named 'pdf-merge'.")
    assert str(loaded).startswith("Loaded skill 'pdf-forms'.")


def test_exclude_wins_over_include_and_a_missing_included_name_is_reported(tmp_path: Path) -> None:
    library_dir(tmp_path)
    nothing, quiet = caught(
        lambda: SkillLibrary.build(
            options=LibraryOptions(directories=[tmp_path], include='pdf-merge', exclude=['pdf-*'])
        )
    )
    assert nothing.skills == {}
    assert quiet == []

    sql, typo = caught(
        lambda: SkillLibrary.build(options=LibraryOptions(directories=[tmp_path], include=['dploy', 'sql-*']))
    )
    assert list(sql.skills) == ['sql-review']
    assert typo == ["`include` names 'dploy', but the library has no such skill"]


def test_an_excluded_skill_takes_no_part_in_tool_name_checks(tmp_path: Path) -> None:
    def lookup(city: str) -> str:
        return f'{city}: sunny'

    first = Skill('first', 'The first skill.', 'Use lookup.', tools=[Tool(lookup)])
    second = Skill('second', 'The second skill.', 'Use lookup.', tools=[Tool(lookup)])
    with pytest.raises(SkillError, match="both have a tool named 'lookup'"):
        Skills(skills=[first, second])

    capability = Skills(skills=[first, second], exclude=['second'])
    script = Script([[call('load_skill', name='first')], [call('lookup', city='Oslo')], [TextPart('done')]])
    result = Agent(script.model(), capabilities=[capability]).run_sync('weather?')

    assert tool_returns(result.all_messages(), 'lookup') == ['Oslo: sunny']
    assert script.requests[1].tools == sorted(['lookup', *SMALL])


def test_a_broken_folder_that_is_excluded_is_not_reported(tmp_path: Path) -> None:
    library_dir(tmp_path)
    for name in ('legacy-tool', 'broken'):
        (tmp_path / name).mkdir()
        (tmp_path / name / 'SKILL.md').write_text('---\nname: [oops\n---\n', encoding='utf-8')

    _, warned = caught(lambda: SkillLibrary.build(options=LibraryOptions(directories=[tmp_path], exclude=['legacy-*'])))

    assert len(warned) == 1
    assert warned[0].startswith(f'skipped {tmp_path / "broken" / "SKILL.md"}')


def test_filters_in_an_agent_spec_are_checked_with_the_option_name(tmp_path: Path) -> None:
    spec = {'model': 'test', 'capabilities': [{'Skills': {'directories': [str(library_dir(tmp_path))]}}]}
    spec['capabilities'][0]['Skills']['exclude'] = ['sql-*', 'deploy']
    script = Script([[TextPart('ok')]])
    agent = Agent.from_spec(spec, custom_capability_types=[Skills], model=script.model())
    agent.run_sync('hello')
    assert (script.requests[0].instructions or '').endswith(
        '\n\n- pdf-forms: Fill PDF forms.\n- pdf-merge: Merge PDF files into one.'
    )

    for bad in (3, ['pdf-*', ''], [['nested']]):
        with pytest.raises(SkillError, match=r'the `exclude` option must be a skill name or glob'):
            Skills.from_spec(directories=[str(tmp_path)], exclude=bad)
    with pytest.raises(SkillError, match='the `standard_directories` option must be true or false'):
        Skills(standard_directories='yes')  # pyright: ignore[reportArgumentType]


def test_combined_capabilities_merge_their_filters(tmp_path: Path) -> None:
    first, second = library_dir(tmp_path / 'a'), tmp_path / 'b'
    write_skill(second, 'notes', description='Take notes.')
    script = Script([[TextPart('ok')]])
    Agent(
        script.model(), capabilities=[Skills(first, include=['pdf-*']), Skills(second, exclude='pdf-merge')]
    ).run_sync('hi')
    # the second part offers every skill, so the merged `include` lets every skill in; excludes add up
    catalog = (script.requests[0].instructions or '').split('\n\n')[-1]
    assert [line.split(':')[0] for line in catalog.splitlines()] == [
        '- deploy',
        '- pdf-forms',
        '- sql-review',
        '- notes',
    ]


@pytest.fixture
def home_and_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home, project = tmp_path / 'home', tmp_path / 'project'
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv('HOME', str(home))
    monkeypatch.delenv('CODEX_HOME', raising=False)
    monkeypatch.delenv('CLAUDE_CONFIG_DIR', raising=False)
    monkeypatch.chdir(project)
    return home, project


def test_standard_directories_follow_the_documented_precedence(home_and_project: tuple[Path, Path]) -> None:
    home, project = home_and_project
    write_skill(project / '.claude' / 'skills', 'deploy', description='Deploy, the project way.')
    write_skill(project / '.agents' / 'skills', 'deploy', description='Deploy, the agents way.')
    write_skill(project / '.agents' / 'skills', 'lint', description='Lint the code.')
    (project / '.claude' / 'commands').mkdir(parents=True)
    (project / '.claude' / 'commands' / 'deploy.md').write_text('Deploy, the command way.\n', encoding='utf-8')
    write_skill(home / '.claude' / 'skills', 'notes', 'Do notes.', description='Take notes.')
    write_skill(home / '.codex' / 'skills', 'lint', description='Lint, the codex way.')
    (home / '.claude' / 'commands').mkdir(parents=True)
    (home / '.claude' / 'commands' / 'review.md').write_text('Review the diff.\n', encoding='utf-8')
    # ~/.agents/skills does not exist: skipped without a word

    capability, warned = caught(lambda: Skills(standard_directories=True))

    assert [directory.path.relative_to(home.parent) for directory in standard_directories()] == [
        Path('project/.claude/skills'),
        Path('project/.agents/skills'),
        Path('project/.claude/commands'),
        Path('home/.claude/skills'),
        Path('home/.agents/skills'),
        Path('home/.codex/skills'),
        Path('home/.claude/commands'),
    ]
    assert {name: skill.description for name, skill in capability.library.skills.items()} == {
        'deploy': 'Deploy, the project way.',
        'lint': 'Lint the code.',
        'notes': 'Take notes.',
        'review': 'Review the diff.',
    }
    assert sorted(warned) == sorted(
        f'skipped {path}: shadowed by {origin} (the earlier directory wins)'
        for path, origin in [
            (project / '.agents/skills/deploy', project / '.claude/skills/deploy'),
            (project / '.claude/commands/deploy.md', project / '.claude/skills/deploy'),
            (home / '.codex/skills/lint', project / '.agents/skills/lint'),
        ]
    )
    script = Script([[call('load_skill', name='review')], [call('load_skill', name='notes')], [TextPart('done')]])
    result = Agent(script.model(), capabilities=[capability]).run_sync('review my change')
    assert [str(reply).splitlines()[-1] for reply in tool_returns(result.all_messages(), 'load_skill')] == [
        'Review the diff.',
        'Do notes.',
    ]


def test_no_standard_directories_means_an_empty_library_without_warnings(home_and_project: tuple[Path, Path]) -> None:
    capability, warned = caught(lambda: Skills(standard_directories=True))
    assert warned == []
    assert len(capability.library) == 0


def test_codex_home_and_the_home_directory_as_project(
    home_and_project: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, _ = home_and_project
    monkeypatch.setenv('CODEX_HOME', str(home / 'codex-home'))
    write_skill(home / 'codex-home' / 'skills', 'lint', description='Lint the code.')
    write_skill(home / '.claude' / 'skills', 'notes', description='Take notes.')
    monkeypatch.chdir(home)  # the project is the home directory: ~/.claude/skills is read once, not shadowed

    capability, warned = caught(lambda: Skills(standard_directories=True))
    assert warned == []
    assert list(capability.library.skills) == ['notes', 'lint']


def test_a_standard_directory_created_later_is_read_at_the_next_run(home_and_project: tuple[Path, Path]) -> None:
    _, project = home_and_project
    capability = Skills(standard_directories=True)
    write_skill(project / '.agents' / 'skills', 'lint', description='Lint the code.')

    script = Script([[call('load_skill', name='lint')], [TextPart('done')]])
    result = Agent(script.model(), capabilities=[capability]).run_sync('lint it')

    assert 'lint' in (script.requests[0].instructions or '')
    assert str(tool_returns(result.all_messages(), 'load_skill')[0]).startswith("Loaded skill 'lint'.")


def test_a_named_directory_that_does_not_exist_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match=f"the skill directory '{tmp_path / 'nowhere'}' \\(in `directories`\\)"):
        Skills([library_dir(tmp_path / 'lib'), tmp_path / 'nowhere'])
    with pytest.raises(SkillError, match=r"'.*/gone' \(in `command_directories`\) does not exist"):
        Skills(command_directories=tmp_path / 'gone')
    spec = {'model': 'test', 'capabilities': [{'Skills': {'directories': [str(tmp_path / 'nowhere')]}}]}
    with pytest.raises(ValueError, match='does not exist; fix the path or create it'):  # pydantic-ai wraps it
        Agent.from_spec(spec, custom_capability_types=[Skills])


def test_relative_paths_in_a_spec_file_resolve_against_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, specs = tmp_path / 'work', tmp_path / 'specs'
    write_skill(work / 'skills', 'deploy', 'Do deploy.', description='Deploy, from the working directory.')
    write_skill(specs / 'skills', 'deploy', description='Deploy, beside the spec file.')
    spec_file = specs / 'agent.yaml'
    spec_file.write_text('model: test\ncapabilities:\n  - Skills:\n      directories: [skills]\n', encoding='utf-8')
    monkeypatch.chdir(work)
    script = Script([[call('load_skill', name='deploy')], [TextPart('done')]])

    agent = Agent.from_file(spec_file, custom_capability_types=[Skills], model=script.model())
    monkeypatch.chdir(tmp_path)  # resolved once, at construction: a later chdir changes nothing
    result = agent.run_sync('deploy')

    assert 'Deploy, from the working directory.' in (script.requests[0].instructions or '')
    assert str(tool_returns(result.all_messages(), 'load_skill')[0]).endswith('Do deploy.')
    [capability] = [c for c in agent.root_capability.capabilities if isinstance(c, Skills)]
    assert capability.library.skills['deploy'].origin == str(work / 'skills' / 'deploy')
