"""The examples run offline and show what the README promises."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_quickstart_shows_catalog_search_load_tool_call_unload_and_sizes() -> None:
    completed = subprocess.run(
        [sys.executable, str(REPO / 'examples' / 'quickstart.py')],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    output = completed.stdout
    expected_in_order = [
        'Catalog in the instructions',
        '- weather: Current weather, forecasts and alerts for a city.',
        'model  -> search_skills({"query":"weather forecast for a city"})',
        'model  -> load_skill({"name":"weather"})',
        "tool   <- Loaded skill 'weather'.",
        'model  -> get_forecast({"city":"Lisbon","days":2})',
        'tool   <- Lisbon: day 1: sunny, 21 °C; day 2: sunny, 22 °C',
        'model  -> unload_skill({"name":"weather"})',
        'request 1:',
        'every skill in context instead:',
    ]
    positions = [output.find(text) for text in expected_in_order]
    assert -1 not in positions, [text for text, at in zip(expected_in_order, positions, strict=True) if at == -1]
    assert positions == sorted(positions)
