"""Python tools that a `SKILL.md` declares in its `python-tools:` field: imported only from trusted directories, hidden
until the skill is loaded, and a bad declaration skips its skill with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai import Agent

from skillshelf import LibraryOptions, Skill, SkillConflictError, SkillError, SkillLibrary, Skills, SkillWarning

from scripted_model import SMALL, Script, call, tool_returns
from skill_files import write_skill

FIXTURE = 'declared_tools_fixture'


def test_a_trusted_skill_declared_tool_is_hidden_until_loaded_then_callable(tmp_path: Path) -> None:
    write_skill(tmp_path, 'units', fields={'python-tools': [f'{FIXTURE}:convert_celsius', f'{FIXTURE}:run_number']})
    skills = Skills(tmp_path, trusted_directories=[tmp_path])
    script = Script(
        [
            [call('convert_celsius', celsius=100)],
            [call('load_skill', name='units')],
            [call('convert_celsius', celsius=100), call('run_number')],
        ]
    )

    result = Agent(script.model(), capabilities=[skills]).run_sync('How hot is 100 C?')

    assert skills.library.skills['units'].tool_names == ['convert_celsius', 'run_number']
    assert script.requests[0].tools == SMALL
    assert script.requests[2].tools == sorted([*SMALL, 'convert_celsius', 'run_number'])
    refused = tool_returns(result.all_messages(), 'convert_celsius')
    assert 'load_skill' in str(refused[0])  # the hidden tool's refusal names the skill to load
    assert refused[1] == '212 F'
    assert tool_returns(result.all_messages(), 'run_number') == ['step 3']
    assert 'convert_celsius' in str(tool_returns(result.all_messages(), 'load_skill')[0])


def test_an_untrusted_skill_loads_without_its_declared_tools_and_a_warning(tmp_path: Path) -> None:
    write_skill(tmp_path, 'units', 'Convert with the tools.', fields={'python-tools': [f'{FIXTURE}:convert_celsius']})
    script = Script([[call('load_skill', name='units')], [call('convert_celsius', celsius=100)]])

    with pytest.warns(SkillWarning, match=r'not imported because its directory is not trusted.*trusted_directories'):
        skills = Skills(tmp_path)
    result = Agent(script.model(), capabilities=[skills]).run_sync('How hot is 100 C?')

    assert skills.library.skills['units'].tool_names == []
    assert script.requests[1].tools == ['load_skill']  # no skill brings tools, so there is nothing to unload
    assert 'Convert with the tools.' in str(tool_returns(result.all_messages(), 'load_skill')[0])
    [refusal] = tool_returns(result.all_messages(), 'convert_celsius')
    assert "Unknown tool name: 'convert_celsius'" in str(refusal)


@pytest.mark.parametrize(
    ('path', 'reason'),
    [
        (f'{FIXTURE}:no_such_tool', "has no attribute 'no_such_tool'"),
        ('no_such_module_for_skillshelf:tool', "cannot import 'no_such_module_for_skillshelf'"),
        (f'{FIXTURE}:NOT_A_FUNCTION', 'is a int, not a function'),
        ('declared_tools_fixture.convert_celsius', 'must look like "package.module:attribute"'),
    ],
)
def test_a_declared_tool_that_cannot_be_imported_skips_its_skill(tmp_path: Path, path: str, reason: str) -> None:
    write_skill(tmp_path, 'broken', fields={'python-tools': [path]})
    write_skill(tmp_path, 'units', fields={'python-tools': [f'{FIXTURE}:convert_celsius']})

    with pytest.warns(SkillWarning, match='skipped'):
        skills = Skills(tmp_path, trusted_directories=[str(tmp_path)])

    assert list(skills.library.skills) == ['units']
    [skipped] = skills.library.skipped
    assert skipped.path == tmp_path / 'broken' / 'SKILL.md'
    assert reason in skipped.problem
    with pytest.raises(SkillError, match=reason):
        Skills(tmp_path, trusted_directories=[tmp_path], strict=True)


def test_a_declared_tool_clashing_with_another_skills_tool_is_a_conflict(tmp_path: Path) -> None:
    write_skill(tmp_path, 'units', fields={'python-tools': [f'{FIXTURE}:convert_celsius']})
    other = Skill('weather', 'Forecasts the weather. Use for forecasts.')

    @other.tool_plain
    def convert_celsius(celsius: float) -> str:  # pyright: ignore[reportUnusedFunction]
        """Another converter."""
        return str(celsius)

    with pytest.raises(SkillConflictError, match="'weather' and 'units' both have a tool named 'convert_celsius'"):
        Skills(tmp_path, skills=[other], trusted_directories=[tmp_path])


def test_tools_must_be_a_list_of_import_paths(tmp_path: Path) -> None:
    write_skill(tmp_path, 'units', fields={'python-tools': 'declared_tools_fixture:convert_celsius'})

    with pytest.warns(SkillWarning, match='`python-tools` must be a list of import paths'):
        skills = Skills(tmp_path, trusted_directories=[tmp_path])

    assert len(skills.library) == 0


def test_a_trusted_directory_must_be_a_skill_directory(tmp_path: Path) -> None:
    write_skill(tmp_path / 'library', 'units', fields={'python-tools': [f'{FIXTURE}:convert_celsius']})

    with pytest.raises(SkillError, match='is not one of the skill directories'):
        Skills(tmp_path / 'library', trusted_directories=[tmp_path])


def test_claude_code_style_tools_field_is_kept_as_metadata(tmp_path: Path) -> None:
    folder = tmp_path / 'lookup'
    folder.mkdir()
    (folder / 'SKILL.md').write_text(
        '---\nname: lookup\ndescription: Looks things up.\ntools: Read, Grep\n---\nBody.\n'
    )

    library = SkillLibrary.build(options=LibraryOptions(directories=[tmp_path], trusted_directories=[tmp_path]))

    assert library.skills['lookup'].metadata['tools'] == 'Read, Grep'
    assert library.skills['lookup'].tool_names == []
