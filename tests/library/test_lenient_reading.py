"""Lenient reading, strict reporting (issue 30, items 2 and 3, and the placeholder bug).

A skill that Claude Code or Codex would load, loads here under the name they give it, with a `SkillFormatWarning`
for each deviation from the Agent Skills format (and a finding in `skillshelf validate`); `strict=True` makes each
one an error. Names may use underscores in Python (`data_analysis`), and names that differ only in `-` and `_`
clash. Placeholders are substituted only when there are arguments, and never in text that only looks like one.
"""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import TextPart
from typer.testing import CliRunner

from skillshelf import (
    GitSource,
    LibraryOptions,
    Skill,
    SkillConflictError,
    SkillError,
    SkillFormatError,
    SkillFormatWarning,
    SkillLibrary,
    Skills,
    SkillWarning,
)
from skillshelf.authoring.cli.app import app
from skillshelf.authoring.lint import lint_folder
from skillshelf.capability.arguments import substitute_arguments
from skillshelf.capability.invocation import parse_invocation
from skillshelf.markdown.schema import split_tool_patterns

from scripted_model import Script, call, tool_returns
from warnings_said import said


def write(root: Path, folder: str, frontmatter: str, body: str = 'Follow the steps.') -> Path:
    path = root / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / 'SKILL.md').write_text(f'---\n{frontmatter}\n---\n{body}\n', encoding='utf-8')
    return path


