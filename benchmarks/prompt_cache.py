"""Prompt-cache reuse across load and unload, on the wire of pydantic-ai's real provider model classes.

Runs the scenario of `tests/test_wire_cache.py` (load a skill, call its tool, unload it, call the tool again, load
another skill, call its tool, answer) against a recording HTTP transport and prints, per provider, how much of
each request repeats the previous one (what a provider's prompt cache can serve) and how large the requests are.

    python benchmarks/prompt_cache.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'tests'))

from pydantic_ai import Agent
from test_wire_cache import STEPS  # pyright: ignore[reportMissingImports]
from wire_recorder import Provider, Recorder  # pyright: ignore[reportMissingImports]

from skillshelf import Skills

from skill_fixtures import currency, weather  # pyright: ignore[reportMissingImports]


def main() -> None:
    print(f'{"provider":<18} {"prefix kept":>12} {"reused chars":>14} {"request chars":>14} {"last request":>13}')
    providers: list[Provider] = ['anthropic', 'openai-responses', 'openai-chat']
    for provider in providers:
        recorder = Recorder(provider, STEPS)
        Agent(recorder.model(), capabilities=[Skills(skills=[weather, currency])]).run_sync('Weather in Paris?')
        kept = recorder.prefix_kept()
        reused, total = recorder.reused_characters()
        last = len(json.dumps(recorder.cache_parts(recorder.bodies[-1])))
        print(f'{provider:<18} {sum(kept):>6} of {len(kept):<4} {reused:>14,} {total:>14,} {last:>13,}')


if __name__ == '__main__':
    main()
