"""`allowed-tools` as pre-approval: while a skill is loaded, the calls it lists run without waiting for a person.

Everything is checked on real agent runs: what the application receives (`DeferredToolRequests`), and what the
model receives next (the tool's return, or nothing because the run stopped for approval).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolDenied
from pydantic_ai.toolsets import FunctionToolset

from skillshelf import Skill, Skills
from skillshelf.capability.approval import Preapproval, ScriptCall
from skillshelf.scripts.script import INTERPRETERS

from reliability.ledger import case
from scripted_model import Script, call, tool_returns
from skill_files import write_skill

OUTPUT = [str, DeferredToolRequests]


@pytest.mark.parametrize(
    ('patterns', 'script', 'args', 'approved'),
    [
        (['Bash'], 'scripts/any.sh', ['x'], True),
        (['Bash(*)'], 'scripts/any.py', [], True),
        (['run_skill_script'], 'scripts/any.py', ['--force'], True),
        (['Bash(python scripts/fill.py:*)'], 'scripts/fill.py', ['in.pdf', 'out.pdf'], True),
        (['Bash(python scripts/fill.py:*)'], 'scripts/fill.py', [], True),
        (['Bash(python scripts/fill.py:*)'], 'scripts/fill.py', ['x; rm -f y'], True),  # an argument: no shell
        (['Bash(python scripts/fill.py a b)'], 'scripts/fill.py', ['a b'], False),  # one argument, not two
        (['Bash(python scripts/fill.py a b)'], 'scripts/fill.py', ['a', 'b'], True),
        (['Bash(python scripts/fill.py:*)'], 'scripts/fill_all.py', [], False),
        (['Bash(python3 scripts/fill.py *)'], 'scripts/fill.py', ['a'], True),
        (['Bash(python ${CLAUDE_SKILL_DIR}/scripts/fill.py:*)'], 'scripts/fill.py', ['a'], True),
        (['Bash(./scripts/build.sh:*)'], 'scripts/build.sh', ['--all'], True),
        (['Bash(sh scripts/build.sh)'], 'scripts/build.sh', [], True),
        (['Bash(sh scripts/build.sh)'], 'scripts/build.sh', ['--all'], False),
        (['Bash(python:*)'], 'scripts/fill.py', ['a'], True),
        (['Bash(python:*)'], 'scripts/build.sh', [], False),
        (['Bash(python scripts/*.py --check)'], 'scripts/lint.py', ['--check'], True),
        (['Bash(python scripts/*.py --check)'], 'scripts/lint.py', ['--fix'], False),
        (['Bash(git add:*)', 'Read', 'Grep'], 'scripts/fill.py', [], False),
        (['Read', 'get_forecast'], 'scripts/fill.py', [], False),
    ],
)
def test_bash_rules_map_to_script_runs(patterns: list[str], script: str, args: list[str], approved: bool) -> None:
    run = ScriptCall(INTERPRETERS.get(PurePosixPath(script).suffix, ''), script, tuple(args))
    assert Preapproval(tuple(patterns)).approves_script(run) is approved


def test_tool_names_match_exactly_or_by_glob() -> None:
    rules = Preapproval(('get_forecast', 'github_*', 'Bash(python:*)'))
    assert rules.approves_tool('get_forecast')
    assert rules.approves_tool('github_create_issue')
    assert not rules.approves_tool('get_forecasts')
    assert not rules.approves_tool('Bash')


def forecast_skill(allowed: str | None) -> Skill[Any]:
    """A skill whose one tool needs approval (`requires_approval=True`), pre-approved by `allowed`."""
    tools = FunctionToolset[Any](id='forecast-tools')

    @tools.tool_plain(requires_approval=True)
    def get_forecast(city: str) -> str:
        """The forecast for a city."""
        return f'Sunny in {city}.'

    metadata = {'allowed-tools': allowed} if allowed is not None else {}
    return Skill('forecast', 'Weather forecasts. Use when asked about the weather.', toolset=tools, metadata=metadata)


def forecast_run(skill: Skill[Any]) -> tuple[Script, Any]:
    model = Script([[call('load_skill', name='forecast')], [call('get_forecast', city='Oslo')]])
    agent = Agent(model.model(), capabilities=[Skills(skills=[skill])], output_type=OUTPUT)
    return model, agent.run_sync('weather?')


def test_a_tool_that_needs_approval_waits_for_the_application_without_allowed_tools() -> None:
    model, result = forecast_run(forecast_skill(None))
    assert isinstance(result.output, DeferredToolRequests)
    assert [approval.tool_name for approval in result.output.approvals] == ['get_forecast']
    assert tool_returns(result.all_messages(), 'get_forecast') == []
    assert len(model.requests) == 2  # the model never saw a result: the run stopped for approval


def test_a_loaded_skill_pre_approves_the_tools_it_lists() -> None:
    model, result = forecast_run(forecast_skill('get_forecast'))
    assert result.output == 'done'
    assert tool_returns(result.all_messages(), 'get_forecast') == ['Sunny in Oslo.']
    # On the wire: the model's next request carries the tool's return.
    assert tool_returns(model.requests[-1].messages, 'get_forecast') == ['Sunny in Oslo.']


def deploy_agent(*steps: list[Any]) -> tuple[Agent[None, Any], list[str]]:
    """An agent whose own `deploy` tool needs approval, and a `release` skill that pre-approves it."""
    deploy_calls: list[str] = []
    agent_tools = FunctionToolset[Any](id='agent-tools')

    @agent_tools.tool_plain(requires_approval=True)
    def deploy(service: str) -> str:
        """Deploy a service."""
        deploy_calls.append(service)
        return f'{service} deployed.'

    release = Skill(
        'release', 'Release a service. Use when shipping.', 'Deploy it.', metadata={'allowed-tools': ['deploy']}
    )
    model = Script(steps)
    agent = Agent(model.model(), toolsets=[agent_tools], capabilities=[Skills(skills=[release])], output_type=OUTPUT)
    return agent, deploy_calls


def test_a_skill_pre_approves_an_agent_tool_it_lists() -> None:
    """`allowed-tools` may name any tool of the agent, not only the skill's own."""
    agent, deploy_calls = deploy_agent(
        [call('deploy', service='api')], [call('load_skill', name='release')], [call('deploy', service='web')]
    )
    first = agent.run_sync('ship')
    assert isinstance(first.output, DeferredToolRequests)  # before the skill is loaded, a person decides
    assert deploy_calls == []
    resumed = agent.run_sync(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={first.output.approvals[0].tool_call_id: ToolDenied('no')}),
    )
    assert resumed.output == 'done'
    assert deploy_calls == ['web']  # the denied call never ran; the one made with the skill loaded did