def build(directory: Path, **options: Any) -> tuple[SkillLibrary, list[str]]:
    """A library of `directory` and the `SkillWarning`s its construction emitted."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        library = SkillLibrary.build(options=LibraryOptions(directories=[directory], **options))
    return library, said(caught)


def format_warnings(directory: Path) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        SkillLibrary.build(options=LibraryOptions(directories=[directory]))
    return said(caught, SkillFormatWarning)


def run(capability: Skills[Any], prompt: str, *steps: list[Any]) -> tuple[Script, list[Any]]:
    """One real run with a scripted model; the script (what the model received) and the `load_skill` returns."""
    script = Script([*steps, [TextPart('done')]])
    result = Agent(script.model(), capabilities=[capability]).run_sync(prompt)
    return script, tool_returns(result.all_messages(), 'load_skill')


# --- names: the frontmatter's, else the folder's -----------------------------------------------------


def test_a_name_that_differs_from_its_folder_loads_under_the_frontmatter_name(tmp_path: Path) -> None:
    # Codex takes the frontmatter name (codex-rs core-skills loader.rs), and Claude Code's `name` "becomes the
    # /slash-command"; Vercel's `composition-patterns/` folder holds `vercel-composition-patterns`.
    write(tmp_path, 'composition-patterns', 'name: vercel-composition-patterns\ndescription: React patterns.')
    library, warned = build(tmp_path)
    assert list(library.skills) == ['vercel-composition-patterns']
    assert warned == [
        f'{tmp_path / "composition-patterns" / "SKILL.md"}: the name {"vercel-composition-patterns"!r} does not match '
        "its folder 'composition-patterns'; loaded as 'vercel-composition-patterns', the name Claude Code and Codex "
        'give it (rename the folder or the name so they agree)'
    ]
    [deviation] = library.deviations
    assert (deviation.rule, deviation.skill) == ('name-folder', 'vercel-composition-patterns')

    with pytest.raises(SkillFormatError, match=r'does not match its folder .*`strict` refuses') as raised:
        build(tmp_path, strict=True)
    assert raised.value.path == tmp_path / 'composition-patterns' / 'SKILL.md'
    assert {finding.rule for finding in lint_folder(tmp_path / 'composition-patterns').errors} == {'name-folder'}


def test_the_model_loads_a_renamed_skill_by_the_name_the_catalog_shows(tmp_path: Path) -> None:
    write(
        tmp_path, 'composition-patterns', 'name: vercel-composition-patterns\ndescription: React patterns.', 'Compose.'
    )
    with pytest.warns(SkillFormatWarning):
        capability = Skills[None](tmp_path)
    script, [loaded] = run(capability, 'refactor my props', [call('load_skill', name='vercel-composition-patterns')])
    assert '- vercel-composition-patterns: React patterns.' in (script.requests[0].instructions or '')
    assert 'Compose.' in loaded


@pytest.mark.parametrize(
    ('frontmatter', 'problem'),
    [
        ('description: No name at all.', "has no `name`; named 'pdf' after its folder, as Claude Code and Codex do"),
        ('name: ""\ndescription: An empty name.', "has no `name`; named 'pdf' after its folder"),
        (
            'name: PDF\ndescription: Upper case.',
            "has upper-case letters; use lower-case letters, digits and hyphens; named 'pdf'",
        ),
        (
            'name: pdf:forms\ndescription: A plugin-style name.',
            "may only contain lower-case letters, digits and single hyphens (or underscores); named 'pdf'",
        ),
    ],
)
def test_a_missing_or_unusable_name_is_the_folders(tmp_path: Path, frontmatter: str, problem: str) -> None:
    write(tmp_path, 'pdf', frontmatter)
    library, warned = build(tmp_path)
    assert list(library.skills) == ['pdf']
    [message] = warned
    assert problem in message
    assert library.deviations[0].rule == 'name'
    with pytest.raises(SkillFormatError, match='strict'):
        build(tmp_path, strict=True)


def test_a_name_no_folder_can_supply_is_still_refused(tmp_path: Path) -> None:
    write(tmp_path, 'Bad Folder', 'description: Neither the frontmatter nor the folder names it.')
    library, warned = build(tmp_path)
    assert library.skills == {}
    assert 'no `name` field' in library.skipped[0].problem
    assert len(warned) == 1


def test_a_missing_description_is_the_first_line_of_the_instructions(tmp_path: Path) -> None:
    write(tmp_path, 'release', 'name: release', '# Cut a release\n\nTag, build, publish.')
    library, warned = build(tmp_path)
    assert library.skills['release'].description == 'Cut a release'
    assert 'has no `description`; described by the first line of the instructions, as Claude Code does' in warned[0]


def test_a_description_over_1024_characters_is_kept_whole_with_a_warning(tmp_path: Path) -> None:
    description = 'Build apps with the Claude API. ' * 33 + 'TRIGGER when code imports anthropic.'
    write(tmp_path, 'claude-api', f'name: claude-api\ndescription: |-\n  {description}')
    library, warned = build(tmp_path)
    assert library.skills['claude-api'].description == description
    assert warned == [
        f'{tmp_path / "claude-api" / "SKILL.md"}: the description is {len(description)} characters; the format '
        'allows 1024, so catalogs may shorten it (and Codex skips the skill)'
    ]
    with pytest.raises(SkillFormatError, match=f'the description is {len(description)} characters'):
        build(tmp_path, strict=True)


# --- YAML a lenient reader accepts -----------------------------------------------------------------


@pytest.mark.parametrize(
    ('hint', 'text'),
    [
        ('[topic]', '[topic]'),
        ('[version] [audience]', '[version] [audience]'),
        ('[pr-number] [priority]', '[pr-number] [priority]'),
    ],
)
def test_claude_codes_unquoted_argument_hint_is_read_as_text(tmp_path: Path, hint: str, text: str) -> None:
    write(tmp_path, 'notes', f'name: notes\ndescription: Write notes.\nargument-hint: {hint}')
    with pytest.warns(SkillFormatWarning, match='argument-hint.*as Claude Code does; quote it'):
        capability = Skills[None](tmp_path)
    assert [command.argument_hint for command in capability.commands()] == [text]


def test_a_line_without_a_colon_continues_the_value_above_or_is_dropped(tmp_path: Path) -> None:
    write(
        tmp_path,
        'pdf',
        'name: pdf\ndescription: Fill PDF forms.\nUse when a form must be filled.\nlicense: MIT\n# a comment\nstray words',
    )
    library, warned = build(tmp_path)
    skill = library.skills['pdf']
    assert skill.description == 'Fill PDF forms. Use when a form must be filled.'
    assert skill.metadata['license'] == 'MIT'
    assert [message.split(': ', 1)[1] for message in warned] == [
        'line 4 has no `key:`; read it as the rest of `description` above it (indent it)',
        "line 7 ('stray words') has no `key:`, so it is not a field; ignored",
    ]
    assert {finding.rule for finding in lint_folder(tmp_path / 'pdf').errors} == {'frontmatter'}


def test_allowed_tools_written_as_a_json_string_is_a_list() -> None:
    assert split_tool_patterns('["Read", "Bash(git add:*)"]') == ('Read', 'Bash(git add:*)')
    assert split_tool_patterns("[Read, 'Bash(git:*)']") == ('Read', 'Bash(git:*)')
    assert split_tool_patterns('Read, Grep Bash(git status)') == ('Read', 'Grep', 'Bash(git status)')


def test_a_skill_md_with_allowed_tools_as_a_json_string_pre_approves_each_tool(tmp_path: Path) -> None:
    write(
        tmp_path, 'git-helper', 'name: git-helper\ndescription: Git chores.\nallowed-tools: \'["Read", "Bash(git:*)"]\''
    )
    assert Skill.from_folder(tmp_path / 'git-helper').allowed_tools == ('Read', 'Bash(git:*)')


# --- snake_case names -------------------------------------------------------------------------------


def test_a_python_skill_may_be_named_in_snake_case_and_invoked_so() -> None:
    data_analysis = Skill('data_analysis', 'Analyse tabular data.', 'Load the CSV, then describe each column.')
    capability = Skills[None](skills=[data_analysis])
    script, [loaded] = run(capability, '/data_analysis sales.csv')
    assert len(script.requests) == 1  # the user's /name loaded it before the first request
    assert 'Load the CSV, then describe each column.' in loaded
    assert 'ARGUMENTS: sales.csv' in loaded
    assert parse_invocation('$data_analysis') == ('data_analysis', '')


@pytest.mark.parametrize('name', ['_private', 'trailing_', 'double__under', 'mixed_-separators', 'Data_Analysis'])
def test_underscores_follow_the_same_rules_as_hyphens(name: str) -> None:
    with pytest.raises(SkillFormatError):
        Skill(name, 'A skill.')
    assert parse_invocation(f'/{name} now') is None


def test_names_that_differ_only_in_hyphen_and_underscore_clash(tmp_path: Path) -> None:
    with pytest.raises(SkillConflictError, match='differ only in "-" and "_"'):
        Skills[None](skills=[Skill('data_analysis', 'One.'), Skill('data-analysis', 'Two.')])

    write(tmp_path / 'lib', 'data-analysis', 'name: data-analysis\ndescription: A folder skill.')
    with pytest.raises(SkillConflictError, match='differ only in "-" and "_"'):
        Skills[None](tmp_path / 'lib', skills=[Skill('data_analysis', 'A Python skill.')])

    write(tmp_path / 'lib', 'data_analysis', 'name: data_analysis\ndescription: Another folder skill.')
    library, warned = build(tmp_path / 'lib')
    assert list(library.skills) == ['data-analysis']
    assert 'differ only in "-" and "_"' in library.skipped[0].problem
    assert any('has underscores, which the Agent Skills format does not allow' in message for message in warned)


def test_a_skill_md_name_with_underscores_loads_and_validate_reports_it(tmp_path: Path) -> None:
    write(tmp_path, 'data_analysis', 'name: data_analysis\ndescription: Analyse data.')
    library, warned = build(tmp_path)
    assert list(library.skills) == ['data_analysis']
    assert "use hyphens ('data-analysis'); loaded as 'data_analysis'" in warned[0]
    assert [finding.rule for finding in lint_folder(tmp_path / 'data_analysis').errors] == ['name']


# --- arguments and placeholders ----------------------------------------------------------------------

PRICING = """\
| model | input | output |
|---|---|---|
| large | $5.00 | $25.00 |
| small | $1.00 | $5.00 |

