"""A skill's tool server that is down never ends a run: one whose command fails, one that exits at once, one killed in
the middle of a run, and one that is gone in a later turn after the skill was unloaded. The model is told the skill's
tools are unavailable, the application gets a `SkillWarning`, and the other skills keep working.

Each case runs the real MCP server of the toolset tests (`mcp_dice_server.py`, over stdio) and kills it, stops it from
starting, or names a command that does not exist. Before the fix each of these runs raised (`RuntimeError: Client
failed to connect`, `MCPError: Connection closed`, or `UnexpectedModelBehavior` once "Connection closed" retries ran
out).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    TextPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import Skill, Skills, SkillWarning

from reliability.ledger import case
from repo_paths import SUPPORT
from scripted_model import call, tool_returns
from skill_fixtures import weather

AREA = 'Runs'
SERVER = SUPPORT / 'mcp_dice_server.py'
UNAVAILABLE = "The tools of the skill 'dice' are unavailable in this run"


def dice(marker: Path, command: str = sys.executable, args: Sequence[str] | None = None) -> Skill[Any]:
    arguments = list(args) if args is not None else [str(SERVER), str(marker)]
    transport = StdioTransport(command=command, args=arguments, keep_alive=False)
    return Skill(
        'dice', 'Rolls dice and flips coins for games.', 'Roll with `roll_die`.', toolset=MCPToolset(transport)
    )


Step = Sequence[ModelResponsePart] | Callable[[], None]


@dataclass
class Turns:
    """A scripted model whose steps are responses, or actions (kill the server) taken before the next response; it
    records the tools and instructions of every request."""

    steps: Sequence[Step]
    tools: list[list[str]] = field(default_factory=list[list[str]])
    instructions: list[str] = field(default_factory=list[str])
    _next: int = 0

    def model(self) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.tools.append(sorted(tool.name for tool in info.function_tools))
            self.instructions.append(info.instructions or '')
            while self._next < len(self.steps):
                step = self.steps[self._next]
                self._next += 1
                if callable(step):
                    step()
                    continue
                return ModelResponse(parts=list(step))
            return ModelResponse(parts=[TextPart('done')])

        return FunctionModel(respond)


def kill(marker: Path) -> Callable[[], None]:
    """An action that kills the running server (its process id is beside `marker`)."""
    return lambda: os.kill(int(marker.with_suffix('.pid').read_text()), signal.SIGKILL)


def replies(messages: Sequence[ModelMessage], tool: str) -> list[str]:
    """What the model was told in reply to each call of `tool`: a tool return or a retry prompt."""
    return [
        part.model_response_str() if isinstance(part, ToolReturnPart) else part.model_response()
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, (ToolReturnPart, RetryPromptPart)) and part.tool_name == tool
    ]


def play(
    capability: Skills[Any], steps: Sequence[Step], history: list[ModelMessage] | None = None
) -> tuple[Turns, list[ModelMessage]]:
    turns = Turns(steps)
    result = Agent(turns.model(), capabilities=[capability]).run_sync('play', message_history=history)
    return turns, result.all_messages()


@pytest.mark.parametrize(
    ('what', 'command', 'args'),
    [
        ('a command that does not exist', '/nonexistent/mcp-server', []),
        ('a server that exits at once', sys.executable, ['-c', 'import sys; sys.exit(3)']),
        ('a server that prints garbage and exits', sys.executable, ['-c', 'print("not json-rpc")']),
    ],
)
def test_a_server_that_does_not_start_leaves_the_run_and_other_skills_working(
    tmp_path: Path, what: str, command: str, args: list[str]
) -> None:
    capability = Skills(skills=[dice(tmp_path / 'events', command, args), weather])
    steps: list[Step] = [
        [call('load_skill', name='dice')],
        [call('roll_die', sides=6)],  # not listed: the model remembers it from somewhere
        [call('roll_die', sides=6)],  # twice: pydantic-ai would charge the second past its retry budget
        [call('load_skill', name='weather')],
        [call('get_forecast', city='Oslo')],
    ]
    with pytest.warns(
        SkillWarning, match=r"the tools of the skill 'dice' are unavailable in this run: its server did not start"
    ):
        turns, messages = play(capability, steps)

    assert tool_returns(messages, 'get_forecast') == ['Oslo: sunny, 21 °C, for the next 3 days']
    assert 'roll_die' not in turns.tools[1]
    assert UNAVAILABLE + ': its tool server did not start.' in turns.instructions[1]
    said = replies(messages, 'roll_die')
    assert len(said) == 2
    assert all("The tool 'roll_die' did not run. " + UNAVAILABLE in reply for reply in said)
    case(AREA, f'an MCP-backed skill loaded with {what}', said[0])


def test_a_server_killed_mid_run_is_reported_and_the_run_goes_on(tmp_path: Path) -> None:
    marker = tmp_path / 'events'
    capability = Skills(skills=[dice(marker), weather])
    steps: list[Step] = [
        [call('load_skill', name='dice')],
        [call('roll_die', sides=6)],
        kill(marker),
        [call('roll_die', sides=8)],
        [call('flip_coin')],
        [call('load_skill', name='weather')],
        [call('get_forecast', city='Oslo')],
        [call('roll_die', sides=4)],
    ]
    with pytest.warns(SkillWarning, match='its server stopped responding'):
        turns, messages = play(capability, steps)

    rolls = tool_returns(messages, 'roll_die')
    assert rolls[0] == 6
    assert (
        rolls[1:]
        == [
            "The tool 'roll_die' did not run. " + UNAVAILABLE + ': its tool server stopped responding. '
            'Carry on without them (its instructions still apply), or tell the user.'
        ]
        * 2
    )
    assert tool_returns(messages, 'flip_coin')[0].startswith("The tool 'flip_coin' did not run.")
    assert tool_returns(messages, 'get_forecast') == ['Oslo: sunny, 21 °C, for the next 3 days']
    assert 'roll_die' in turns.tools[-1]  # still listed, as before: the prompt cache holds
    assert UNAVAILABLE in turns.instructions[-1]
    case(AREA, 'an MCP server killed in the middle of a run that loaded its skill', rolls[1])


def test_a_server_down_in_a_later_turn_after_an_unload_ends_no_turn(tmp_path: Path) -> None:
    marker = tmp_path / 'events'
    capability = Skills(skills=[dice(marker), weather])
    _, history = play(
        capability,
        [[call('load_skill', name='dice')], [call('roll_die', sides=6)], [call('unload_skill', name='dice')]],
    )
    assert tool_returns(history, 'roll_die') == [6]

    marker.with_suffix('.down').touch()  # from now on the server exits at once
    with pytest.warns(SkillWarning, match='its server did not start'):
        turns, later = play(
            capability,
            [[call('roll_die', sides=6)], [call('load_skill', name='weather')], [call('get_forecast', city='Bergen')]],
            history,
        )
    assert tool_returns(later, 'get_forecast')[-1] == 'Bergen: sunny, 21 °C, for the next 3 days'
    [refused] = tool_returns(later[len(history) :], 'roll_die')
    assert 'did not run' in refused

    with pytest.warns(SkillWarning, match='its server did not start'):
        turns, again = play(
            capability,
            [[call('load_skill', name='dice')], [call('roll_die', sides=6)], [call('roll_die', sides=2)]],
            later,
        )
    said = replies(again[len(later) :], 'roll_die')
    assert len(said) == 2
    assert all(UNAVAILABLE in reply for reply in said)
    assert UNAVAILABLE in turns.instructions[-1]
    case(AREA, 'an MCP server gone in a later turn, after its skill was unloaded, then loaded again', said[0])


def test_a_new_process_whose_server_is_down_explains_the_remembered_tools(tmp_path: Path) -> None:
    """A conversation stored and resumed by a new agent (no tools listed in this process yet) whose server is down:
    the model's calls of the tools it remembers are explained, never charged, so calling twice ends nothing."""
    marker = tmp_path / 'events'
    _, history = play(
        Skills(skills=[dice(marker), weather]), [[call('load_skill', name='dice')], [call('roll_die', sides=6)]]
    )
    marker.with_suffix('.down').touch()
    fresh = Skills(skills=[dice(marker), weather])
    with pytest.warns(SkillWarning, match='its server did not start'):
        turns, later = play(
            fresh,
            [
                [call('roll_die', sides=6)],
                [call('roll_die', sides=3)],
                [call('load_skill', name='weather')],
                [call('get_forecast', city='Oslo')],
            ],
            history,
        )
    assert 'roll_die' not in turns.tools[0]
    said = replies(later[len(history) :], 'roll_die')
    assert len(said) == 2
    assert all(UNAVAILABLE in reply for reply in said)
    assert tool_returns(later, 'get_forecast')[-1] == 'Oslo: sunny, 21 °C, for the next 3 days'
    case(
        AREA, "a resumed conversation whose MCP server is down: the model calls the skill's tools it remembers", said[0]
    )
