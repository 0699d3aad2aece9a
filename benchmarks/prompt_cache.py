"""Prompt-cache reuse across load and unload, on the wire of pydantic-ai's real provider model classes.

Runs the scenario of `tests/capability/test_wire_cache.py` (`STEPS` of `tests/support/wire_recorder.py`: load a
skill, call its tool, unload it, call the tool again, load another skill, call its tool, answer) against a recording
HTTP transport and prints, per provider, how much of each request repeats the previous one (what a provider's prompt
cache can serve), how large the requests are, and what the unloaded skill's tool definitions, kept listed so the
cached prefix survives, add to the last request; then the same with `Skills(unload='hide')`, which removes them.
Offline and deterministic (a few seconds); writes `benchmarks/results/prompt_cache.json`, which
`tests/docs/test_figures.py` checks against a fresh run, and regenerates the figures the README quotes.

    python benchmarks/prompt_cache.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'tests' / 'support'))

import report
from _results import machine, write_json
from pydantic_ai import Agent

from skillshelf import Skills

from skill_fixtures import currency, weather
from wire_recorder import STEPS, Provider, Recorder

PROVIDERS: list[Provider] = ['anthropic', 'openai-responses', 'openai-chat']


def definitions(value: Any, names: set[str]) -> list[dict[str, Any]]:
    """The definitions of the tools `names` anywhere in a request body: in `tools` (Chat nests each under
    `function`; Anthropic lists deferred ones there), or in the input (Responses' `additional_tools`)."""
    if isinstance(value, list):
        return [found for item in value for found in definitions(item, names)]  # pyright: ignore[reportUnknownVariableType]
    if not isinstance(value, dict):
        return []
    item: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
    inner: dict[str, Any] = item['function'] if isinstance(item.get('function'), dict) else item
    name = inner.get('name')
    if isinstance(name, str) and name in names and ('parameters' in inner or 'input_schema' in inner):
        return [item]
    return [found for child in item.values() for found in definitions(child, names)]


def measure(provider: Provider, unload: Literal['keep', 'hide'] = 'keep') -> dict[str, int]:
    """The scenario on one provider's wire: prefixes kept, characters reused and sent, the last request's size and
    the part of it that is the unloaded skill's tool definitions."""
    recorder = Recorder(provider, STEPS)
    skills = Skills(skills=[weather, currency], unload=unload)
    Agent(recorder.model(), capabilities=[skills]).run_sync('Weather in Paris?')
    kept = recorder.prefix_kept()
    reused, total = recorder.reused_characters()
    last = recorder.cache_parts(recorder.bodies[-1])
    unloaded = definitions(recorder.bodies[-1], set(weather.tool_names))
    return {
        'follow_ups': len(kept),
        'prefix_kept': sum(kept),
        'reused_chars': reused,
        'request_chars': total,
        'last_request_chars': len(json.dumps(last)),
        'unloaded_tool_chars': len(json.dumps(unloaded)),
    }


def measure_all() -> dict[str, dict[str, dict[str, int]]]:
    """`measure` on every provider, with the default `unload='keep'` (`providers`) and with `'hide'` (`hidden`)."""
    return {
        'providers': {provider: measure(provider) for provider in PROVIDERS},
        'hidden': {provider: measure(provider, 'hide') for provider in PROVIDERS},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        '--no-readme', action='store_true', help='do not regenerate benchmarks/README.md and the figures the docs quote'
    )
    args = parser.parse_args()
    measured = measure_all()
    print(
        f'{"provider, unload":<24} {"prefix kept":>12} {"reused chars":>14} {"request chars":>14} {"last request":>13}'
    )
    for key, unload in (('providers', 'keep'), ('hidden', 'hide')):
        for provider, row in measured[key].items():
            print(
                f'{provider + ", " + unload:<24} {row["prefix_kept"]:>6} of {row["follow_ups"]:<4} '
                f'{row["reused_chars"]:>14,} {row["request_chars"]:>14,} {row["last_request_chars"]:>13,}'
            )
    print(f'wrote {write_json("prompt_cache", {"machine": machine(), **measured})}')
    if not args.no_readme:
        report.regenerate()


if __name__ == '__main__':
    main()
