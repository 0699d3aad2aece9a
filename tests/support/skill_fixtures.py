"""Python skills importable by path (`skill_fixtures:weather`), as an agent spec names them."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from pydantic_ai import RunContext

from skillshelf import Skill

forecast_calls: list[str] = []
"""Cities `get_forecast` actually ran for: proves whether a tool body executed."""

weather = Skill(
    name='weather',
    description='Current weather, forecasts and alerts for a city.',
    instructions='Always state the city and the units you used.',
)


@weather.tool
async def get_forecast(ctx: RunContext[None], city: str, days: int = 3) -> str:
    """Forecast for a city.

    Args:
        city: City name.
        days: Number of days, 1 to 7.
    """
    forecast_calls.append(city)
    return f'{city}: sunny, 21 °C, for the next {days} days'


@weather.tool_plain
def get_alerts(city: str) -> list[str]:
    """Active weather alerts for a city."""
    return [f'{city}: heat advisory until 20:00']


currency = Skill(
    name='currency',
    description='Convert amounts between currencies at the current exchange rate.',
    instructions='Quote the rate you used and its date.',
    resources={'rates.md': '| pair | rate |\n|---|---|\n| EUR/USD | 1.08 |'},
)


@currency.tool_plain
def convert(amount: float, source: str, target: str) -> str:
    """Convert an amount between two ISO currency codes."""
    return f'{amount * 1.08:.2f} {target}' if (source, target) == ('EUR', 'USD') else 'unsupported pair'


travel = [weather, currency]
"""A list of skills, importable as one path."""

travel_names = [skill.name for skill in travel]
"""A list that is not a list of skills, for import-path errors."""


SYNONYMS = {'hire': 'rent', 'automobile': 'car', 'aeroplane': 'plane', 'complete': 'fill'}
STOPWORDS = frozenset({'a', 'an', 'the', 'and', 'for', 'to', 'of', 'in', 'my', 'me'})


class WordEncoder:
    """Hashed bag of words (after synonyms), L2-normalised; records every text it is asked to embed."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.texts: list[str] = []

    def __call__(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts.extend(texts)
        rows = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r'[a-z]+', text.lower()):
                if word not in STOPWORDS:
                    rows[row, zlib.crc32(f'{self.seed}:{SYNONYMS.get(word, word)}'.encode()) % 64] += 1
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return (rows / np.where(norms > 0, norms, 1)).astype(np.float32)
