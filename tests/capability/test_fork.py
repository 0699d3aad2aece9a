"""Fork: a `context: fork` skill runs as a sub-agent whose instructions are the skill's and whose prompt is its
arguments; it has the parent's tools (all, or those its `allowed-tools` names) but no meta-tools; the parent sees only
its final output, pays its usage, and goes on when the fork cannot run."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext, UsageLimitExceeded
from pydantic_ai.capabilities import HandleDeferredToolCalls, Toolset
from pydantic_ai.messages import ModelMessage, ModelRequest, TextPart, ToolReturnPart, UserPromptPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.usage import UsageLimits

from skillshelf import Skill, Skills, SkillWarning
from skillshelf.capability.fork import DEFAULT_PROMPT
from skillshelf.capability.skills import loaded_skills

from reliability.ledger import case
from scripted_model import FORK_PREAMBLE, Script, call, parent_and_fork, tool_returns
from skill_files import write_skill

LOAD_TIDES = [call('load_skill', name='deep-research', arguments='tides')]
ANSWER = 'Tides follow the moon (FACT-123).'
lookups: list[str] = []
deployed: list[str] = []


def research_skill(allowed: str = 'fetch_page') -> Skill[Any]:
    """A forked Python skill with its own tool; `allowed` is its `allowed-tools`."""
    skill = Skill(
        'deep-research',
        'Research a topic in depth. Use when asked to investigate something.',
        'Investigate $ARGUMENTS using lookup_fact, then summarise in one line.',
        metadata={'context': 'fork', **({'allowed-tools': allowed} if allowed else {})},
    )

    @skill.tool_plain
    def lookup_fact(topic: str) -> str:
        """Look a fact up."""
        lookups.append(topic)
        return f'{topic}: FACT-123'

    return skill


def fetch_page(url: str) -> str:
    """Fetch a web page."""
    return f'page {url}'


def delete_everything() -> str:
    """Delete everything."""
    return 'deleted'


def deploy(target: str) -> str:
    """Deploy to a target."""
    deployed.append(target)
    return f'deployed to {target}'


def agent(parent: Script, fork: Script, *skills: Skill[Any], capabilities: Sequence[Any] = ()) -> Agent[None, str]:
    """An agent with tools of its own and `skills` (default: `research_skill()`), played by `parent` and `fork`."""
    return Agent(
        parent_and_fork(parent, fork),
        tools=[fetch_page, delete_everything],
        capabilities=[Skills(skills=list(skills) or [research_skill()]), *capabilities],
    )


def researching() -> Script:
    """The sub-agent: looks the fact up, then answers."""
    return Script([[call('lookup_fact', topic='tides')], [TextPart(ANSWER)]])


def prompt_of(messages: list[ModelMessage]) -> Any:
    """The user prompt a run's first request carried."""
    first = messages[0]
    assert isinstance(first, ModelRequest)
    return next(part.content for part in first.parts if isinstance(part, UserPromptPart))


def returns_in(script: Script, tool: str) -> list[Any]:
    return tool_returns(script.requests[-1].messages, tool)


def test_a_forked_skill_runs_as_a_sub_agent_and_returns_only_its_output() -> None:
    lookups.clear()
    parent = Script([LOAD_TIDES])
    fork = Script([[call('lookup_fact', topic='tides')], [call('fetch_page', url='x')], [TextPart(ANSWER)]])
    result = agent(parent, fork).run_sync('Look into tides for me')

    [reply] = tool_returns(result.all_messages(), 'load_skill')
    assert reply == f"The skill 'deep-research' ran in a sub-agent. Its result:\n\n{ANSWER}"
    assert lookups == ['tides']
    # Isolation: the parent never sees the sub-agent's tool calls, and never gets the skill's tools.
    assert 'lookup_fact' not in repr(result.all_messages())
    assert loaded_skills(result.all_messages()) == []
    assert returns_in(fork, 'fetch_page') == ['page x']


