"""Context cost: what the model receives per request for libraries of 10 to 2,651 real skills.

    python benchmarks/context_cost.py --data ../shared/bench

For each size, the first N real skills of the pooled library are written as SKILL.md folders to a
temporary directory and a real `Agent(FunctionModel(...), capabilities=[Skills(directories=[tmp])])`
runs: the scripted model calls `search_skills`, then answers (a library whose catalog lists every skill whole
offers no `search_skills`: there the model answers at once, and the run has one request). What the model received is
read from `AgentInfo` (`info.instructions`, `info.function_tools`): characters, and tokens estimated as
characters / 4. Next to it: the size of putting every skill's name and description in context (what
catalog-in-the-prompt designs send) and of one tool per skill. The time covers `Agent(...)`
construction (which discovers the skills) through the end of the two-request run (the first search
reads the bodies and builds the index), cold (empty caches) and warm (frontmatter and index caches present),
and warm again with `Skills(auto_reload=False)`, which skips the run's check for changed skill files. Each
timed run is a fresh process, as an agent's start is; each is repeated `--repeat` times (default 3) and the
medians are reported, with each cold run listed in `results/context_cost.json`.
Sizes past the 2,651 real skills add the mutated copies of `scale.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import report
from _datasets import Doc, scaled_docs, trigger_sets
from _folders import write_skill_folders
from _results import machine, write_json
from _tables import context_table
from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability, Capability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import Skills

QUERY = 'review a pull request for security problems'


def request_chars(info: AgentInfo) -> dict[str, int]:
    instructions = info.instructions or ''
    tools = json.dumps(
        [
            {'name': t.name, 'description': t.description, 'parameters': t.parameters_json_schema}
            for t in info.function_tools
        ],
        ensure_ascii=False,
    )
    return {'instructions': len(instructions), 'tools': len(tools), 'total': len(instructions) + len(tools)}


def run_agent(directory: Path, *, auto_reload: bool = True) -> tuple[float, list[dict[str, int]], str | None]:
    seen: list[dict[str, int]] = []
    search_result: str | None = None

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal search_result
        seen.append(request_chars(info))
        if len(seen) == 1 and any(tool.name == 'search_skills' for tool in info.function_tools):
            return ModelResponse(parts=[ToolCallPart('search_skills', {'query': QUERY})])
        if len(seen) == 2:
            search_result = str(messages[-1].parts[0].content)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
        return ModelResponse(parts=[TextPart('done')])

    started = time.perf_counter()
    agent = Agent(FunctionModel(respond), capabilities=[Skills(directories=[directory], auto_reload=auto_reload)])
    agent.run_sync('Help me with a task.')
    return time.perf_counter() - started, seen, search_result


def run_worker(directory: Path, cache: Path, *, auto_reload: bool = True) -> dict[str, Any]:
    """`run_agent` in a fresh process with `cache` as the cache directory."""
    command = [sys.executable, __file__, '--worker', '--dir', str(directory)]
    if not auto_reload:
        command.append('--no-auto-reload')
    env = {**os.environ, 'SKILLSHELF_CACHE_DIR': str(cache)}
    completed = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return json.loads(completed.stdout.strip().splitlines()[-1])


def worker(directory: Path, *, auto_reload: bool) -> dict[str, Any]:
    seconds, requests, search_result = run_agent(directory, auto_reload=auto_reload)
    chars = None if search_result is None else len(search_result)
    return {'seconds': seconds, 'requests': requests, 'search_result_chars': chars}


def slug(text: str) -> str:
    """`text` as a capability id: lower-case letters and digits joined by underscores."""
    return re.sub(r'[^a-z0-9]+', '_', text.lower()).strip('_')


def deferred_capabilities(docs: list[Doc]) -> int:
    """The first request of pydantic-ai's own answer: one `Capability(defer_loading=True)` per skill, each with its
    description and body, loaded with the built-in `load_capability` tool."""
    seen: list[dict[str, int]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(request_chars(info))
        return ModelResponse(parts=[TextPart('done')])

    names = [slug(doc.name) for doc in docs]
    ids = [f'{name}_{n}' if name in names[:n] else name for n, name in enumerate(names)]  # names repeat across sources
    capabilities: list[AbstractCapability[None]] = [
        Capability[None](id=capability_id, description=' '.join(doc.description.split()), instructions=doc.body,
                         defer_loading=True)
        for capability_id, doc in zip(ids, docs, strict=True)
    ]  # fmt: skip
    Agent(FunctionModel(respond), deps_type=type(None), capabilities=capabilities).run_sync('Help me with a task.')
    return seen[0]['total']


def everything_in_context(docs: list[Doc]) -> dict[str, int]:
    catalog = '\n'.join(f'- {d.name}: {" ".join(d.description.split())}' for d in docs)
    tools = json.dumps(
        [
            {'name': d.name, 'description': ' '.join(d.description.split()), 'parameters': {'type': 'object'}}
            for d in docs
        ],
        ensure_ascii=False,
    )
    return {'catalog_chars': len(catalog), 'tool_per_skill_chars': len(tools)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path)
    parser.add_argument('--sizes', default='10,100,1000,2651,100000')
    parser.add_argument('--repeat', type=int, default=3, help='timed runs of each kind per size; medians are reported')
    parser.add_argument('--no-readme', action='store_true')
    parser.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--dir', type=Path, help=argparse.SUPPRESS)
    parser.add_argument('--no-auto-reload', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.dir, auto_reload=not args.no_auto_reload)))
        return
    if args.data is None:
        parser.error('--data is required')
    pooled = trigger_sets(args.data)[1].docs
    rows: list[dict[str, Any]] = []
    for size in [int(s) for s in args.sizes.split(',')]:
        docs = pooled[:size] if size <= len(pooled) else scaled_docs(args.data, size)
        colds: list[dict[str, Any]] = []
        warm_s: list[float] = []
        warm_fixed_s: list[float] = []
        with tempfile.TemporaryDirectory(prefix='skillshelf-context-') as tmp:
            library = Path(tmp) / 'skills'
            write_skill_folders(docs, library)
            for attempt in range(args.repeat):
                cache = Path(tmp) / f'cache-{attempt}'  # empty: the cold run starts with no cache at all
                colds.append(run_worker(library, cache))
                warm_s.append(run_worker(library, cache)['seconds'])
                warm_fixed_s.append(run_worker(library, cache, auto_reload=False)['seconds'])
        requests, result_chars = colds[-1]['requests'], colds[-1]['search_result_chars']
        first, second = requests[0], (requests[1] if len(requests) > 1 else None)
        row = {
            'size': size,
            'first_request_chars': first['total'],
            'first_request_tokens_est': first['total'] / 4,
            'instructions_chars': first['instructions'],
            'tool_definitions_chars': first['tools'],
            'second_request_chars': None if second is None else second['total'],
            'search_result_chars': result_chars,
            **everything_in_context(docs),
            **({'deferred_capabilities_chars': deferred_capabilities(docs)} if size <= len(pooled) else {}),
            'construct_run_cold_s': statistics.median(run['seconds'] for run in colds),
            'construct_run_cold_runs_s': [run['seconds'] for run in colds],
            'construct_run_warm_s': statistics.median(warm_s),
            'construct_run_warm_no_reload_s': statistics.median(warm_fixed_s),
        }
        rows.append(row)
        print(context_table([row]), flush=True)
    path = write_json('context_cost', {'machine': machine(), 'query': QUERY, 'rows': rows})
    print(context_table(rows))
    print(f'wrote {path}')
    if not args.no_readme:
        report.regenerate()


if __name__ == '__main__':
    main()
