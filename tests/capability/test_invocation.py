"""Skills the user invokes (`/name args`, `$name args`), arguments, who may invoke what, and `loaded_skills`."""

from __future__ import annotations

from pathlib import Path

import pytest
from inline_snapshot import snapshot
from pydantic_ai import Agent
from pydantic_ai.messages import TextPart

from skillshelf import Skill, Skills
from skillshelf.capability.arguments import substitute_arguments
from skillshelf.capability.skills import SkillCommand, loaded_skills

from scripted_model import NO_CATALOG, SMALL, Script, call, tool_returns
from skill_files import write_skill
from skill_fixtures import forecast_calls, weather


def library(root: Path) -> Path:
    skills = {
        'release-notes': (
            'description: Write release notes for a version. Use when shipping a release.\n'
            'argument-hint: "[version] [audience]"',
            'Write the notes for version $0, for $ARGUMENTS[1] readers. Full request: $ARGUMENTS.',
        ),
        'deploy': (
            'description: Deploy the service. Only when the user asks.\ndisable-model-invocation: true',
            'Deploy carefully.',
        ),
        'house-style': ('description: The house writing style.\nuser-invocable: false', 'Write plainly.'),
        'summarise': ('description: Summarise a text.', 'Summarise it in three lines.'),
    }
    for name, (front, body) in skills.items():
        write_skill(root, name, body, frontmatter=f'name: {name}\n{front}')
    return root


@pytest.mark.parametrize(
    ('text', 'arguments', 'expected'),
    [
        ('Notes for $ARGUMENTS.', 'v2.1 beta', 'Notes for v2.1 beta.'),
        (
            'Version $0 for $1, then $ARGUMENTS[1] again.',
            'v2 "ops team"',
            'Version v2 for ops team, then ops team again.',
        ),
        ('Version $0, extra [$2].', 'v2', 'Version v2, extra [$2].'),  # no argument 2: left as written
        ('No placeholder here.', 'v2 now', 'No placeholder here.\n\nARGUMENTS: v2 now'),
        ('No placeholder here.', '', 'No placeholder here.'),
        ('Costs $10 and $ARGUMENTSX stays.', 'a', 'Costs $10 and $ARGUMENTSX stays.\n\nARGUMENTS: a'),
        ('Unclosed $0 $1', '"a b', 'Unclosed "a b'),
    ],
)
def test_arguments_follow_claude_codes_placeholders(text: str, arguments: str, expected: str) -> None:
    assert substitute_arguments(text, arguments) == expected


def test_a_slash_command_loads_the_skill_before_the_first_request(tmp_path: Path) -> None:
    script = Script([[TextPart('Notes written.')]])
    agent = Agent(script.model(), capabilities=[Skills(library(tmp_path))])
    result = agent.run_sync('/release-notes v2.1 "early adopters"')

    assert len(script.requests) == 1  # no round trip: the model's first request already holds the skill
    [loaded] = tool_returns(script.requests[0].messages, 'load_skill')
    assert loaded == snapshot("""\
Loaded skill 'release-notes'.

Write the notes for version v2.1, for early adopters readers. Full request: v2.1 "early adopters".\
""")
    assert loaded_skills(result.all_messages()) == ['release-notes']


def test_a_codex_style_dollar_command_works_too_and_a_later_run_keeps_the_skill(tmp_path: Path) -> None:
    capability = Skills(skills=[weather])
    first = Agent(Script([[TextPart('ok')]]).model(), capabilities=[capability]).run_sync('$weather')
    script = Script([[call('get_forecast', city='Oslo')], [TextPart('done')]])
    Agent(script.model(), capabilities=[capability]).run_sync('and Oslo?', message_history=first.all_messages())
    assert script.requests[0].tools == ['get_alerts', 'get_forecast', *SMALL]
    assert forecast_calls == ['Oslo']


def test_text_that_is_not_a_user_invocable_skill_is_left_alone(tmp_path: Path) -> None:
    capability = Skills(library(tmp_path))
    for prompt in ['/house-style', '/unknown-thing now', 'please /release-notes v1', '$5 is the price', '/']:
        script = Script([[TextPart('ok')]])
        result = Agent(script.model(), capabilities=[capability]).run_sync(prompt)
        assert tool_returns(result.all_messages(), 'load_skill') == [], prompt
        assert loaded_skills(result.all_messages()) == []


def test_a_skill_only_users_may_invoke_stays_out_of_the_models_reach(tmp_path: Path) -> None:
    capability = Skills(library(tmp_path), catalog_budget=NO_CATALOG)
    script = Script(
        [[call('search_skills', query='deploy the service')], [call('load_skill', name='deploy')], [TextPart('ok')]]
    )
    result = Agent(script.model(), capabilities=[capability]).run_sync('ship it')

    assert 'deploy' not in (script.requests[0].instructions or '')
    [matches] = tool_returns(result.all_messages(), 'search_skills')
    assert (
        matches == "No skill matches 'deploy the service'. Try other words for the task, or carry on without a skill."
    )

    [refused] = tool_returns(result.all_messages(), 'load_skill')
    assert refused.startswith("There is no skill named 'deploy'")
    assert loaded_skills(result.all_messages()) == []

    invoked = Script([[TextPart('deployed')]])
    Agent(invoked.model(), capabilities=[capability]).run_sync('/deploy')
    assert 'Deploy carefully.' in tool_returns(invoked.requests[0].messages, 'load_skill')[0]


def test_load_skill_takes_arguments_from_the_model(tmp_path: Path) -> None:
    script = Script([[call('load_skill', name='release-notes', arguments='v3 internal')], [TextPart('ok')]])
    result = Agent(script.model(), capabilities=[Skills(library(tmp_path))]).run_sync('notes for v3')
    [loaded] = tool_returns(result.all_messages(), 'load_skill')
    assert 'version v3, for internal readers' in loaded


def test_commands_list_what_a_user_may_invoke_for_autocomplete(tmp_path: Path) -> None:
    python_skill = Skill('lookup', 'Look things up.', metadata={'argument-hint': '[term]'})
    assert Skills(library(tmp_path), skills=[python_skill]).commands() == [
        SkillCommand('lookup', 'Look things up.', '[term]'),
        SkillCommand('deploy', 'Deploy the service. Only when the user asks.', None),
        SkillCommand(
            'release-notes', 'Write release notes for a version. Use when shipping a release.', '[version] [audience]'
        ),
        SkillCommand('summarise', 'Summarise a text.', None),
    ]


def test_loaded_skills_reads_a_stored_conversation() -> None:
    script = Script([[call('load_skill', name='weather')], [call('unload_skill', name='weather')], [TextPart('x')]])
    messages = Agent(script.model(), capabilities=[Skills(skills=[weather])]).run_sync('go').all_messages()
    assert loaded_skills(messages) == []
    assert loaded_skills(messages[:3]) == ['weather']
    assert loaded_skills(messages[:3], capability_id='other') == []
