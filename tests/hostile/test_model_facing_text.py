"""What the model is told when it reaches for the wrong skill: a skill only the user may invoke is named as such (not
"There is no skill named 'release'. Did you mean 'release'?"), a command file is called a file, a skill's name
called as a tool is explained however often the model does it, and no message carries a host path.

The host-path check runs hostile-ish scenarios over a library under `tmp_path` (removed, broken and look-alike
skills, resource reads that escape or miss, scripts in the sandbox) and asserts `str(tmp_path)` appears nowhere in
what the model received: the messages of the run and the instructions of every request.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest

from skillshelf import Skill, SkillConflictError, Skills, SkillWarning

from reliability.ledger import case
from sandbox_support import needs_bwrap
from scripted_model import NO_CATALOG, Script, call, tool_returns
from skill_files import write_skill
from skill_fixtures import weather

AREA = "The model's calls"
USER_ONLY = "The skill 'release' is for the user to invoke (by typing /release), not for you to load."


def user_only_library(root: Path) -> Skills[Any]:
    write_skill(
        root / 'skills',
        'release',
        'Cut the release $0.',
        fields={'disable-model-invocation': 'true'},
        files={'steps.md': 'Step one.'},
    )
    write_skill(
        root / 'skills', 'notes', 'Write notes.', description='Write release notes for the team.', files={'a.md': 'A.'}
    )
    (root / 'commands').mkdir()
    (root / 'commands' / 'deploy.md').write_text(
        '---\ndescription: Deploy the service.\ndisable-model-invocation: yes\n---\nDeploy $0.\n'
    )
    return Skills(root / 'skills', command_directories=[root / 'commands'], catalog_budget=NO_CATALOG)


def test_a_skill_only_the_user_may_invoke_is_named_as_such(tmp_path: Path) -> None:
    capability = user_only_library(tmp_path)
    script = Script(
        [
            [call('load_skill', name='release')],
            [call('read_skill_resource', name='release', path='steps.md')],
            [call('load_skill', name='releas')],
            [call('load_skill', name='deploy', arguments='prod')],
        ]
    )
    messages = Agent(script.model(), capabilities=[capability]).run_sync('ship it').all_messages()
    loaded = tool_returns(messages, 'load_skill')
    assert (
        loaded[0]
        == USER_ONLY + ' If it fits the task, tell the user they can run /release; otherwise carry on without it.'
    )
    assert tool_returns(messages, 'read_skill_resource')[0].startswith(USER_ONLY)
    assert "'release'" not in loaded[1]  # a near miss is never pointed at a skill the model may not load
    assert loaded[2].startswith("The skill 'deploy' is for the user to invoke (by typing /deploy)")
    assert 'Did you mean' not in ' '.join(loaded)
    case(AREA, 'load_skill for a skill only the user may invoke (disable-model-invocation)', loaded[0])

    user = Agent(Script([]).model(), capabilities=[capability]).run_sync('/release v2').all_messages()
    assert 'Cut the release v2.' in tool_returns(user, 'load_skill')[0]


def test_a_skill_name_called_as_a_tool_again_and_again_ends_nothing(tmp_path: Path) -> None:
    """pydantic-ai charges an unknown tool against a budget of one retry: the explanation used to be given, but the
    charge kept, so the second call of a skill's name as a tool ended the run."""
    capability = Skills(skills=[weather])
    script = Script(
        [[call('weather')], [call('weather', city='Oslo')], [call('weather')], [call('load_skill', name='weather')]]
    )
    messages = Agent(script.model(), capabilities=[capability]).run_sync('weather?').all_messages()
    said = tool_returns(messages, 'weather')
    assert len(said) == 3
    assert all(reply.startswith("'weather' is a skill, not a tool: call `load_skill` with 'weather'") for reply in said)
    assert tool_returns(messages, 'load_skill')[0].startswith("Loaded skill 'weather'.")
    case(AREA, "a skill's name called as a tool three times in a row", said[2][:120])


def test_a_command_file_is_called_a_file(tmp_path: Path) -> None:
    commands = tmp_path / 'commands'
    commands.mkdir()
    (commands / 'deploy.md').write_text('---\ndescription: Deploy the service.\n---\nDeploy it.\n')
    (commands / 'rollback.md').write_text('---\ndescription: Roll the service back.\n---\nRoll back.\n')
    capability = Skills(command_directories=[commands], catalog_budget=NO_CATALOG)
    (commands / 'deploy.md').unlink()
    (commands / 'rollback.md').write_text('---\ndescription: [broken\n---\nRoll back.\n')
    script = Script([[call('load_skill', name='deploy')], [call('load_skill', name='rollback')]])
    with pytest.warns(SkillWarning, match='rollback.md'):
        messages = Agent(script.model(), capabilities=[capability]).run_sync('deploy').all_messages()
    gone, broken = tool_returns(messages, 'load_skill')
    assert gone.startswith("The skill 'deploy' is no longer available: its file was deleted or moved.")
    assert broken.startswith("The skill 'rollback' is no longer available: its command file is now skipped (")
    assert 'folder' not in gone + broken
    assert 'Python' not in gone + broken
    case(AREA, 'load_skill for a command-file skill whose file was deleted between runs', gone)

    (commands / 'deploy.md').write_text('---\ndescription: Deploy the service.\n---\nDeploy it.\n')
    with pytest.raises(SkillConflictError, match=r"the Python skill 'deploy' and the command file .*deploy\.md share"):
        Skills(command_directories=[commands], skills=[Skill('deploy', 'Deploy from code.')])


