"""Who may invoke a skill, however its author wrote the flag, and names that only look right.

`disable-model-invocation: "true"` (a string), `1`, `"yes"`, `"on"` used to leave the skill in the model's reach:
only the YAML boolean `true` counted. Now each flag is read as what it spells, a value that spells neither true nor
false takes the restrictive reading (the model may not load the skill; the user may not invoke it), and every value
that is not a YAML boolean is reported. A name with an invisible Hangul filler (`'\\u115fa'` looks like `'a'`) used
to load beside `a`; it is refused now. Undecodable and odd Unicode names end in a skipped skill with a warning,
never an exception from the constructor or the run.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ToolCallPart

from skillshelf import Skill, Skills, SkillWarning
from skillshelf.authoring.lint import lint_folder
from skillshelf.markdown.flags import read_flag

from reliability.ledger import case
from scripted_model import NO_CATALOG, Script, call, tool_returns
from skill_files import write_skill
from warnings_said import said

AREA = 'Skill files'
TRUTHY = ['"true"', '1', '"yes"', '"on"', 'True', 'YES', '"1"', "'On'"]
FALSY = ['"false"', '0', '"no"', 'off', 'False', '"0"']
GARBAGE = ['maybe', '2', '[1]', '""', '{a: 1}', '"truee"', '1.0']


def warned_build(**options: Any) -> tuple[Skills[Any], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        capability = Skills(**options)
    return capability, said(caught)


def model_reaches(capability: Skills[Any], name: str) -> bool:
    """Whether the model finds `name` in the catalog or search, or loads it."""
    script = Script([[call('search_skills', query=name)], [call('load_skill', name=name)]])
    messages = Agent(script.model(), capabilities=[capability]).run_sync('go').all_messages()
    found = tool_returns(messages, 'search_skills')[0]
    listed = isinstance(found, list) and any(getattr(match, 'name', '') == name for match in found)
    return listed or tool_returns(messages, 'load_skill')[0].startswith(f'Loaded skill {name!r}')


def user_invokes(capability: Skills[Any], name: str) -> bool:
    messages = Agent(Script([]).model(), capabilities=[capability]).run_sync(f'/{name} now').all_messages()
    return any(str(reply).startswith(f'Loaded skill {name!r}') for reply in tool_returns(messages, 'load_skill'))


@pytest.mark.parametrize(
    ('value', 'model_may'), [*((v, False) for v in TRUTHY), *((v, True) for v in FALSY), *((v, False) for v in GARBAGE)]
)
@pytest.mark.parametrize('kind', ['folder', 'command'])
def test_disable_model_invocation_fails_closed(tmp_path: Path, value: str, model_may: bool, kind: str) -> None:
    if kind == 'folder':
        write_skill(
            tmp_path,
            'deploy',
            'Deploy it.',
            frontmatter=f'name: deploy\ndescription: Deploy the service.\ndisable-model-invocation: {value}',
        )
        options: dict[str, Any] = {'directories': tmp_path}
    else:
        (tmp_path / 'deploy.md').write_text(
            f'---\ndescription: Deploy the service.\ndisable-model-invocation: {value}\n---\nDeploy it.\n'
        )
        options = {'command_directories': [tmp_path]}
    capability, said = warned_build(**options, catalog_budget=NO_CATALOG)

    assert model_reaches(capability, 'deploy') is model_may
    assert user_invokes(capability, 'deploy')  # the user always may
    if value in ('True', 'YES', 'off', 'False'):
        assert said == []  # YAML booleans (YAML 1.1 reads `YES` and `off` as booleans too)
    else:
        [warning] = [text for text in said if 'disable-model-invocation' in text]
        assert ('neither true nor false' in warning) is (value in GARBAGE)
    if kind == 'folder':
        handling = 'the model may load it' if model_may else 'kept from the model, for the user to invoke'
        case(AREA, f'disable-model-invocation: {value}', handling + (f'; {said[0].split(": ", 1)[-1]}' if said else ''))


@pytest.mark.parametrize(
    ('value', 'user_may'),
    [('"false"', False), ('0', False), ('"no"', False), ('maybe', False), ('"yes"', True), ('1', True), ('[]', False)],
)
def test_user_invocable_fails_closed(tmp_path: Path, value: str, user_may: bool) -> None:
    write_skill(
        tmp_path,
        'style',
        'Write plainly.',
        frontmatter=f'name: style\ndescription: House style.\nuser-invocable: {value}',
    )
    capability, said = warned_build(directories=tmp_path)
    assert user_invokes(capability, 'style') is user_may
    assert [command.name for command in capability.commands()] == (['style'] if user_may else [])
    assert any('`user-invocable`' in text for text in said)
    case(
        AREA,
        f'user-invocable: {value}',
        'the user may invoke it' if user_may else 'the user may not invoke it, with a warning',
    )


def test_flags_in_the_metadata_block_and_in_python_skills_fail_closed(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        'nested',
        'x',
        frontmatter='name: nested\ndescription: Nested flag.\nmetadata:\n  disable-model-invocation: "yes"',
    )
    python_skill = Skill('coded', 'Coded skill.', metadata={'disable-model-invocation': 'on', 'user-invocable': 'nope'})
    capability, said = warned_build(directories=tmp_path, skills=[python_skill], catalog_budget=NO_CATALOG)
    assert not capability.library.skills['nested'].model_invocable
    assert not python_skill.model_invocable
    assert not python_skill.user_invocable
    assert any('read as true' in text for text in said)
    assert not model_reaches(capability, 'coded')


def test_validate_reports_a_flag_that_is_not_a_boolean(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path,
        'deploy',
        'x',
        frontmatter='name: deploy\ndescription: Deploy the service when asked.\ndisable-model-invocation: maybe',
    )
    findings = [finding for finding in lint_folder(folder).findings if finding.rule == 'field-type']
    assert [finding.message for finding in findings] == [
        "`disable-model-invocation` is 'maybe', which is neither true nor false; read as true, so the model may not "
        'load the skill (write true or false)'
    ]


def test_strict_refuses_a_flag_that_is_not_a_boolean(tmp_path: Path) -> None:
    write_skill(
        tmp_path, 'deploy', 'x', frontmatter='name: deploy\ndescription: Deploy.\ndisable-model-invocation: "yes"'
    )
    with pytest.raises(Exception, match='not a YAML boolean'):
        Skills(tmp_path, strict=True)


@pytest.mark.parametrize(
    ('value', 'flag'),
    [
        (True, True),
        (1, True),
        ('Yes', True),
        (' on ', True),
        (0, False),
        ('OFF', False),
        (2, None),
        (1.0, None),
        ('', None),
        (None, None),
    ],
)
def test_read_flag(value: object, flag: bool | None) -> None:
    assert read_flag(value) is flag


def test_odd_unicode_names_are_skipped_with_a_warning_never_raised(tmp_path: Path) -> None:
    skills, commands = tmp_path / 'skills', tmp_path / 'commands'
    write_skill(skills, 'a', 'Visible.', description='The visible one.')
    odd = {
        'filler': '\u115fa',  # invisible Hangul filler: looks like 'a'
        'filler2': 'a\u1160b',
        'zwsp': 'e\u200bvil',
        'rlo': '\u202eabc',
        'nfd': 'cafe\u0301',
        'fullwidth': '\uff46\uff55\uff4c\uff4c',
        'emoji': '\U0001f600',
        'combining': '\u0301',
    }
    for folder, name in odd.items():
        write_skill(skills, folder, 'Odd.', frontmatter=f'name: "{name}"\ndescription: Odd {folder}.')
    undecodable = os.path.join(os.fsencode(skills), b'caf\xff')
    os.mkdir(undecodable)
    with open(os.path.join(undecodable, b'SKILL.md'), 'w') as file:
        file.write('---\ndescription: An undecodable folder.\n---\nBody.\n')
    commands.mkdir()
    for name in ['x\u200by', '\uff46\uff55\uff4c\uff4c', 'cafe\u0301', '\u115fa']:
        (commands / f'{name}.md').write_text('Do it.\n')
    with open(os.path.join(os.fsencode(commands), b'b\xffd.md'), 'w') as file:
        file.write('Do it.\n')

    # The content scan refuses the right-to-left override by default (see tests/scan); names are this test's concern.
    capability, said = warned_build(directories=skills, command_directories=[commands], scan='warn')
    names = sorted(capability.library.skills)
    assert names == ['a', *sorted(odd)]  # every odd name falls back to its folder's, with a warning
    assert (
        "has an invisible character (U+115F), so it would look like another name; named 'filler' after its folder"
        in ' '.join(said)
    )
    assert sum('caf\udcff' in text for text in said) == 1  # the undecodable folder, named as the file system has it
    assert sum(str(commands) in text for text in said) == 5  # each odd command file is skipped, and says so
    for prompt in ['/\u115fa', '/cafe\u0301 x', '/a\udc80 b', '/\u01c6x', '/İstanbul', '/\U0001f600']:
        messages = Agent(Script([]).model(), capabilities=[capability]).run_sync(prompt).all_messages()
        assert tool_returns(messages, 'load_skill') == []
    calls = [
        [ToolCallPart('load_skill', '{"name": "\\udc80"}')],
        [call('load_skill', name='\u115fa')],
        [call('load_skill', name='cafe\u0301')],
    ]
    messages = Agent(Script(calls).model(), capabilities=[capability]).run_sync('go').all_messages()
    replies = [str(reply) for reply in tool_returns(messages, 'load_skill')]
    assert len(replies) == 3
    assert all('Loaded' not in reply for reply in replies)
    case(
        AREA,
        'names with invisible, bidirectional, decomposed, full-width and undecodable characters',
        'each skipped or renamed after its folder with a warning; the run and the constructor never raise',
    )


def test_an_invisible_letter_cannot_pass_for_another_name(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r'invisible character \(U\+115F\)'):
        Skill('\u115fa', 'Looks like a.')
    write_skill(tmp_path, 'a', 'Visible.', description='The visible one.')
    write_skill(tmp_path, '\u115fb', 'Filler.', description='Invisible filler.')
    with pytest.warns(SkillWarning):
        capability = Skills(tmp_path)
    assert sorted(capability.library.skills) == ['a']