def test_the_skills_instructions_are_the_sub_agents_instructions_and_its_arguments_the_prompt(tmp_path: Path) -> None:
    write_skill(tmp_path, 'summarise', 'Summarise $0 for $1.\n\nKeep it short.', fields={'context': 'fork'})
    parent = Script([[call('load_skill', name='summarise', arguments='README.md "new users"')]])
    fork = Script([[TextPart('Summary.')]])
    Agent(parent_and_fork(parent, fork), capabilities=[Skills(tmp_path)]).run_sync('Summarise the readme')

    [request] = fork.requests
    instructions = request.instructions or ''
    assert instructions.startswith(FORK_PREAMBLE)
    # The skill's body, its placeholders filled, is the sub-agent's instructions; the arguments are its prompt,
    # and are not appended to the instructions as well.
    assert instructions.endswith('Summarise README.md for new users.\n\nKeep it short.')
    assert 'ARGUMENTS:' not in instructions
    assert prompt_of(request.messages) == 'README.md "new users"'
    assert 'Keep it short.' not in repr(request.messages[0].parts)  # the instructions are not in the prompt


@pytest.mark.parametrize(('arguments', 'prompt'), [('', DEFAULT_PROMPT), ('the March notes', 'the March notes')])
def test_arguments_no_placeholder_takes_are_the_prompt_alone_and_none_get_a_default(
    tmp_path: Path, arguments: str, prompt: str
) -> None:
    write_skill(tmp_path, 'tidy', 'Tidy the notes.', fields={'context': 'fork'})
    parent = Script([[call('load_skill', name='tidy', arguments=arguments)]])
    fork = Script([[TextPart('Tidied.')]])
    Agent(parent_and_fork(parent, fork), capabilities=[Skills(tmp_path)]).run_sync('Tidy up')

    [request] = fork.requests
    assert prompt_of(request.messages) == prompt
    assert (request.instructions or '').endswith('\n\nTidy the notes.')  # nothing appended


def test_the_sub_agents_requests_count_toward_the_parent_runs_usage_and_limits() -> None:
    result = agent(Script([LOAD_TIDES]), (researching())).run_sync('Look into tides for me')
    assert result.usage.requests == 4  # two of the parent's, two of the sub-agent's

    with pytest.raises(UsageLimitExceeded):
        agent(Script([LOAD_TIDES]), (researching())).run_sync(
            'Look into tides for me', usage_limits=UsageLimits(request_limit=3)
        )


def test_a_user_can_invoke_a_forked_skill(tmp_path: Path) -> None:
    write_skill(tmp_path, 'summarise-repo', 'Investigate $0 briefly.', fields={'context': 'fork'})
    parent, fork = Script([]), Script([[TextPart('It is a skills library.')]])
    result = Agent(parent_and_fork(parent, fork), capabilities=[Skills(tmp_path)]).run_sync(
        '/summarise-repo skillshelf'
    )

    [reply] = tool_returns(result.all_messages(), 'load_skill')
    assert reply.endswith('It is a skills library.')
    [request] = fork.requests
    assert prompt_of(request.messages) == 'skillshelf'
    assert (request.instructions or '').endswith('Investigate skillshelf briefly.')
    assert request.tools == []  # a folder skill without tools, in an agent without tools: none


