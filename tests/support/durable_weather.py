"""What the durable test apps (`durable_dbos_app.py`, `durable_temporal_app.py`) share: the logged `weather` skill
and the forked `itinerary` skill, the first prompt and the first run's script, the record of what the scripted model
saw, and the crash at a chosen request."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo

from skillshelf import Skill

from scripted_model import FORK_PREAMBLE

FORK_PROMPT = 'Book me a hotel in Lisbon.'
"""The first prompt of the runs that fork `itinerary`."""


def weather_skill(work: Path) -> Skill[Any]:
    """A Python skill whose `forecast` tool appends a line to `work/forecast.log` each time its body runs."""
    weather: Skill[Any] = Skill(
        name='weather',
        description='Forecasts for a city.',
        instructions='Give the temperature in °C.',
    )

    @weather.tool
    async def forecast(ctx: RunContext[None], city: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """The forecast for a city."""
        with (work / 'forecast.log').open('a') as log:
            log.write(f'{os.getpid()} {city}\n')
        return f'{city}: sunny, 21 °C'

    return weather


def itinerary_skill(work: Path) -> Skill[Any]:
    """A forked Python skill whose `book` tool appends a line to `work/book.log` each time its body runs."""
    itinerary: Skill[Any] = Skill(
        name='itinerary',
        description='Book hotels for a trip.',
        instructions='Book a hotel in $ARGUMENTS with `book`.',
        metadata={'context': 'fork'},
    )

    @itinerary.tool_plain
    def book(city: str) -> str:  # pyright: ignore[reportUnusedFunction]
        """Book a hotel."""
        with (work / 'book.log').open('a') as log:
            log.write(f'{os.getpid()} {city}\n')
        return f'Hotel booked in {city}.'

    return itinerary


def sub_agent_response(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse | None:
    """The scripted response of `itinerary`'s sub-agent (it books, then reports), or `None` for the parent's
    requests."""
    if info.instructions is None or not info.instructions.startswith(FORK_PREAMBLE):
        return None
    if not any(isinstance(message, ModelResponse) for message in messages):
        return ModelResponse(parts=[ToolCallPart('book', {'city': 'Lisbon'})])
    return ModelResponse(parts=[TextPart('Booked the Lisbon hotel.')])


def what_the_model_saw(request: int, messages: list[ModelMessage], info: AgentInfo) -> dict[str, Any]:
    """Request number `request`: the tools offered and every tool return in the history."""
    return {
        'request': request,
        'tools': sorted(tool.name for tool in info.function_tools),
        'returns': [
            [part.tool_name, str(part.content)]
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ],
    }


def crash_at_chosen_request(work: Path, request: int) -> None:
    """Kill this process (SIGKILL, no cleanup) if `request` is the one named by `work/kill_at`."""
    if str(request) == (work / 'kill_at').read_text().strip():
        os.kill(os.getpid(), signal.SIGKILL)  # a crash: nothing after this point is recorded or cleaned up


def first_prompt(work: Path) -> str:
    """`work/prompt`, if there is one (a user's `/packing`, say, which loads that skill before the first request)."""
    return (work / 'prompt').read_text() if (work / 'prompt').exists() else 'Plan a trip to Lisbon.'


def first_run_script(prompt: str) -> list[list[ToolCallPart | TextPart]]:
    """The scripted responses of the first run: load packing and weather, ask for the forecast, answer; or, for
    `FORK_PROMPT`, fork `itinerary`, then answer."""
    if prompt == FORK_PROMPT:
        return [[ToolCallPart('load_skill', {'name': 'itinerary', 'arguments': 'Lisbon'})], [TextPart('Booked.')]]
    loads: list[list[ToolCallPart | TextPart]] = (
        # The user's `/packing` is recorded as the history's first response (a `load_skill` call): never asked for.
        [[], [ToolCallPart('load_skill', {'name': 'weather'})]]
        if prompt.startswith('/')
        else [[ToolCallPart('load_skill', {'name': 'packing'}), ToolCallPart('load_skill', {'name': 'weather'})]]
    )
    return [*loads, [ToolCallPart('forecast', {'city': 'Lisbon'})], [TextPart('Pack light: Lisbon is sunny.')]]