def test_pre_approval_ends_when_the_skill_is_unloaded() -> None:
    agent, deploy_calls = deploy_agent(
        [call('load_skill', name='release')], [call('unload_skill', name='release')], [call('deploy', service='web')]
    )
    result = agent.run_sync('ship')
    assert isinstance(result.output, DeferredToolRequests)
    assert [approval.tool_name for approval in result.output.approvals] == ['deploy']
    assert deploy_calls == []


def script_skill(root: Path, allowed: str) -> Path:
    """A library holding the skill `pdf-kit`, whose `allowed-tools` are `allowed`, with two scripts."""
    write_skill(
        root / 'lib',
        'pdf-kit',
        'Run scripts/fill.py.',
        description='Fill PDF forms.',
        fields={'allowed-tools': allowed},
        files={
            'scripts/fill.py': 'import sys\nprint("filled", *sys.argv[1:])\n',
            'scripts/wipe.py': 'print("wiped")\n',
        },
    )
    return root / 'lib'


def script_agent(root: Path, *steps: list[Any], approval: bool = True) -> tuple[Script, Agent[None, Any]]:
    capability = Skills(script_skill(root, 'Bash(python scripts/fill.py:*)'), scripts=True, script_approval=approval)
    model = Script([[call('load_skill', name='pdf-kit')], *steps])
    (root / 'work').mkdir()
    return model, Agent(model.model(), capabilities=[LocalWorkspace(root / 'work'), capability], output_type=OUTPUT)


