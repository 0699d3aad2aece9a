"""Building agents with skills from agent specs (dict, YAML file), including Python skills by import path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.agent.spec import AgentSpec
from pydantic_ai.messages import TextPart

from skillshelf import SkillError, Skills

from repo_paths import SAMPLE_SKILLS
from scripted_model import Script, call
from skill_fixtures import forecast_calls


def skills_of(agent: Agent[None, str]) -> Skills[None]:
    [capability] = [c for c in agent.root_capability.capabilities if isinstance(c, Skills)]
    return capability


def test_dict_spec_builds_a_working_agent_with_folder_and_python_skills(make_script: Callable[..., Script]) -> None:
    script = make_script([call('load_skill', name='weather')], [call('get_forecast', city='Quito')], [TextPart('done')])
    spec = {
        'model': 'test',
        'capabilities': [{'Skills': {'directories': str(SAMPLE_SKILLS), 'skills': ['skill_fixtures:weather']}}],
    }
    agent = Agent.from_spec(spec, custom_capability_types=[Skills], model=script.model())
    agent.run_sync('forecast please')

    assert forecast_calls == ['Quito']
    assert list(skills_of(agent).library.skills) == [
        'weather',
        'commit-messages',
        'csv-analysis',
        'http-api-design',
        'release-notes',
        'sql-review',
    ]


def test_yaml_file_spec_accepts_lists_and_options(tmp_path: Path, make_script: Callable[..., Script]) -> None:
    spec_file = tmp_path / 'agent.yaml'
    spec_file.write_text(
        f"""\
model: test
capabilities:
  - Skills:
      directories: [{SAMPLE_SKILLS}]
      skills: [skill_fixtures:travel]
      catalog_budget: 400
      search_limit: 2
      auto_reload: false
""",
        encoding='utf-8',
    )
    script = make_script([call('load_skill', name='currency')], [TextPart('done')])
    agent = Agent.from_file(spec_file, custom_capability_types=[Skills], model=script.model())
    agent.run_sync('convert 10 EUR')

    capability = skills_of(agent)
    assert (capability.catalog_budget, capability.search_limit, capability.auto_reload) == (400, 2, False)
    assert script.requests[1].tools == ['convert', 'load_skill', 'read_skill_resource', 'search_skills', 'unload_skill']
    assert (script.requests[0].instructions or '').endswith(
        '\n\nSkills: weather, currency, commit-messages, csv-analysis, http-api-design, release-notes, sql-review.'
    )


def test_a_single_positional_directory_is_accepted() -> None:
    agent = Agent.from_spec(
        {'model': 'test', 'capabilities': [{'Skills': str(SAMPLE_SKILLS)}]}, custom_capability_types=[Skills]
    )
    assert len(skills_of(agent).library) == 5


def test_bare_capability_name_builds_an_empty_library() -> None:
    agent = Agent.from_spec({'model': 'test', 'capabilities': ['Skills']}, custom_capability_types=[Skills])
    assert len(skills_of(agent).library) == 0


@pytest.mark.parametrize(
    ('path', 'message'),
    [
        ('skill_fixtures', 'must look like "package.module:attribute"'),
        ('no_such_module_xyz:weather', "cannot import 'no_such_module_xyz'"),
        ('skill_fixtures:nope', "module 'skill_fixtures' has no attribute 'nope'"),
        ('skill_fixtures:travel_names', 'is a list, not a Skill or a list of skills'),
    ],
)
def test_bad_skill_import_paths_say_what_is_wrong(path: str, message: str) -> None:
    with pytest.raises(SkillError, match=message):
        Skills.from_spec(skills=[path])


def test_bad_option_types_say_what_is_expected() -> None:
    with pytest.raises(SkillError, match='`directories` option must be a string or a list of strings'):
        Skills.from_spec(directories=42)  # pyright: ignore[reportArgumentType]


def test_the_spec_json_schema_describes_the_options() -> None:
    schema = AgentSpec.model_json_schema_with_capabilities([Skills])
    text = str(schema)
    assert 'Skills' in text
    assert 'catalog_budget' in text
    assert 'auto_reload' in text