Budget $1,000 a month. In a sheet write =B5*(1+$B$6).

```bash
BASE_SHA=$(git log --oneline | head -1 | awk '{print $1}')
```

Review $0 against $ARGUMENTS[1]; all of it: ${ARGUMENTS}. Literal: \\$1 stays."""


def test_loading_without_arguments_leaves_the_instructions_as_written(tmp_path: Path) -> None:
    write(tmp_path, 'pricing', 'name: pricing\ndescription: Model prices.', PRICING)
    _, [loaded] = run(Skills[None](tmp_path), 'what does it cost?', [call('load_skill', name='pricing')])
    # Claude Code leaves an indexed placeholder without an argument unchanged, and a backslash keeps one literal.
    assert loaded.endswith(PRICING.replace('\\$1', '$1'))


def test_a_user_invocation_fills_only_real_placeholders(tmp_path: Path) -> None:
    write(tmp_path, 'pricing', 'name: pricing\ndescription: Model prices.', PRICING)
    script, [loaded] = run(Skills[None](tmp_path), '/pricing main release a b c d e f')
    assert len(script.requests) == 1
    assert '| large | $5.00 | $25.00 |' in loaded  # `$5` before `.00` is a price, even with six arguments
    assert 'Budget $1,000 a month' in loaded
    assert '=B5*(1+$B$6)' in loaded
    assert "awk '{print $1}'" in loaded  # a fenced block is code, not a template
    assert 'Review main against release; all of it: main release a b c d e f.' in loaded
    assert 'Literal: $1 stays.' in loaded
    assert loaded.endswith('ARGUMENTS: main release a b c d e f')  # a `$1` was left in code: the model still sees them


@pytest.mark.parametrize(
    ('text', 'arguments', 'expected'),
    [
        ('Notes for ${ARGUMENTS}.', 'v2 beta', 'Notes for v2 beta.'),
        ('Fix `gh issue view $0` now.', '42', 'Fix `gh issue view 42` now.'),  # an inline span is a command to fill
        ('```\nuse $ARGUMENTS[0] here\n```', 'x', '```\nuse x here\n```'),  # spelled out, it is filled in code too
        ('Costs $5.', 'a b c d e f', 'Costs f.'),  # a bare `$5` is a placeholder, as in Claude Code
        ('Two slashes \\\\$0 still expand.', 'x', 'Two slashes \\\\x still expand.'),
        ('Pay $5.00.', '', 'Pay $5.00.'),
        ('Pay \\$5.00.', '', 'Pay $5.00.'),
    ],
)
def test_placeholder_rules(text: str, arguments: str, expected: str) -> None:
    assert substitute_arguments(text, arguments) == expected


# --- directories that yield no skill -------------------------------------------------------------------


def openai_layout(root: Path) -> Path:
    skills = root / 'skills'
    write(skills / '.curated', 'gh-fix-ci', 'name: gh-fix-ci\ndescription: Fix failing CI checks.')
    write(skills / '.system', 'skill-creator', 'name: skill-creator\ndescription: Create skills.')
    return skills


def test_a_directory_whose_skills_are_all_hidden_says_where_they_are(tmp_path: Path) -> None:
    skills = openai_layout(tmp_path)
    with pytest.warns(SkillWarning) as warned:
        capability = Skills[None](skills)
    [message] = said(warned)
    assert message == (
        f'skipped {skills}: no skill was found in the directory; its hidden folders .curated, .system hold skill '
        f'folders, and hidden folders are not read: list each as a directory (e.g. {str(skills / ".curated")!r})'
    )
    with pytest.raises(SkillError, match=r'hidden folders \.curated, \.system'):
        Skills[None](skills, strict=True)
    script, _ = run(capability, 'hello')
    assert (script.requests[0].instructions or '').startswith('You have 0 skills')

    capability = Skills[None]([skills / '.curated', skills / '.system'])  # what the warning says to do
    assert list(capability.library.skills) == ['gh-fix-ci', 'skill-creator']


def test_an_empty_directory_is_reported_and_validate_names_hidden_folders(tmp_path: Path) -> None:
    (tmp_path / 'empty').mkdir()
    _, warned = build(tmp_path / 'empty')
    assert warned == [f'skipped {tmp_path / "empty"}: no skill was found in the directory']
    with pytest.raises(SkillError, match='no skill was found'):
        build(tmp_path / 'empty', strict=True)

    result = CliRunner(env={'COLUMNS': '200', 'NO_COLOR': '1'}).invoke(
        app, ['validate', str(openai_layout(tmp_path / 'openai'))]
    )
    assert result.exit_code == 1
    assert 'hidden folders .curated, .system hold skill folders' in ' '.join(result.output.split())


def test_a_folder_of_skill_folders_says_to_list_it(tmp_path: Path) -> None:
    write(tmp_path / 'bundles', 'pdf', 'name: pdf\ndescription: PDFs.')  # a folder named skills is a repository's
    library, warned = build(tmp_path)
    assert library.skills == {}
    assert warned == [
        f'skipped {tmp_path / "bundles"}: the folder has no SKILL.md, so it is not a skill (skills in its sub-folders '
        f'are not read); it holds skill folders: list {str(tmp_path / "bundles")!r} as a directory'
    ]


def test_a_packed_copy_beside_its_folder_says_nothing_but_a_lone_one_is_reported(tmp_path: Path) -> None:
    write(tmp_path, 'deploy', 'name: deploy\ndescription: Deploy.')
    (tmp_path / 'deploy.zip').write_bytes(b'PK\x05\x06' + bytes(18))
    (tmp_path / 'orphan.zip').write_bytes(b'PK\x05\x06' + bytes(18))
    library, warned = build(tmp_path)
    assert list(library.skills) == ['deploy']
    assert warned == [
        f'skipped {tmp_path / "orphan.zip"}: it is a file, not a skill folder (a folder holding a SKILL.md)'
    ]


# --- git ----------------------------------------------------------------------------------------------


def git_repository(path: Path) -> Path:
    def git(*arguments: str) -> None:
        subprocess.run(['git', *arguments], cwd=path, check=True, capture_output=True)

    git('init', '-q', '-b', 'main')
    git('config', 'user.email', 'test@example.com')
    git('config', 'user.name', 'Test')
    git('add', '.')
    git('commit', '-q', '-m', 'skills')
    return path


def test_git_source_reads_a_repositorys_skills_folder_and_hidden_subdirectories(tmp_path: Path) -> None:
    repository = tmp_path / 'repo'
    write(repository / 'skills', 'pdf', 'name: pdf\ndescription: PDFs.')
    write(repository, 'template', 'name: template-skill\ndescription: A template.')  # like Anthropic's repository
    (repository / 'README.md').write_text('# Skills\n', encoding='utf-8')
    openai_layout(repository / 'vendor')
    git_repository(repository)

    found = GitSource(str(repository), cache_dir=tmp_path / 'cache').read_skills()
    assert [skill.name for skill in found.skills] == ['pdf']
    assert found.skipped == []
    assert found.deviations == []

    curated = GitSource(str(repository), subdirectory='vendor/skills/.curated', cache_dir=tmp_path / 'cache')
    assert [skill.name for skill in curated.read_skills().skills] == ['gh-fix-ci']
    top = GitSource(str(repository), subdirectory='.', cache_dir=tmp_path / 'cache').read_skills()
    assert [skill.name for skill in top.skills] == ['template-skill']


@pytest.mark.parametrize(
    ('subdirectory', 'problem'),
    [
        ('../elsewhere', 'is not a folder inside the repository'),
        ('/etc', 'is not a path relative to the repository'),
        ('.git/hooks', "is inside git's own folder"),
        ('skills\x00', 'contains a NUL byte'),
    ],
)
def test_git_subdirectories_stay_inside_the_checkout(subdirectory: str, problem: str) -> None:
    with pytest.raises(SkillError, match=problem):
        GitSource('https://example.invalid/skills.git', subdirectory=subdirectory)


# --- refresh and filters ------------------------------------------------------------------------------


def test_a_deviation_that_appears_later_is_warned_once(tmp_path: Path) -> None:
    write(tmp_path, 'pdf', 'name: pdf\ndescription: PDFs.')
    library, warned = build(tmp_path)
    assert warned == []
    write(tmp_path, 'forms', 'name: pdf-forms\ndescription: Forms.')
    with pytest.warns(SkillFormatWarning, match="'pdf-forms' does not match its folder 'forms'"):
        assert library.refresh() is True
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        write(tmp_path, 'other', 'name: other\ndescription: Other.')
        assert library.refresh() is True  # the known deviation is not repeated


def test_a_skill_left_out_by_include_is_not_reported(tmp_path: Path) -> None:
    write(tmp_path, 'pdf', 'name: pdf\ndescription: PDFs.')
    write(tmp_path, 'forms', 'name: pdf-forms\ndescription: Forms.')
    library, warned = build(tmp_path, exclude=['pdf-forms'], strict=True)
    assert (list(library.skills), warned, library.deviations) == (['pdf'], [], [])


def test_an_empty_usual_location_says_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Codex keeps its own system skills in ~/.codex/skills/.system: no advice to list it, and nothing to raise.
    home = tmp_path / 'home'
    write(home / '.codex' / 'skills' / '.system', 'skill-creator', 'name: skill-creator\ndescription: Create skills.')
    (home / '.claude' / 'skills').mkdir(parents=True)
    monkeypatch.setenv('HOME', str(home))
    monkeypatch.delenv('CODEX_HOME', raising=False)
    monkeypatch.delenv('CLAUDE_CONFIG_DIR', raising=False)
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        library = SkillLibrary.build(options=LibraryOptions(standard_directories=True, strict=True))
    assert (library.skills, library.skipped) == ({}, [])


def test_a_snake_case_name_written_out_in_a_query_ranks_that_skill_first() -> None:
    skills = [
        Skill('data_analysis', 'Analyse tabular data.'),
        Skill('report-writer', 'Write a report about data and analysis results.'),
    ]
    library = SkillLibrary.build(skills)
    [first, *_] = library.search('please run data_analysis on the quarterly numbers', limit=2)
    assert (first.name, first.score) == ('data_analysis', 1.0)
