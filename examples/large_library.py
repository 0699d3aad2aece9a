"""A large skill library: thousands of SKILL.md folders, found with `search_skills` and loaded on demand.

    python examples/large_library.py                      # 2,000 generated skills, fully offline
    python examples/large_library.py --count 300
    python examples/large_library.py --data ../shared/bench   # the 2,651 real skills of the benchmark data

The skills are written to a temporary directory; a scripted model (no API key, no network) searches the
library, loads the best match and answers. The output shows what the model received, the search results
and how long each step took. Skill authors can make a skill easier to find without code by adding
`keywords:` (or `tags`, `triggers`, `when_to_use`) to its frontmatter: those words are searched too.
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import Skills

ACTIONS = ['review', 'migrate', 'debug', 'optimise', 'document', 'test', 'deploy', 'monitor', 'secure', 'refactor']
SUBJECTS = [
    ('postgres', 'PostgreSQL databases', 'queries, indexes, vacuum and replication'),
    ('kubernetes', 'Kubernetes clusters', 'pods, deployments, helm charts and autoscaling'),
    ('react', 'React front-ends', 'components, hooks, state and rendering'),
    ('terraform', 'Terraform infrastructure', 'modules, state files and plans'),
    ('pdf', 'PDF documents', 'forms, pages, text extraction and merging'),
    ('csv', 'CSV and spreadsheet data', 'columns, pivots, charts and cleaning'),
    ('graphql', 'GraphQL APIs', 'schemas, resolvers and pagination'),
    ('ios', 'iOS apps', 'SwiftUI views, App Store review and TestFlight'),
    ('kafka', 'Kafka streams', 'topics, consumers, partitions and lag'),
    ('django', 'Django web apps', 'models, migrations, views and admin'),
]
EXTRA = [
    ('release-notes', 'Write release notes and a changelog from merged pull requests.', 'changelog, version bump'),
    ('代码审查', '审查代码：找出缺陷、风格问题和安全隐患，给出修改建议。', '代码评审, code review'),
    ('meeting-minutes', 'Turn a meeting transcript into minutes with decisions and action items.', 'notes, summary'),
]


def write_generated(directory: Path, count: int) -> None:
    """`count` distinct skills made from actions × subjects, plus a few hand-written ones (one in Chinese)."""
    combos = itertools.cycle(itertools.product(ACTIONS, SUBJECTS))
    for n in range(count - len(EXTRA)):
        action, (slug, subject, details) = next(combos)
        round_ = n // (len(ACTIONS) * len(SUBJECTS))
        name = f'{action}-{slug}' + (f'-{round_ + 1}' if round_ else '')
        description = f'{action.capitalize()} {subject}: {details}. Use when asked to {action} {slug} work.'
        body = f'# {action} {subject}\n\n1. Gather the {slug} context.\n2. {action.capitalize()} step by step.\n'
        _write(directory, name, description, body, '')
    for name, description, keywords in EXTRA:
        _write(directory, name, description, f'# {name}\n\nFollow the steps.\n', keywords)


def write_real(directory: Path, data: Path) -> None:
    """The benchmark's real skills (../shared/bench), renamed where their names are not valid skill names."""
    import re

    taken: set[str] = set()
    for file in ('skilltrigger_skills.jsonl', 'skills_corpus.jsonl', 'skills_corpus_composio_toolkits.jsonl'):
        for line in (data / file).read_text(encoding='utf-8').splitlines():
            row = json.loads(line)
            base = '-'.join(re.findall(r'[a-z0-9]+', row['name'].lower()))[:60] or 'skill'
            name, n = base, 2
            while name in taken:
                name, n = f'{base}-{n}', n + 1
            taken.add(name)
            _write(directory, name, ' '.join(row['description'].split())[:1024] or name, row['body'], '')


def _write(directory: Path, name: str, description: str, body: str, keywords: str) -> None:
    folder = directory / name
    folder.mkdir(parents=True)
    extra = f'keywords: {json.dumps(keywords, ensure_ascii=False)}\n' if keywords else ''
    front = f'---\nname: {name}\ndescription: {json.dumps(description, ensure_ascii=False)}\n{extra}---\n\n'
    (folder / 'SKILL.md').write_text(front + body, encoding='utf-8')


def run(directory: Path, query: str) -> None:
    requests: list[int] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tools = json.dumps([[t.name, t.description, t.parameters_json_schema] for t in info.function_tools])
        requests.append(len(info.instructions or '') + len(tools))
        returned = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if not returned:
            print(f'model  -> search_skills({json.dumps({"query": query}, ensure_ascii=False)})')
            return ModelResponse(parts=[ToolCallPart('search_skills', {'query': query})])
        if returned[0].tool_name == 'search_skills':
            matches = returned[0].content
            if not isinstance(matches, list) or not matches:
                print(f'tool   <- {matches}')
                return ModelResponse(parts=[TextPart('No skill fits; I will do it myself.')])
            for match in matches:  # pyright: ignore[reportUnknownVariableType]
                print(f'tool   <- {match.score:.2f}  {match.name}: {match.description[:70]}')  # pyright: ignore[reportUnknownMemberType]
            best: str = matches[0].name  # pyright: ignore[reportUnknownMemberType]
            print(f'model  -> load_skill({json.dumps({"name": best}, ensure_ascii=False)})')
            return ModelResponse(parts=[ToolCallPart('load_skill', {'name': best})])
        first_line = str(returned[0].content).splitlines()[0]
        print(f'tool   <- {first_line}')
        return ModelResponse(parts=[TextPart('Done, following the skill.')])

    started = time.perf_counter()
    agent = Agent(FunctionModel(model), capabilities=[Skills(directories=[directory])])
    built = time.perf_counter() - started
    agent.run_sync('Help me with my task.')
    total = time.perf_counter() - started
    print(f'request sizes (instructions + tool definitions, characters): {requests}')
    print(
        f'Agent(...) with discovery: {built:.2f} s; construction + run (first search builds the index): {total:.2f} s'
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, help='the benchmark data folder (../shared/bench) for real skills')
    parser.add_argument('--count', type=int, default=2000, help='how many skills to generate (without --data)')
    parser.add_argument('--query', action='append', help='what the model searches for (repeatable)')
    args = parser.parse_args()
    queries = args.query or ['optimise slow postgres queries', 'write the changelog for this release', '帮我做代码审查']
    with tempfile.TemporaryDirectory(prefix='skillshelf-large-') as tmp:
        directory = Path(tmp) / 'skills'
        directory.mkdir()
        if args.data:
            write_real(directory, args.data)
        else:
            write_generated(directory, max(args.count, len(EXTRA) + 1))
        count = sum(1 for _ in directory.iterdir())
        print(f'library: {count:,} skill folders in {directory}')
        for query in queries:
            print()
            run(directory, query)


if __name__ == '__main__':
    main()
