"""What the quick-start example (`examples/quickstart.py`) sends per request, against every skill in context.

Runs the example's offline conversation (search, load, a skill tool call, unload, a second load and a read) with its
scripted model and records the characters of instructions and tool definitions on each request, and what putting
every skill's instructions and tools in context would send instead. Offline and deterministic (a few seconds);
writes `benchmarks/results/quickstart_cost.json`, which `tests/docs/test_figures.py` checks against a fresh run, and
regenerates the figures the README quotes.

    python benchmarks/quickstart_cost.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'examples'))

import report
from _results import machine, write_json
from pydantic_ai import Agent
from quickstart import PROMPT, SKILLS_DIR, RequestMeter, everything_in_context, scripted_model  # pyright: ignore[reportMissingImports]
from weather_skill import weather  # pyright: ignore[reportMissingImports]

from skillshelf import Skills


def measure() -> dict[str, Any]:
    """The example's run: each request's characters, and every skill in context instead."""
    skills = Skills(SKILLS_DIR, skills=[weather])
    meter = RequestMeter()
    Agent(scripted_model(), capabilities=[skills, meter]).run_sync(PROMPT)
    requests = [
        {'instructions': instructions, 'tools': tools, 'total': instructions + tools}
        for instructions, tools in meter.sizes
    ]
    return {'requests': requests, 'everything_in_context_chars': everything_in_context(skills)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        '--no-readme', action='store_true', help='do not regenerate benchmarks/README.md and the figures the docs quote'
    )
    args = parser.parse_args()
    result = measure()
    for number, request in enumerate(result['requests'], start=1):
        print(f'request {number}: {request["total"]:,} characters')
    print(f'every skill in context: {result["everything_in_context_chars"]:,} characters')
    print(f'wrote {write_json("quickstart_cost", {"machine": machine(), **result})}')
    if not args.no_readme:
        report.regenerate()


if __name__ == '__main__':
    main()