def run(script: str, *args: str) -> list[Any]:
    return [call('run_skill_script', name='pdf-kit', script=script, args=list(args))]


def test_a_pre_approved_script_runs_and_another_waits_with_its_command_line(tmp_path: Path) -> None:
    model, agent = script_agent(tmp_path, run('scripts/fill.py', 'form.pdf'), run('scripts/wipe.py', '--all'))
    result = agent.run_sync('fill the form')
    assert tool_returns(result.all_messages(), 'run_skill_script')[0].startswith('scripts/fill.py exited with code 0')
    assert 'filled form.pdf' in tool_returns(model.requests[2].messages, 'run_skill_script')[0]
    assert isinstance(result.output, DeferredToolRequests)
    [waiting] = result.output.approvals
    assert waiting.tool_name == 'run_skill_script'
    assert result.output.metadata[waiting.tool_call_id] == {
        'skill': 'pdf-kit',
        'command': 'python scripts/wipe.py --all',
    }

    approved = agent.run_sync(
        message_history=result.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={waiting.tool_call_id: True}),
    )
    assert approved.output == 'done'
    assert 'wiped' in tool_returns(approved.all_messages(), 'run_skill_script')[-1]


def test_without_script_approval_every_script_runs_as_before(tmp_path: Path) -> None:
    _, agent = script_agent(tmp_path, run('scripts/wipe.py'), approval=False)
    result = agent.run_sync('wipe')
    assert result.output == 'done'
    assert 'wiped' in tool_returns(result.all_messages(), 'run_skill_script')[0]


def test_a_script_run_in_the_same_response_as_its_load_still_waits_for_approval(tmp_path: Path) -> None:
    # The decision is made on the state the call runs under: the skill is loaded by then, and its allowed-tools
    # pre-approve only fill.py, so wipe.py waits (it used to run: the check saw the skill not loaded yet).
    capability = Skills(script_skill(tmp_path, 'Bash(python scripts/fill.py:*)'), scripts=True, script_approval=True)
    (tmp_path / 'work').mkdir()
    model = Script([[call('load_skill', name='pdf-kit'), *run('scripts/wipe.py'), *run('scripts/fill.py', 'a.pdf')]])
    agent = Agent(model.model(), capabilities=[LocalWorkspace(tmp_path / 'work'), capability], output_type=OUTPUT)
    result = agent.run_sync('wipe and fill')
    assert isinstance(result.output, DeferredToolRequests)
    assert [result.output.metadata[waiting.tool_call_id]['command'] for waiting in result.output.approvals] == [
        'python scripts/wipe.py'
    ]
    assert tool_returns(result.all_messages(), 'run_skill_script') == [
        'scripts/fill.py exited with code 0.\nOutput:\nfilled a.pdf'
    ]
    case("The model's calls", 'load_skill and run_skill_script in one response', 'the script still waits for approval')


def test_a_file_named_like_a_program_is_not_pre_approved_as_that_program(tmp_path: Path) -> None:
    library = script_skill(tmp_path, 'Bash(python scripts/fill.py:*)')
    (library / 'pdf-kit' / 'python').write_text('#!/bin/bash\necho "not python at all"\n', encoding='utf-8')
    capability = Skills(library, scripts=True, script_approval=True)
    (tmp_path / 'work').mkdir()
    model = Script([[call('load_skill', name='pdf-kit')], run('python', 'scripts/fill.py')])
    agent = Agent(model.model(), capabilities=[LocalWorkspace(tmp_path / 'work'), capability], output_type=OUTPUT)
    result = agent.run_sync('run it')
    assert isinstance(result.output, DeferredToolRequests)
    [waiting] = result.output.approvals
    assert result.output.metadata[waiting.tool_call_id]['command'] == 'bash python scripts/fill.py'
    case(
        "The model's calls", 'a skill file named `python`, against `Bash(python scripts/fill.py:*)`', 'not pre-approved'
    )


def test_script_approval_is_checked_as_an_option() -> None:
    with pytest.raises(Exception, match='`script_approval` option must be true, false or null'):
        Skills(script_approval='yes')  # type: ignore[arg-type]