def model_facing(messages: list[ModelMessage], script: Script) -> str:
    """Everything the model received: the requests of the run (tool returns, retry prompts, prompts; not what the
    model itself sent, which may name any path it likes) and the instructions of every request."""
    requests = [message for message in messages if isinstance(message, ModelRequest)]
    return repr(requests) + ''.join(request.instructions or '' for request in script.requests)


def test_no_host_path_reaches_the_model(tmp_path: Path) -> None:
    first, second = tmp_path / 'first', tmp_path / 'second'
    write_skill(second, 'deploy', 'Deploy.', description='Deploy the service to production.')
    write_skill(second, 'gone', 'Gone soon.', description='A skill whose folder is deleted.')
    write_skill(second, 'broken', 'Broken soon.', description='A skill whose SKILL.md breaks.')
    demo = write_skill(
        second, 'demo', 'Read notes.md.', description='Demo skill with files.', files={'notes.md': 'Notes.'}
    )
    (tmp_path / 'secret.txt').write_text('outside')
    (demo / 'escape.md').symlink_to(tmp_path / 'secret.txt')
    write_skill(first, 'notes', 'Take notes.', description='Take meeting notes.')
    capability = Skills([first, second], catalog_budget=NO_CATALOG)

    shutil.rmtree(second / 'gone')
    (second / 'broken' / 'SKILL.md').write_text('---\nname: broken\ndescription: [oops\n---\nx\n')
    write_skill(first, 'deplоy', 'Look-alike.', description='Deploy the service now.')  # a Cyrillic о
    calls = [
        [call('load_skill', name='gone')],
        [call('load_skill', name='broken')],
        [call('load_skill', name='deploy')],
        [call('load_skill', name='demo')],
        [call('read_skill_resource', name='demo', path='escape.md')],
        [call('read_skill_resource', name='demo', path='/etc/hostname')],
        [call('read_skill_resource', name='demo', path='../deploy/SKILL.md')],
        [call('read_skill_resource', name='demo', path='missing.md')],
        [call('read_skill_resource', name='nope', path='x')],
        [call('unload_skill', name='nope')],
        [call('search_skills', query='deploy the service')],
    ]
    script = Script(calls)
    with pytest.warns(SkillWarning):
        messages = Agent(script.model(), capabilities=[capability]).run_sync('deploy').all_messages()
    loads = tool_returns(messages, 'load_skill')
    assert loads[0].startswith("The skill 'gone' is no longer available: its folder was deleted or moved.")
    assert loads[1].startswith("The skill 'broken' is no longer available: its SKILL.md is now skipped")
    said = model_facing(messages, script)
    assert str(tmp_path) not in said, said[said.find(str(tmp_path)) - 300 : said.find(str(tmp_path)) + 100]
    case(AREA, 'removed, broken, look-alike and escaping skills under a host folder', 'no host path in any reply')


def test_a_look_alike_that_replaces_a_skill_names_no_host_path(tmp_path: Path) -> None:
    """The skill a look-alike displaced is reported removed with the skip's reason, which names the winner's folder."""
    first, second = tmp_path / 'first', tmp_path / 'second'
    write_skill(second, 'deploy', 'Deploy.', description='Deploy the service to production.')
    write_skill(first, 'notes', 'Take notes.', description='Take meeting notes.')
    capability = Skills([first, second], catalog_budget=NO_CATALOG)
    write_skill(first, 'deplоy', 'Impostor.', description='Deploy the service, really.')  # a Cyrillic о
    script = Script([[call('load_skill', name='deploy')]])
    with pytest.warns(SkillWarning, match='looks like'):
        messages = Agent(script.model(), capabilities=[capability]).run_sync('deploy').all_messages()
    [reply] = tool_returns(messages, 'load_skill')
    assert reply.startswith(
        "The skill 'deploy' is no longer available: its SKILL.md is now skipped (its name 'deploy' looks like"
    )
    assert str(tmp_path) not in model_facing(messages, script)
    case(AREA, 'load_skill for a skill a look-alike in an earlier directory displaced', reply)


@needs_bwrap
def test_scripts_in_the_sandbox_name_no_host_path(tmp_path: Path) -> None:
    write_skill(
        tmp_path / 'skills',
        'tool',
        'Run scripts/where.py.',
        description='Prints where it runs.',
        files={
            'scripts/where.py': 'import os, sys\nprint(os.getcwd(), sys.argv)\nraise SystemExit(3)\n',
            'scripts/crash.py': 'raise RuntimeError("boom")\n',
        },
    )
    capability = Skills(tmp_path / 'skills', scripts=True)
    calls = [
        [call('load_skill', name='tool')],
        [call('run_skill_script', name='tool', script='scripts/where.py', args=['a'])],
        [call('run_skill_script', name='tool', script='scripts/crash.py')],
        [call('run_skill_script', name='tool', script='scripts/missing.py')],
        [call('run_skill_script', name='tool', script='/usr/bin/env')],
        [call('run_skill_script', name='nope', script='x.py')],
    ]
    script = Script(calls)
    messages = Agent(script.model(), capabilities=[capability]).run_sync('where?').all_messages()
    runs = tool_returns(messages, 'run_skill_script')
    assert len(runs) == 5
    assert (
        runs[0]
        == "scripts/where.py exited with code 3.\nOutput:\n/workspace ['/workspace/.skillshelf/skills/tool/scripts/where.py', 'a']"
    )
    assert 'RuntimeError: boom' in runs[1]
    assert "'scripts/missing.py' is not a file of the skill" in runs[2]
    said = model_facing(messages, script)
    assert str(tmp_path) not in said, said[said.find(str(tmp_path)) - 300 : said.find(str(tmp_path)) + 100]
    case(AREA, 'scripts run, crash, go missing or escape in the sandbox', 'no host path in any reply: ' + runs[0][:60])
