"""What the durable test apps (`durable_dbos_app.py`, `durable_temporal_app.py`) share: the logged `weather` skill,
the record of what the scripted model saw, and the crash at a chosen request."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo

from skillshelf import Skill


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
