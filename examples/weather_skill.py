"""A Python skill with tools: importable as `weather_skill:weather` (e.g. from an agent spec)."""

from __future__ import annotations

from pydantic_ai import RunContext

from skillshelf import Skill

weather = Skill(
    name='weather',
    description='Current weather, forecasts and alerts for a city.',
    instructions=(
        'Use `get_forecast` for conditions and `get_alerts` before recommending outdoor plans. '
        'Always state the city and the units you used (°C unless the user asks for °F).'
    ),
)


@weather.tool
async def get_forecast(ctx: RunContext[None], city: str, days: int = 3) -> str:
    """Daily forecast for a city.

    Args:
        city: City name, e.g. "Lisbon".
        days: Number of days, 1 to 7.
    """
    days = max(1, min(days, 7))
    return f'{city}: ' + '; '.join(f'day {day}: sunny, {20 + day} °C' for day in range(1, days + 1))


@weather.tool_plain
def get_alerts(city: str) -> list[str]:
    """Active weather alerts for a city."""
    return [f'{city}: strong UV index until 17:00']
