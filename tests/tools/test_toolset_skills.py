"""Skills whose tools come from any toolset: an MCP server over stdio (started only in runs that load the skill),
and prefixed, renamed, combined or filtered toolsets."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import UserError
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponsePart, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import CombinedToolset, FunctionToolset

from skillshelf import Skill, SkillConflictError, SkillError, Skills

from repo_paths import SUPPORT
from scripted_model import SMALL, Script, call, tool_returns

SERVER = SUPPORT / 'mcp_dice_server.py'
DICE_TOOLS = ['flip_coin', 'roll_die']


def dice_skill(marker: Path, name: str = 'dice') -> Skill[Any]:
    """A skill whose tools are the MCP server's; the server notes its start and stop in `marker`."""
    transport = StdioTransport(command=sys.executable, args=[str(SERVER), str(marker)], keep_alive=False)
    return Skill(name, 'Rolls dice and flips coins for games.', 'Roll with `roll_die`.', toolset=MCPToolset(transport))


SPEC_FOLDER = Path(tempfile.mkdtemp(prefix='skillshelf-mcp-spec-'))
spec_dice = dice_skill(SPEC_FOLDER / 'events')
"""Named by import path in the agent-spec test."""


@pytest.fixture(scope='module', autouse=True)
def remove_spec_folder() -> Iterator[None]:
    yield
    shutil.rmtree(SPEC_FOLDER, ignore_errors=True)


def events(marker: Path) -> list[str]:
    """What the server noted so far: nothing if it never started."""
    return marker.read_text(encoding='utf-8').split() if marker.exists() else []


@dataclass
class WatchedScript:
    """A scripted model that records, at every request, the tools it was offered and what the server noted."""

    marker: Path
    steps: Sequence[Sequence[ModelResponsePart]]
    tools: list[list[str]] = field(default_factory=list[list[str]])
    server: list[list[str]] = field(default_factory=list[list[str]])

    def model(self) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.tools.append(sorted(tool.name for tool in info.function_tools))
            self.server.append(events(self.marker))
            step = len(self.tools) - 1
            return ModelResponse(parts=list(self.steps[step]) if step < len(self.steps) else [TextPart('done')])

        return FunctionModel(respond)


def geo_tools() -> FunctionToolset[Any]:
    toolset = FunctionToolset[Any]()

    @toolset.tool_plain
    def distance(a: str, b: str) -> str:
        return f'{a}-{b}: 500 km'

    @toolset.tool_plain
    def elevation(place: str) -> str:
        return f'{place}: 1,000 m'

    return toolset


def only_distance(ctx: RunContext[Any], tool_def: ToolDefinition) -> bool:
    return tool_def.name == 'distance'


def test_an_mcp_skill_that_is_never_loaded_never_starts_its_server(tmp_path: Path) -> None:
    marker = tmp_path / 'events'
    geo = Skill('geo', 'Distances between places.', toolset=geo_tools())
    script = WatchedScript(marker, [[call('load_skill', name='geo')], [call('distance', a='Oslo', b='Rome')]])
    messages = (
        Agent(script.model(), capabilities=[Skills(skills=[dice_skill(marker), geo])]).run_sync('go').all_messages()
    )

    assert tool_returns(messages, 'distance') == ['Oslo-Rome: 500 km']
    assert script.tools[1] == sorted([*SMALL, 'distance', 'elevation'])
    assert not marker.exists()


def test_an_mcp_skill_starts_on_load_serves_its_tools_and_stops_at_the_end_of_the_run(tmp_path: Path) -> None:
    """After `unload_skill` its tools stay listed (refused), so the server keeps running until the run ends."""
    marker = tmp_path / 'events'
    script = WatchedScript(
        marker,
        [[call('load_skill', name='dice')], [call('roll_die', sides=20)], [call('unload_skill', name='dice')]],
    )
    messages = Agent(script.model(), capabilities=[Skills(skills=[dice_skill(marker)])]).run_sync('roll').all_messages()

    assert script.tools == [SMALL, *[sorted([*SMALL, *DICE_TOOLS])] * 3]
    assert script.server == [[], ['started'], ['started'], ['started']]
    assert events(marker) == ['started', 'stopped']
    [loaded] = tool_returns(messages, 'load_skill')
    assert 'Its tools start now and are listed with your other tools from your next response.' in loaded
    assert tool_returns(messages, 'roll_die') == [20]


def test_a_continued_conversation_starts_the_server_of_a_skill_loaded_earlier(tmp_path: Path) -> None:
    marker = tmp_path / 'events'
    agent = Agent(capabilities=[Skills(skills=[dice_skill(marker)])])
    first = WatchedScript(marker, [[call('load_skill', name='dice')]])
    history = agent.run_sync('load dice', model=first.model()).all_messages()
    second = WatchedScript(marker, [[call('flip_coin')]])
    messages = agent.run_sync('flip', model=second.model(), message_history=history).new_messages()

    assert tool_returns(messages, 'flip_coin') == ['heads']
    assert second.tools[0] == sorted([*SMALL, *DICE_TOOLS])
    assert events(marker) == ['started', 'stopped', 'started', 'stopped']


