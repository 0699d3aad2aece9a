"""Each limit is set where it acts, and none is silently ignored: `ScriptLimits` (time, output) on the tool,
`SandboxLimits` (processes, memory, files, disk) on `SkillSandbox`.

The sandbox limits `ScriptLimits` held before still work for this release, with a `DeprecationWarning` naming
`SandboxLimits`: they reach the sandbox `Skills(scripts=True)` makes itself, and where it makes none (the agent has a
workspace of its own, or the model works in none) a `SkillWarning` says they are ignored and where to set them.
What a command got is read inside the sandbox (`getrlimit`), from real agent runs.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace

from skillshelf import SandboxLimits, ScriptLimits, SkillError, Skills, SkillSandbox, SkillWarning

from sandbox_support import needs_bwrap
from scripted_model import Script, call, tool_returns
from skill_files import write_skill
from warnings_said import said

LIMITS = """import resource
print(*(resource.getrlimit(getattr(resource, name))[0] for name in ('RLIMIT_NPROC', 'RLIMIT_AS', 'RLIMIT_FSIZE')))
"""
DEFAULTS = SandboxLimits()


def library(root: Path) -> Path:
    files = {'scripts/limits.py': LIMITS}
    return write_skill(root / 'lib', 'tool-kit', 'Run the scripts.', description='Scripts.', files=files).parent


def limits_seen(skills: Skills[Any], *workspace: AbstractCapability[Any]) -> tuple[list[int], Any]:
    """The process, memory and file-size limits a script of `skills` ran under, and the run's workspace ref."""
    model = Script(
        [[call('load_skill', name='tool-kit')], [call('run_skill_script', name='tool-kit', script='scripts/limits.py')]]
    )
    result = Agent(model.model(), capabilities=[*workspace, skills]).run_sync('go')
    [reply] = tool_returns(result.all_messages(), 'run_skill_script')
    assert reply.startswith('scripts/limits.py exited with code 0.'), reply
    return [int(word) for word in reply.split('Output:\n')[1].split()], result.response.workspace_ref


@pytest.fixture
def no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():  # ours only: another test's leaked connection may be collected meanwhile
        warnings.simplefilter('error', DeprecationWarning)
        warnings.simplefilter('error', SkillWarning)
        yield


@needs_bwrap
@pytest.mark.usefixtures('no_warnings')
def test_the_sandbox_takes_sandbox_limits_and_the_tool_script_limits(tmp_path: Path) -> None:
    sandbox = SkillSandbox(tmp_path / 'ws', limits=SandboxLimits(max_processes=40, max_file_bytes=5 << 20))
    skills = Skills(library(tmp_path), scripts=True, script_limits=ScriptLimits(timeout=60, max_output_bytes=1000))
    assert limits_seen(skills, sandbox)[0] == [40, DEFAULTS.max_memory_bytes, 5 << 20]


@needs_bwrap
def test_old_sandbox_limits_in_script_limits_reach_the_sandbox_skills_makes(tmp_path: Path) -> None:
    with pytest.warns(
        DeprecationWarning, match=r'ScriptLimits\(max_processes=\.\.\., max_file_bytes=\.\.\.\) is'
    ) as caught:
        limits = ScriptLimits(timeout=60, max_processes=40, max_file_bytes=5 << 20)
    assert (
        'SkillSandbox(limits=SandboxLimits(max_processes=..., max_file_bytes=...))'
        in said(caught, DeprecationWarning)[0]
    )
    with warnings.catch_warnings():
        warnings.simplefilter(
            'error', SkillWarning
        )  # Skills makes the sandbox, so nothing is ignored and nothing more is said
        seen, ref = limits_seen(Skills(library(tmp_path), scripts=True, script_limits=limits))
    assert asyncio.run(SkillSandbox().delete(ref))  # in the default root, where Skills' own sandbox keeps folders
    assert seen == [40, DEFAULTS.max_memory_bytes, 5 << 20]


