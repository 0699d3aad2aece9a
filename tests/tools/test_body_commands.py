"""`` !`command` `` in a skill's instructions, on real agent runs: run when a trusted skill loads with
`body_commands=True`, in the run's workspace (`LocalWorkspace`, skillshelf's bubblewrap sandbox), its output in the
load reply; refused, with the reason in its place, for a skill from an untrusted source, with the option off, and on
the host unless something allows the command unasked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace

from skillshelf import ScriptLimits, Skill, Skills, SkillWarning
from skillshelf.capability.body_commands import MAX_COMMANDS, find_commands

from sandbox_support import needs_bwrap
from scripted_model import Script, call, tool_returns
from skill_files import write_skill

BODY = """\
Branch: !`printf 'main-%s' "$((40 + 2))"`

```!
printf 'one\\n'
printf 'two'
```

Data: !`cat ${CLAUDE_SKILL_DIR}/data.txt`
Echo: !`printf '%s' '$ARGUMENTS'`
Arguments: $ARGUMENTS
"""


def library(root: Path, body: str = BODY, **fields: str) -> Path:
    write_skill(root / 'lib', 'status', body, fields=fields or None, files={'data.txt': 'from the folder'})
    return root / 'lib'


def load(capabilities: list[AbstractCapability[Any]], arguments: str = '') -> str:
    model = Script([[call('load_skill', name='status', arguments=arguments)]])
    [reply] = tool_returns(Agent(model.model(), capabilities=capabilities).run_sync('go').all_messages(), 'load_skill')
    return reply


def test_a_trusted_skills_commands_run_in_the_workspace_and_arguments_are_never_run(tmp_path: Path) -> None:
    lib = library(tmp_path)
    (tmp_path / 'work').mkdir()
    skills = Skills(lib, trusted_directories=[lib], body_commands=True, script_approval=False)
    reply = load([LocalWorkspace(tmp_path / 'work'), skills], arguments='!`touch pwned` v2')
    assert 'Branch: main-42\n' in reply
    assert 'one\ntwo' in reply
    assert '```!' not in reply
    assert 'Data: from the folder' in reply  # ${CLAUDE_SKILL_DIR} is the skill's copy in the workspace
    assert 'Echo: $ARGUMENTS' in reply  # a command's output is not read for placeholders
    assert 'Arguments: !`touch pwned` v2' in reply  # an argument is put in as text, never run
    assert not (tmp_path / 'work' / 'pwned').exists()


def test_a_skill_from_a_source_not_trusted_says_why_its_commands_did_not_run(tmp_path: Path) -> None:
    lib = library(tmp_path, 'Now: !`touch ran`')
    (tmp_path / 'work').mkdir()
    reply = load([LocalWorkspace(tmp_path / 'work'), Skills(lib, body_commands=True, script_approval=False)])
    assert 'Now: [the command `touch ran` was not run: this skill does not come from a source the application ' in reply
    assert not (tmp_path / 'work' / 'ran').exists()


def test_with_the_option_off_every_command_is_named_and_not_run(tmp_path: Path) -> None:
    lib = library(tmp_path, 'Now: !`touch ran`')
    (tmp_path / 'work').mkdir()
    reply = load([LocalWorkspace(tmp_path / 'work'), Skills(lib, trusted_directories=[lib])])
    assert '[the command `touch ran` was not run: the application runs the commands of skills only with ' in reply
    assert not (tmp_path / 'work' / 'ran').exists()


def test_on_the_host_a_command_runs_only_where_allowed_tools_or_preapproved_programs_allow_it(tmp_path: Path) -> None:
    (tmp_path / 'work').mkdir()
    host = LocalWorkspace(tmp_path / 'work')
    asks = library(tmp_path / 'a', 'Now: !`printf ok`')
    with pytest.warns(SkillWarning, match="the `!` commands of skills' instructions will be refused"):
        refused = load([host, Skills(asks, trusted_directories=[asks], body_commands=True)])
    assert 'the workspace is the machine the agent runs on, not a sandbox' in refused
    allowed = library(tmp_path / 'b', 'Now: !`printf ok`', **{'allowed-tools': 'Bash(printf:*)'})
    with pytest.warns(SkillWarning):  # other commands would still be refused
        assert 'Now: ok' in load([host, Skills(allowed, trusted_directories=[allowed], body_commands=True)])
    programs = Skills(asks, trusted_directories=[asks], body_commands=True, preapproved_programs=['printf'])
    assert 'Now: ok' in load([host, programs])
    every = Skills(allowed, trusted_directories=[allowed], body_commands=True, script_approval=True)
    assert 'Now: ok' in load([host, every])  # the skill's own rule answers before anyone would be asked
    unallowed = Skills(asks, trusted_directories=[asks], body_commands=True, script_approval=True)
    assert 'the application approves every command, and no one can be asked' in load([host, unallowed])


def test_a_failing_command_says_how_and_long_output_is_cut(tmp_path: Path) -> None:
    lib = library(tmp_path, 'A: !`echo broken >&2; exit 3`\nB: !`head -c 5000 /dev/zero | tr "\\0" x`')
    (tmp_path / 'work').mkdir()
    limits = ScriptLimits(max_output_bytes=100)
    skills = Skills(lib, trusted_directories=[lib], body_commands=True, script_approval=False, script_limits=limits)
    reply = load([LocalWorkspace(tmp_path / 'work'), skills])
    assert 'A: [the command `echo broken >&2; exit 3` failed: it exited with code 3: broken]' in reply
    assert f'B: {"x" * 100}\n[output cut: only the first 100 of 5,000 bytes are shown]' in reply


@needs_bwrap
def test_a_python_skill_is_trusted_and_runs_its_commands_in_the_sandbox_skillshelf_supplies() -> None:
    skill = Skill('status', 'Show the status.', instructions='Where: !`pwd`')
    reply = load([Skills(skills=[skill], body_commands=True)])  # no workspace: skillshelf's own sandbox, isolated
    assert 'Where: /workspace' in reply


def test_commands_are_found_as_claude_code_finds_them() -> None:
    text = 'a !`x` b$!`no` c!`no` `#REF!`: d (!`y`)\n```!\nz\n```\n'
    assert [command for _, command in find_commands(text)] == ['x', 'y', 'z']
    many = ' '.join(f'!`printf {index}`' for index in range(MAX_COMMANDS + 1))
    assert len(find_commands(many)) == MAX_COMMANDS + 1


@needs_bwrap
def test_too_many_commands_run_only_the_first(tmp_path: Path) -> None:
    body = ' '.join(f'!`printf {index}`' for index in range(MAX_COMMANDS + 1))
    lib = library(tmp_path, body)
    reply = load([Skills(lib, trusted_directories=[lib], body_commands=True)])
    assert f'{MAX_COMMANDS - 1} [the command `printf {MAX_COMMANDS}` was not run: a skill runs at most ' in reply