def test_an_agent_spec_declares_an_mcp_skill_by_import_path() -> None:
    marker = SPEC_FOLDER / 'events'
    spec = {'model': 'test', 'capabilities': [{'Skills': {'skills': ['test_toolset_skills:spec_dice']}}]}
    idle = WatchedScript(marker, [[TextPart('no dice needed')]])
    Agent.from_spec(spec, custom_capability_types=[Skills], model=idle.model()).run_sync('hello')
    assert idle.tools == [SMALL]
    assert not marker.exists()

    rolling = WatchedScript(marker, [[call('load_skill', name='dice')], [call('roll_die', sides=6)]])
    agent = Agent.from_spec(spec, custom_capability_types=[Skills], model=rolling.model())
    assert tool_returns(agent.run_sync('roll').all_messages(), 'roll_die') == [6]
    assert events(marker) == ['started', 'stopped']


@pytest.mark.parametrize(
    ('toolset', 'names'),
    [
        (geo_tools().prefixed('geo'), ['geo_distance', 'geo_elevation']),
        (geo_tools().renamed({'how_far': 'distance'}), ['how_far', 'elevation']),
        (
            CombinedToolset([geo_tools().prefixed('a'), geo_tools().prefixed('b')]),
            ['a_distance', 'a_elevation', 'b_distance', 'b_elevation'],
        ),
        (geo_tools().with_metadata(source='atlas').approval_required(), ['distance', 'elevation']),
    ],
)
def test_wrapped_and_combined_function_toolsets_name_their_tools_before_running(
    toolset: Any, names: list[str], make_script: Callable[..., Script]
) -> None:
    geo = Skill('geo', 'Distances between places.', toolset=toolset)
    assert (geo.tool_names, geo.tools_known) == (names, True)

    script = make_script([call('load_skill', name='geo')], [TextPart('done')])
    [loaded] = tool_returns(
        Agent(script.model(), capabilities=[Skills(skills=[geo])]).run_sync('go').all_messages(), 'load_skill'
    )
    assert f'Tools available from your next response: {", ".join(names)}.' in loaded
    assert script.requests[1].tools == sorted([*SMALL, *names])


def test_a_prefixed_skill_toolset_is_called_by_its_prefixed_names(make_script: Callable[..., Script]) -> None:
    geo = Skill('geo', 'Distances between places.', toolset=geo_tools().prefixed('geo'))
    script = make_script([call('load_skill', name='geo')], [call('geo_distance', a='Oslo', b='Bergen')])
    messages = Agent(script.model(), capabilities=[Skills(skills=[geo])]).run_sync('go').all_messages()
    assert tool_returns(messages, 'geo_distance') == ['Oslo-Bergen: 500 km']


def test_a_filtered_toolset_lists_its_tools_once_the_skill_is_loaded(make_script: Callable[..., Script]) -> None:
    geo = Skill('geo', 'Distances between places.', toolset=geo_tools().filtered(only_distance))
    assert (geo.tool_names, geo.tools_known) == ([], False)

    script = make_script([call('load_skill', name='geo')], [call('distance', a='Oslo', b='Bergen')])
    messages = Agent(script.model(), capabilities=[Skills(skills=[geo])]).run_sync('go').all_messages()
    assert script.requests[0].tools == SMALL
    assert script.requests[1].tools == sorted([*SMALL, 'distance'])
    assert tool_returns(messages, 'distance') == ['Oslo-Bergen: 500 km']


def test_known_tool_names_of_wrapped_toolsets_are_checked_for_conflicts() -> None:
    first = Skill('first', 'The first skill.', toolset=geo_tools().prefixed('geo'))
    second = Skill('second', 'The second skill.', toolset=geo_tools().renamed({'geo_distance': 'distance'}))
    with pytest.raises(SkillConflictError, match="skills 'first' and 'second' both have a tool named 'geo_distance'"):
        Skills(skills=[first, second])


def test_an_mcp_tool_name_clash_is_found_only_when_both_skills_are_loaded(tmp_path: Path) -> None:
    marker = tmp_path / 'events'
    die = Skill('die', 'Rolls one die.')
    die.tool_plain(name='roll_die')(lambda sides: sides)
    capability = Skills(skills=[dice_skill(marker), die])  # the server's names are unknown: nothing is started
    assert not marker.exists()

    script = WatchedScript(marker, [[call('load_skill', name='dice'), call('load_skill', name='die')]])
    with pytest.raises(UserError, match=r"conflicts with existing tool .*'roll_die'"):
        Agent(script.model(), capabilities=[capability]).run_sync('roll')
    assert events(marker) == ['started', 'stopped']


def test_tools_cannot_be_added_to_a_skill_whose_toolset_is_not_a_function_toolset(tmp_path: Path) -> None:
    dice = dice_skill(tmp_path / 'events')
    with pytest.raises(
        SkillError,
        match=r"skill 'dice' takes its tools from the toolset it was given \(MCPToolset\): add tools to a FunctionToolset",
    ):
        dice.tool_plain(lambda: 'six')
    with pytest.raises(SkillError, match=r'the toolset it was given \(PrefixedToolset\)'):
        Skill('geo', 'Distances.', tools=[lambda: 'far'], toolset=geo_tools().prefixed('geo'))
