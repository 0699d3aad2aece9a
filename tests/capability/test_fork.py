"""Fork: a `context: fork` skill runs as a sub-agent; the parent sees only its final output, and pays its usage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

from skillshelf import Skill, Skills
from skillshelf.capability.skills import loaded_skills

from scripted_model import call, tool_returns

lookups: list[str] = []


def research_skill() -> Skill[Any]:
    """A forked Python skill with its own tool, pre-approving the parent's `fetch_page`."""
    skill = Skill(
        'deep-research',
        'Research a topic in depth. Use when asked to investigate something.',
        'Investigate $ARGUMENTS using lookup_fact, then summarise in one line.',
        metadata={'context': 'fork', 'allowed-tools': 'fetch_page'},
    )

    @skill.tool_plain
    def lookup_fact(topic: str) -> str:
        """Look a fact up."""
        lookups.append(topic)
        return f'{topic}: FACT-123'

    return skill


class Models:
    """One `FunctionModel` playing both the parent and the sub-agent, telling them apart by their first prompt."""

    def __init__(self, *parent_steps: ModelResponse) -> None:
        self.parent_steps = parent_steps or (
            ModelResponse(parts=[call('load_skill', name='deep-research', arguments='tides')]),
        )
        self.sub_tools: list[list[str]] = []
        self.parent_requests: list[list[ModelMessage]] = []

    def model(self) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            first = messages[0]
            prompt = (
                next(p.content for p in first.parts if isinstance(p, UserPromptPart))
                if isinstance(first, ModelRequest)
                else ''
            )
            if str(prompt).startswith('Investigate'):  # the sub-agent
                tools = sorted(tool.name for tool in info.function_tools)
                self.sub_tools.append(tools)
                if len(messages) == 1 and 'lookup_fact' in tools:
                    return ModelResponse(parts=[ToolCallPart('lookup_fact', {'topic': 'tides'})])
                return ModelResponse(parts=[TextPart('Tides follow the moon (FACT-123).')])
            self.parent_requests.append(list(messages))
            step = len(self.parent_requests) - 1
            return self.parent_steps[step] if step < len(self.parent_steps) else ModelResponse(parts=[TextPart('done')])

        return FunctionModel(respond)


def agent(models: Models) -> Agent[None, str]:
    def fetch_page(url: str) -> str:
        """Fetch a web page."""
        return f'page {url}'

    def delete_everything() -> str:
        """Delete everything."""
        return 'deleted'

    return Agent(
        models.model(), tools=[fetch_page, delete_everything], capabilities=[Skills(skills=[research_skill()])]
    )


def test_a_forked_skill_runs_as_a_sub_agent_and_returns_only_its_output() -> None:
    lookups.clear()
    models = Models()
    result = agent(models).run_sync('Look into tides for me')

    [reply] = tool_returns(result.all_messages(), 'load_skill')
    assert reply == "The skill 'deep-research' ran in a sub-agent. Its result:\n\nTides follow the moon (FACT-123)."
    assert lookups == ['tides']
    # Isolation: the parent never sees the sub-agent's tool calls, and never gets the skill's tools.
    assert tool_returns(result.all_messages(), 'lookup_fact') == []
    assert 'lookup_fact' not in repr(result.all_messages())
    assert loaded_skills(result.all_messages()) == []
    # The sub-agent has the skill's tool and the parent tool its allowed-tools lists, and no meta-tools.
    assert models.sub_tools[0] == ['fetch_page', 'lookup_fact']


def test_the_sub_agents_requests_count_toward_the_parent_runs_usage_and_limits() -> None:
    result = agent(Models()).run_sync('Look into tides for me')
    assert result.usage.requests == 4  # two of the parent's, two of the sub-agent's

    with pytest.raises(UsageLimitExceeded):
        agent(Models()).run_sync('Look into tides for me', usage_limits=UsageLimits(request_limit=3))


def test_a_user_can_invoke_a_forked_skill(tmp_path: Path) -> None:
    folder = tmp_path / 'summarise-repo'
    folder.mkdir()
    (folder / 'SKILL.md').write_text(
        '---\nname: summarise-repo\ndescription: Summarise a repository.\ncontext: fork\n---\nInvestigate $0 briefly.\n',
        encoding='utf-8',
    )
    models = Models(ModelResponse(parts=[TextPart('done')]))
    result = Agent(models.model(), capabilities=[Skills(tmp_path)]).run_sync('/summarise-repo skillshelf')
    [reply] = tool_returns(result.all_messages(), 'load_skill')
    assert reply.endswith('Tides follow the moon (FACT-123).')
    assert models.sub_tools[0] == []  # a folder skill without tools: the sub-agent has none