def test_without_allowed_tools_the_sub_agent_gets_every_parent_tool_but_the_meta_tools(tmp_path: Path) -> None:
    weather = FunctionToolset[None]()

    @weather.tool_plain
    def lookup_weather(city: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """The weather in a city."""
        return f'{city}: sunny'

    other = Skills(skills=[Skill('packing', 'What to pack.', 'Pack light.')], id='other').prefix_tools('kit')
    parent, fork = Script([LOAD_TIDES]), Script([[call('lookup_weather', city='Lisbon')], [TextPart('Sunny.')]])
    result = agent(parent, fork, research_skill(allowed=''), capabilities=[Toolset(weather), other]).run_sync('Go')

    # The agent's own tools, a tool another capability brings, and the skill's own: no meta-tool of either `Skills`.
    assert fork.requests[0].tools == ['delete_everything', 'fetch_page', 'lookup_fact', 'lookup_weather']
    assert 'load_skill' in parent.requests[0].tools
    assert returns_in(fork, 'lookup_weather') == ['Lisbon: sunny']
    assert result.output == 'done'


def test_allowed_tools_gives_the_sub_agent_only_the_parent_tools_it_names() -> None:
    parent, fork = Script([LOAD_TIDES]), Script([[call('fetch_page', url='tides.example')], [TextPart('Done.')]])
    agent(parent, fork, research_skill(allowed='fetch_*')).run_sync('Look into tides for me')

    assert fork.requests[0].tools == ['fetch_page', 'lookup_fact']  # not delete_everything, never a meta-tool
    assert returns_in(fork, 'fetch_page') == ['page tides.example']


def test_one_response_may_fork_the_same_skill_twice() -> None:
    lookups.clear()
    parent = Script([[call('load_skill', name='deep-research', arguments=topic) for topic in ('tides', 'waves')]])
    fork = Script([[TextPart('One.')], [TextPart('Two.')]])
    result = agent(parent, fork).run_sync('Research both')

    replies = tool_returns(result.all_messages(), 'load_skill')
    assert [reply.split('\n')[0] for reply in replies] == [
        "The skill 'deep-research' ran in a sub-agent. Its result:"
    ] * 2
    assert sorted(prompt_of(request.messages) for request in fork.requests) == ['tides', 'waves']


def test_the_sub_agent_reads_its_own_skills_files_and_only_those(tmp_path: Path) -> None:
    write_skill(
        tmp_path, 'style', 'Apply the style guide.', fields={'context': 'fork'}, files={'guide.md': 'Be brief.'}
    )
    write_skill(tmp_path, 'secrets', 'Private.', files={'keys.md': 'hunter2'})
    parent = Script([[call('load_skill', name='style')]])
    fork = Script(
        [
            [
                call('read_skill_resource', name='style', path='guide.md'),
                call('read_skill_resource', name='secrets', path='keys.md'),
            ],
            [TextPart('Brief.')],
        ]
    )
    Agent(parent_and_fork(parent, fork), capabilities=[Skills(tmp_path)]).run_sync('Style this')

    assert fork.requests[0].tools == ['read_skill_resource']
    assert "read them with `read_skill_resource`, name 'style'): guide.md" in (fork.requests[0].instructions or '')
    good, other = returns_in(fork, 'read_skill_resource')
    assert good == 'Be brief.'
    assert 'hunter2' not in other
    assert other.startswith("Only the skill 'style' runs here, so only its files are available")


def test_a_fork_whose_allowed_tools_names_an_approval_required_tool_is_refused_not_run(tmp_path: Path) -> None:
    deployed.clear()
    write_skill(tmp_path, 'ship', 'Deploy to $0.', fields={'context': 'fork', 'allowed-tools': 'deploy'})
    parent = Script([[call('load_skill', name='ship', arguments='production')]])
    fork = Script([[call('deploy', target='production')], [TextPart('Could not deploy: it needs approval.')]])
    shipper = Agent(parent_and_fork(parent, fork), capabilities=[Skills(tmp_path)])
    shipper.tool_plain(requires_approval=True)(deploy)
    result = shipper.run_sync('Ship it')

    assert deployed == []  # never ran: a folder skill's allowed-tools approves nothing, and no one else was asked
    assert fork.requests[0].tools == ['deploy']
    [refusal] = returns_in(fork, 'deploy')
    assert refusal.startswith("Not run: this call needs approval, and no one could give it: the skill 'ship' runs as")
    assert result.output == 'done'  # the parent run went on, with the sub-agent's account
    [reply] = tool_returns(result.all_messages(), 'load_skill')
    assert reply.endswith('Could not deploy: it needs approval.')
    case(
        'Runs',
        "a forked skill's allowed-tools names a tool that needs approval",
        f'not run; the sub-agent is told: {refusal}',
    )


def test_a_forks_call_that_needs_approval_goes_to_the_applications_handler(tmp_path: Path) -> None:
    deployed.clear()
    asked: list[dict[str, Any]] = []

    def approve(ctx: RunContext[Any], requests: DeferredToolRequests) -> DeferredToolResults:
        asked.extend(requests.metadata.values())
        return requests.build_results(approve_all=True)

    write_skill(tmp_path, 'ship', 'Deploy to $0.', fields={'context': 'fork'})
    parent = Script([[call('load_skill', name='ship', arguments='staging')]])
    fork = Script([[call('deploy', target='staging')], [TextPart('Deployed.')]])
    shipper = Agent(
        parent_and_fork(parent, fork), capabilities=[Skills(tmp_path), HandleDeferredToolCalls(handler=approve)]
    )
    shipper.tool_plain(requires_approval=True)(deploy)
    shipper.run_sync('Ship it')

    assert deployed == ['staging']
    assert asked == [{'skillshelf_fork': 'ship'}]  # the handler learns which forked skill asks
    assert returns_in(fork, 'deploy') == ['deployed to staging']


def test_a_trusted_forks_allowed_tools_preapproves_as_a_loaded_skills_would() -> None:
    deployed.clear()
    skill = research_skill(allowed='deploy')
    parent, fork = Script([LOAD_TIDES]), Script([[call('deploy', target='docs')], [TextPart('Deployed.')]])
    shipper = Agent(parent_and_fork(parent, fork), capabilities=[Skills(skills=[skill])])
    shipper.tool_plain(requires_approval=True)(deploy)
    shipper.run_sync('Ship it')

    assert deployed == ['docs']  # a Python skill is trusted: its allowed-tools pre-approves the agent's tool


@pytest.mark.parametrize('model', ['nowhere:model-9', 'openai:gpt-5.2'])  # unknown; a provider without its key
def test_a_fork_model_that_cannot_be_built_is_explained_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    monkeypatch.delenv('OPENAI_API_KEY', raising=False)
    write_skill(tmp_path, 'review', 'Review the change.', fields={'context': 'fork', 'model': model})
    parent, fork = Script([[call('load_skill', name='review')]]), Script([])
    with pytest.warns(SkillWarning, match=f"skill 'review': its sub-agent model '{model}' cannot be used"):
        result = Agent(parent_and_fork(parent, fork), capabilities=[Skills(tmp_path)]).run_sync('Review it')

    [reply] = tool_returns(result.all_messages(), 'load_skill')
    # pydantic-ai's reason (its first sentence) in brackets, in whatever words it uses
    assert re.fullmatch(
        f"The skill 'review' runs as a sub-agent on the model '{model}', which cannot be used here \\([^\\n]+\\)\\. "
        'It did not run. Do the task without it, or tell the user the skill needs that model set up.',
        reply,
    )
    assert fork.requests == []
    assert result.output == 'done'
    case('Runs', f'a forked skill names the model {model!r}, which cannot be built', f'the parent is told: {reply}')


def test_a_sub_agent_that_stops_on_the_models_misbehaviour_is_explained(tmp_path: Path) -> None:
    write_skill(tmp_path, 'loop', 'Call tools.', fields={'context': 'fork'})
    parent = Script([[call('load_skill', name='loop')]])
    fork = Script([[call('no_such_tool')] for _ in range(5)])
    result = Agent(parent_and_fork(parent, fork), capabilities=[Skills(tmp_path)]).run_sync('Go')

    [reply] = tool_returns(result.all_messages(), 'load_skill')
    assert reply.startswith(
        "The skill 'loop' ran in a sub-agent, which stopped before it finished: its model misbehaved"
    )
    assert result.output == 'done'


def test_the_parents_meta_tool_call_record_shows_no_load() -> None:
    result = agent(Script([LOAD_TIDES]), (researching())).run_sync('Look into tides for me')
    [returned] = [
        part
        for message in result.all_messages()
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    assert returned.metadata is None  # nothing recorded: a fork is never loaded, in this run or the next
