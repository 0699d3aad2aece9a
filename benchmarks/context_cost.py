"""Context cost: what the model receives per request for libraries of 10 to 2,651 real skills.

    python benchmarks/context_cost.py --data ../shared/bench

For each size, the first N real skills of the pooled library are written as SKILL.md folders to a
temporary directory and a real `Agent(FunctionModel(...), capabilities=[Skills(directories=[tmp])])`
runs two requests: the scripted model calls `search_skills`, then answers. What the model received is
read from `AgentInfo` (`info.instructions`, `info.function_tools`): characters, and tokens estimated as
characters / 4. Next to it: the size of putting every skill's name and description in context (what
catalog-in-the-prompt designs send) and of one tool per skill. The time covers `Agent(...)`
construction (which discovers the skills) through the end of the two-request run (the first search
reads the bodies and builds the index), cold (empty caches) and warm (frontmatter and index caches present),
and warm again with `Skills(auto_reload=False)`, which skips the run's check for changed skill files.
Sizes past the 2,651 real skills add the mutated copies of `scale.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import Doc, fmt, machine, markdown_table, trigger_sets, write_json, write_skill_folders
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from scale import scaled_docs

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


def run_agent(directory: Path, *, auto_reload: bool = True) -> tuple[float, list[dict[str, int]], str]:
    seen: list[dict[str, int]] = []
    search_result = ''

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal search_result
        seen.append(request_chars(info))
        if len(seen) == 1:
            return ModelResponse(parts=[ToolCallPart('search_skills', {'query': QUERY})])
        search_result = str(messages[-1].parts[0].content)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
        return ModelResponse(parts=[TextPart('done')])

    started = time.perf_counter()
    agent = Agent(FunctionModel(respond), capabilities=[Skills(directories=[directory], auto_reload=auto_reload)])
    agent.run_sync('Help me with a task.')
    return time.perf_counter() - started, seen, search_result


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
    parser.add_argument('--data', type=Path, required=True)
    parser.add_argument('--sizes', default='10,100,1000,2651,100000')
    parser.add_argument('--no-readme', action='store_true')
    args = parser.parse_args()
    pooled = trigger_sets(args.data)[1].docs
    rows: list[dict[str, Any]] = []
    for size in [int(s) for s in args.sizes.split(',')]:
        docs = pooled[:size] if size <= len(pooled) else scaled_docs(args.data, size)
        with tempfile.TemporaryDirectory(prefix='skillshelf-context-') as tmp:
            write_skill_folders(docs, Path(tmp) / 'skills')
            os.environ['SKILLSHELF_CACHE_DIR'] = str(Path(tmp) / 'cache')
            cold_s, requests, result = run_agent(Path(tmp) / 'skills')
            warm_s, _, _ = run_agent(Path(tmp) / 'skills')
            warm_fixed_s, _, _ = run_agent(Path(tmp) / 'skills', auto_reload=False)
        first, second = requests[0], requests[1]
        row = {
            'size': size,
            'first_request_chars': first['total'],
            'first_request_tokens_est': first['total'] / 4,
            'instructions_chars': first['instructions'],
            'tool_definitions_chars': first['tools'],
            'second_request_chars': second['total'],
            'search_result_chars': len(result),
            **everything_in_context(docs),
            'construct_run_cold_s': cold_s,
            'construct_run_warm_s': warm_s,
            'construct_run_warm_no_reload_s': warm_fixed_s,
        }
        rows.append(row)
        print(table([row]), flush=True)
    path = write_json('context_cost', {'machine': machine(), 'query': QUERY, 'rows': rows})
    print(table(rows))
    print(f'wrote {path}')
    if not args.no_readme:
        from report import write_readme

        print(f'wrote {write_readme()}')


def table(rows: list[dict[str, Any]]) -> str:
    header = ['skills', 'first request chars', '≈ tokens', 'instructions', 'tool defs', 'search result chars',
              'all in catalog chars', 'tool per skill chars', 'construct+run cold s', 'warm s',
              'warm s, auto_reload off']  # fmt: skip
    body = [
        [f'{r["size"]:,}', f'{r["first_request_chars"]:,}', f'{r["first_request_tokens_est"]:,.0f}',
         f'{r["instructions_chars"]:,}', f'{r["tool_definitions_chars"]:,}', f'{r["search_result_chars"]:,}',
         f'{r["catalog_chars"]:,}', f'{r["tool_per_skill_chars"]:,}', fmt(r['construct_run_cold_s'], 2),
         fmt(r['construct_run_warm_s'], 2), fmt(r.get('construct_run_warm_no_reload_s', float('nan')), 2)]
        for r in rows
    ]  # fmt: skip
    return markdown_table(header, body)


if __name__ == '__main__':
    main()
