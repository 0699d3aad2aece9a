"""Generated frontmatter through the whole path: discovery, catalog, search, load and the saved history.

One property for the promise that a skill file never breaks a run: whatever the frontmatter holds (escapes that
decode to lone surrogates, aliases, tabs, long runs of spaces, odd keys and types), discovery finishes, every folder
is either a skill or a reported skip, and an agent run over the library, with the model searching and loading every
skill, finishes with a history that serialises.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import example as explicit
from hypothesis import strategies as st
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import Skills

from hang_detector import finishes
from reliability.ledger import example
from warnings_said import said

HANG_SECONDS = 20
"""Not a speed test: a parse that is still running after this long is stuck (the inputs are at most a few KB)."""

SCALARS = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            '"\\ud800"',
            '"\\udfff tail"',
            '"ok \\ud83d"',
            "'plain'",
            '*anchor',
            '&anchor value',
            '[*anchor, *anchor, *anchor]',
            '{a: 1, a: 2}',
            '2024-01-01',
            '0x1F',
            'yes',
            '~',
            '|',
            '>-',
            'Use when: the user asks',
            'a' + ' ' * 3000 + 'b:',
            '\t\t: x',
            '"' + 'x' * 500 + '"',
            '!!python/object:os.system ls',
            '&a [&b [&c [*a]]]',
            '[' * 20 + '1' + ']' * 20,  # deep enough for the pure-Python YAML parser, which decodes `\\ud800`
        ]
    ),
)
KEYS = st.sampled_from(
    ['name', 'description', 'metadata', 'keywords', 'tags', 'when_to_use', 'license', 'allowed-tools', 'x', '"\\ud800"']
)


@st.composite
def frontmatters(draw: st.DrawFn) -> str:
    """Frontmatter text for the folder `demo`: usually with a valid name and some description, plus hostile lines."""
    lines: list[str] = []
    if draw(st.integers(0, 5)):
        lines.append('name: demo')
    lines.append(f'description: {draw(SCALARS)}')
    for _ in range(draw(st.integers(0, 5))):
        key = draw(KEYS)
        if draw(st.booleans()):
            lines.append(f'{key}:')
            lines.extend(f'  - {draw(SCALARS)}' for _ in range(draw(st.integers(1, 3))))
        else:
            lines.append(f'{key}: {draw(SCALARS)}')
    return '\n'.join(['---', *lines, '---', draw(st.text(max_size=60))])


def run_everything(capability: Skills[Any]) -> list[ModelMessage]:
    """An agent run whose model searches, loads every skill, reads nothing, then answers."""
    names = list(capability.library.skills)
    steps = [
        [ToolCallPart('search_skills', {'query': 'demo skill'}, tool_call_id='search')],
        [ToolCallPart('load_skill', {'name': name}, tool_call_id=f'load-{name}') for name in names],
    ]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = sum(1 for message in messages if isinstance(message, ModelResponse))
        return ModelResponse(parts=list(steps[step]) if step < len(steps) and steps[step] else [TextPart('done')])

    agent = Agent(FunctionModel(respond), capabilities=[capability])
    return agent.run_sync('find a skill').all_messages()


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(frontmatter=frontmatters())
# Lone surrogates reach Python through the pure-Python YAML parser, which deep nesting selects.
@explicit(
    frontmatter='\n'.join(
        ['---', 'name: demo', 'description: "bad \\ud800 here"', 'x: ' + '[' * 20 + '1' + ']' * 20, '---', 'Body.']
    )
)
@explicit(
    frontmatter='\n'.join(
        [
            '---',
            'name: demo',
            'description: ok',
            'metadata:',
            '  keywords: ["\\udfff"]',
            'x: ' + '[' * 20 + '1' + ']' * 20,
            '---',
        ]
    )
)
@explicit(
    frontmatter='\n'.join(
        ['---', 'name: demo', 'description: ok', '"\\ud83d": 1', 'x: ' + '[' * 20 + '1' + ']' * 20, '---']
    )
)
@explicit(
    frontmatter='\n'.join(
        ['---', 'name: demo', 'description: ok', 'tags: [&a "' + 'w ' * 4000 + '"' + ', *a' * 60 + ']', '---']
    )
)
def test_any_frontmatter_never_breaks_discovery_a_run_or_the_saved_history(frontmatter: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / 'demo').mkdir()
        (root / 'demo' / 'SKILL.md').write_text(frontmatter, encoding='utf-8', errors='surrogatepass')
        (root / 'other').mkdir()
        (root / 'other' / 'SKILL.md').write_text('---\nname: other\ndescription: A valid neighbour.\n---\nBody.\n')
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter('always')
            capability = finishes(lambda: Skills(root), HANG_SECONDS)
        library = capability.library

        assert 'other' in library.skills, 'a broken neighbour never hides a valid skill'
        assert ('demo' in library.skills) != any('demo' in problem.path.parts for problem in library.skipped)
        assert len([message for message in said(warned) if 'skipped' in message]) == len(library.skipped)
        capability.get_instructions().encode('utf-8')
        messages = finishes(lambda: run_everything(capability), HANG_SECONDS)
        assert ModelMessagesTypeAdapter.dump_json(messages)
        outcome = 'loaded' if 'demo' in library.skills else 'skipped with a warning'
    example(
        'frontmatter-run',
        'Any generated frontmatter (surrogate escapes, aliases, tabs, long space runs, odd types) leaves discovery '
        'finished, the neighbour loaded, every skip reported, and a search-and-load-everything run whose history '
        'serialises',
        outcome,
    )