@needs_bwrap
def test_old_sandbox_limits_beside_an_agent_s_own_sandbox_are_said_to_be_ignored(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match='SandboxLimits'):
        limits = ScriptLimits(max_processes=40, max_memory_bytes=3 << 30)
    skills = Skills(library(tmp_path), scripts=True, script_limits=limits)
    sandbox = SkillSandbox(tmp_path / 'ws', limits=SandboxLimits(max_processes=50))
    with pytest.warns(SkillWarning) as caught:
        seen, _ = limits_seen(skills, sandbox)
    [message] = said(caught)
    assert message == (
        'the sandbox limits in Skills(script_limits=ScriptLimits(max_processes=40, max_memory_bytes=3221225472)) are '
        "ignored: this agent's workspace comes from SkillSandbox, and only the sandbox Skills makes itself takes them. "
        'Set them where the workspace is made: SkillSandbox(limits=SandboxLimits(max_processes=40, '
        "max_memory_bytes=3221225472)), or your workspace's own limits."
    )
    assert seen == [50, DEFAULTS.max_memory_bytes, DEFAULTS.max_file_bytes]  # the agent's sandbox's, as it said


def test_old_sandbox_limits_beside_a_local_workspace_name_it(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match='SandboxLimits'):
        skills = Skills(
            library(tmp_path), scripts=True, script_approval=False, script_limits=ScriptLimits(max_tmp_bytes=1 << 20)
        )
    with pytest.warns(SkillWarning, match="this agent's workspace comes from LocalWorkspace"):
        Agent('test', capabilities=[LocalWorkspace(tmp_path / 'work'), skills])


def test_old_sandbox_limits_without_scripts_are_said_to_reach_no_sandbox(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match=r'ScriptLimits\(max_workspace_bytes=\.\.\.\) is deprecated'):
        skills = Skills(library(tmp_path), script_limits={'max_workspace_bytes': 1 << 20})  # pyright: ignore[reportArgumentType]  # a spec
    with pytest.warns(SkillWarning, match='Skills makes no sandbox with `scripts` and `file_tools` off'):
        Agent('test', capabilities=[skills])


@needs_bwrap
def test_a_sandbox_given_script_limits_takes_their_sandbox_limits_and_says_what_it_never_used(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match='SandboxLimits') as caught:
        sandbox = SkillSandbox(tmp_path / 'ws', limits=ScriptLimits(timeout=5, max_processes=40))  # pyright: ignore[reportArgumentType]
    messages = said(caught, DeprecationWarning)
    assert messages[-1] == (
        'SkillSandbox(limits=ScriptLimits(...)) is deprecated: pass SandboxLimits(...) (from skillshelf.sandbox). '
        'Its timeout never applied here: the tool takes it, Skills(script_limits=ScriptLimits(...)).'
    )
    assert sandbox.limits == SandboxLimits(max_processes=40)
    with pytest.warns(
        DeprecationWarning, match=r'^SkillSandbox\(limits=ScriptLimits\(\.\.\.\)\) is deprecated: pass Sa.*\)\.$'
    ):
        assert SkillSandbox(tmp_path / 'ws', limits=ScriptLimits()).limits == DEFAULTS  # pyright: ignore[reportArgumentType]


@needs_bwrap
@pytest.mark.usefixtures('no_warnings')
def test_sandbox_limits_from_a_spec_are_checked(tmp_path: Path) -> None:
    assert SkillSandbox(tmp_path / 'ws', limits={'max_processes': 40}).limits == SandboxLimits(max_processes=40)  # type: ignore[arg-type]
    with pytest.raises(SkillError, match=r"the sandbox's `limits`: .*unexpected keyword argument 'timeout'"):
        SkillSandbox(tmp_path / 'ws', limits={'timeout': 5})  # type: ignore[arg-type]
    with pytest.raises(SkillError, match="the sandbox's `limits` must be SandboxLimits, not 5"):
        SkillSandbox(tmp_path / 'ws', limits=5)  # type: ignore[arg-type]
