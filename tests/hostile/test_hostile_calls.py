"""The model's mistakes: every bad meta-tool call gets a message that helps it recover, and none aborts the run.

Each test drives a real `Agent` (default retry settings) with a scripted `FunctionModel`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import Skills
from skillshelf.capability.history import loaded_from_history, revealed_from_history
from skillshelf.capability.refusals import sanitized

from reliability.ledger import case, example
from scripted_model import META, NO_CATALOG
from skill_fixtures import currency, forecast_calls, weather

AREA = "The model's calls"


@dataclass
class Outcome:
    output: str
    messages: list[ModelMessage]
    tools_seen: list[list[str]]

    def parts(self, call_id: str) -> list[ToolReturnPart | RetryPromptPart]:
        """Every reply (tool return or retry prompt) to the call with `call_id`."""
        return [
            part
            for message in self.messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, (ToolReturnPart, RetryPromptPart)) and part.tool_call_id == call_id
        ]

    def reply(self, call_id: str) -> str:
        [part] = self.parts(call_id)
        return part.model_response() if isinstance(part, RetryPromptPart) else part.model_response_str()

    def retried(self, call_id: str) -> bool:
        [part] = self.parts(call_id)
        return isinstance(part, RetryPromptPart) or part.outcome == 'retried'


def every_meta_tool() -> Skills[Any]:
    """Two Python skills (with tools, one with files) and no catalog: the model has every meta-tool to misuse."""
    return Skills(skills=[weather, currency], catalog_budget=NO_CATALOG)


def call(tool: str, call_id: str, args: dict[str, Any] | str | None = None) -> ToolCallPart:
    return ToolCallPart(tool, {} if args is None else args, tool_call_id=call_id)


def play(
    steps: Sequence[Sequence[ModelResponsePart]],
    capability: Skills[Any] | None = None,
    message_history: list[ModelMessage] | None = None,
) -> Outcome:
    """Run one agent with default settings, answering each request with the next step, then 'done'."""
    tools_seen: list[list[str]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tools_seen.append(sorted(tool.name for tool in info.function_tools))
        step = len(tools_seen) - 1
        return ModelResponse(parts=list(steps[step]) if step < len(steps) else [TextPart('done')])

    agent = Agent(FunctionModel(respond), capabilities=[capability or every_meta_tool()])
    result = agent.run_sync('help me', message_history=message_history)
    return Outcome(result.output, result.all_messages(), tools_seen)


def test_a_misspelled_skill_name_suggests_the_closest_names() -> None:
    outcome = play([[call('load_skill', 'typo', {'name': 'wether'})]])

    assert outcome.output == 'done'
    assert outcome.reply('typo') == (
        "There is no skill named 'wether'. Did you mean 'weather'? Call `search_skills` to find skills by what they do."
    )
    case(AREA, 'misspelled skill name', outcome.reply('typo'))


def test_an_unknown_skill_name_points_to_search() -> None:
    outcome = play([[call('load_skill', 'unknown', {'name': 'quantum-chess'})]])

    assert outcome.reply('unknown') == (
        "There is no skill named 'quantum-chess'. Call `search_skills` to find skills by what they do."
    )
    case(AREA, 'unknown skill name', outcome.reply('unknown'))


def test_an_enormous_skill_name_is_not_echoed_back_whole() -> None:
    outcome = play([[call('load_skill', 'huge', {'name': 'w' * 100_000})]])

    reply = outcome.reply('huge')
    assert reply.startswith("There is no skill named 'wwww")
    assert '(100,000 characters)' in reply
    assert len(reply) < 300
    case(AREA, 'a 100,000-character skill name', reply)


def test_unloading_a_skill_that_is_not_loaded_lists_the_loaded_ones() -> None:
    outcome = play(
        [[call('load_skill', 'load', {'name': 'currency'})], [call('unload_skill', 'unload', {'name': 'weather'})]]
    )

    assert outcome.output == 'done'
    assert outcome.reply('unload') == (
        "The skill 'weather' is not loaded, so there is nothing to unload. Loaded skills: currency."
    )
    case(AREA, 'unloading a skill that is not loaded', outcome.reply('unload'))


def test_unloading_an_unknown_skill_suggests_names() -> None:
    outcome = play([[call('unload_skill', 'unload', {'name': 'curency'})]])

    assert outcome.reply('unload').startswith("There is no skill named 'curency'. Did you mean 'currency'?")
    case(AREA, 'unloading an unknown (misspelled) skill', outcome.reply('unload'))


def test_loading_the_same_skill_twice_in_one_response_loads_it_once() -> None:
    outcome = play(
        [[call('load_skill', 'first', {'name': 'weather'}), call('load_skill', 'second', {'name': 'weather'})]]
    )

    replies = sorted([outcome.reply('first'), outcome.reply('second')])
    assert replies[0].startswith("Loaded skill 'weather'.")
    assert replies[1] == (
        "The skill 'weather' is already loaded; its instructions are above and its tools are available."
    )
    assert outcome.tools_seen[1] == ['get_alerts', 'get_forecast', *META]
    case(AREA, 'loading the same skill twice in one response', f'loaded once; the other call gets: {replies[1]}')


def test_loading_a_loaded_skill_in_a_later_response_is_a_no_op() -> None:
    outcome = play(
        [[call('load_skill', 'first', {'name': 'weather'})], [call('load_skill', 'again', {'name': 'weather'})]]
    )

    assert outcome.reply('again') == (
        "The skill 'weather' is already loaded; its instructions are above and its tools are available."
    )
    case(AREA, 'loading an already loaded skill again later', outcome.reply('again'))


def test_a_skill_tool_called_in_the_same_response_as_its_load_is_retried_and_the_run_finishes() -> None:
    outcome = play(
        [
            [call('load_skill', 'load', {'name': 'weather'}), call('get_forecast', 'early', {'city': 'Oslo'})],
            [call('get_forecast', 'again', {'city': 'Oslo'})],
        ]
    )

    assert outcome.output == 'done'
    early = outcome.reply('early')
    assert early == (
        "{\"error\":\"The tool 'get_forecast' was called before its skill 'weather' was loaded, so it did not run. "
        "'weather' is loaded now: call 'get_forecast' again.\"}"
    )
    assert outcome.reply('again') == 'Oslo: sunny, 21 °C, for the next 3 days'
    assert forecast_calls == ['Oslo'], 'the early call never ran the tool body'
    case(AREA, "calling a skill's tool in the same response as its `load_skill`", f'not charged: {early}')


def test_a_tool_called_with_its_load_then_with_bad_arguments_still_finishes() -> None:
    outcome = play(
        [
            [call('load_skill', 'load', {'name': 'weather'}), call('get_forecast', 'early', {'city': 'Oslo'})],
            [call('get_forecast', 'bad', {'town': 'Oslo'})],
            [call('get_forecast', 'good', {'city': 'Oslo'})],
        ]
    )

    assert outcome.output == 'done'
    assert outcome.retried('early')
    assert outcome.retried('bad')
    assert outcome.reply('good') == 'Oslo: sunny, 21 °C, for the next 3 days'
    case(
        AREA,
        "a skill's tool called with its `load_skill`, then with bad arguments (two mistakes on one tool)",
        'the early refusal is refunded once the skill is loaded, so the default budget of 1 covers the real '
        'argument mistake; the run finishes',
    )


def test_a_tool_called_before_its_skill_was_loaded_is_refunded_once_loaded() -> None:
    outcome = play(
        [
            [call('get_forecast', 'early', {'city': 'Oslo'})],
            [call('load_skill', 'load', {'name': 'weather'})],
            [call('get_forecast', 'bad', {'city': 'Oslo', 'days': 'many'})],
            [call('get_forecast', 'good', {'city': 'Oslo', 'days': 2})],
        ]
    )

    assert outcome.output == 'done'
    assert outcome.reply('good') == 'Oslo: sunny, 21 °C, for the next 2 days'
    case(
        AREA,
        "a skill's tool called before loading, then loaded and called with bad arguments",
        'refunded once loaded; the run finishes',
    )


@pytest.mark.parametrize('responses', [2, 3, 6])
def test_a_model_that_keeps_calling_a_hidden_tool_is_steered_and_the_run_finishes(responses: int) -> None:
    outcome = play([[call('get_forecast', f'call-{n}', {'city': 'Oslo'})] for n in range(responses)])

    assert outcome.output == 'done'
    assert forecast_calls == []
    for n in range(responses):
        assert "Call `load_skill` with 'weather' first" in outcome.reply(f'call-{n}')
    case(
        AREA,
        f'a model that calls a hidden tool in {responses} consecutive responses and never loads its skill',
        'each refusal names the skill to load and is not charged to the retry budget; the run finishes',
    )


@pytest.mark.parametrize(
    ('tool', 'args'),
    [
        ('load_skill', {'nme': 'weather'}),
        ('load_skill', 'not json'),
        ('search_skills', {'query': 'x', 'limit': 'many'}),
        ('read_skill_resource', {'name': 'weather'}),
    ],
)
def test_malformed_meta_tool_calls_in_many_consecutive_responses_never_end_the_run(
    tool: str, args: dict[str, Any] | str
) -> None:
    outcome = play([[call(tool, f'bad-{n}', args)] for n in range(6)])

    assert outcome.output == 'done'
    assert all(outcome.retried(f'bad-{n}') for n in range(6))
    case(AREA, f'malformed `{tool}` arguments in 6 consecutive responses', 'each one answered; the run finishes')


@pytest.mark.parametrize(
    ('tool', 'args'),
    [
        ('load_skill', '{"name": "\\ud800"}'),
        ('search_skills', '{"query": "\\ud800 weather", "limit": "\\udfff"}'),
        ('read_skill_resource', '{"name": "weather", "path": "sub/\\udc80.md"}'),
        ('unload_skill', '{"name": "\\ud83d"}'),
    ],
)
def test_lone_surrogates_in_arguments_never_reach_a_reply_or_the_history(tool: str, args: str) -> None:
    outcome = play([[call('load_skill', 'load', {'name': 'weather'})], [call(tool, 'odd', args)]])

    assert outcome.output == 'done'
    assert ModelMessagesTypeAdapter.dump_json(outcome.messages)  # the whole history still serialises
    outcome.reply('odd').encode('utf-8')
    case(AREA, f'a lone surrogate (JSON escape) in `{tool}` arguments', f'answered: {outcome.reply("odd")[:80]}…')


def test_arguments_with_lone_surrogates_are_cleaned_before_any_meta_tool_sees_them() -> None:
    assert sanitized({'name': '\ud800x', 'tags': ['\udfff'], '\udc80': 1}) == {
        'name': '\ufffdx',
        'tags': ['\ufffd'],
        '\ufffd': 1,
    }
    assert sanitized({'query': 'plain', 'limit': 3}) == {'query': 'plain', 'limit': 3}


def test_a_skill_tool_called_before_any_load_never_runs() -> None:
    outcome = play([[call('convert', 'early', {'amount': 1, 'source': 'EUR', 'target': 'USD'})]])

    assert outcome.output == 'done'
    assert outcome.reply('early').startswith("{\"error\":\"The tool 'convert' belongs to the skill 'currency'")
    case(AREA, "calling a skill's tool before loading the skill", f'retry, tool body not run: {outcome.reply("early")}')


def test_a_skill_tool_called_after_unload_never_runs() -> None:
    outcome = play(
        [
            [call('load_skill', 'load', {'name': 'weather'})],
            [call('unload_skill', 'unload', {'name': 'weather'})],
            [call('get_forecast', 'late', {'city': 'Rome'})],
        ]
    )

    assert outcome.output == 'done'
    assert forecast_calls == []
    assert outcome.reply('late').startswith(
        "The tool 'get_forecast' belongs to the skill 'weather', which was unloaded"
    )
    case(AREA, "calling a skill's tool after unloading it", f'refused, tool body not run: {outcome.reply("late")}')


@pytest.mark.parametrize(
    ('name', 'query', 'expected'),
    [
        ('empty search query', '', 'The query is empty: describe the task in a few words'),
        ('whitespace-only search query', ' \n\t ', 'The query is empty: describe the task in a few words'),
        ('search query that matches nothing', 'zzqx', "No skill matches 'zzqx'."),
        ('1 MB search query', 'forecast ' * 120_000, '<results>'),
        ('search query of control characters', '\x00\x1b[31m\x7f', 'No skill matches'),
    ],
)
def test_odd_search_queries_get_an_answer(name: str, query: str, expected: str) -> None:
    outcome = play([[call('search_skills', 'search', {'query': query})]])

    assert outcome.output == 'done'
    reply = outcome.reply('search')
    if expected == '<results>':
        assert '"name":"weather"' in reply
        assert len(reply) < 2000
        handling = 'searched on the first 1,000 characters; returns ranked matches'
    else:
        assert reply.startswith(expected)
        assert len(reply) < 300
        handling = reply
    case(AREA, name, handling)


@pytest.mark.parametrize('limit', [0, -5, 10**12])
def test_out_of_range_search_limits_are_clamped(limit: int) -> None:
    outcome = play([[call('search_skills', 'search', {'query': 'weather forecast', 'limit': limit})]])

    assert outcome.output == 'done'
    assert '"name":"weather"' in outcome.reply('search')
    case(AREA, f'search limit {limit:,}', 'clamped to 1..20; results returned')


@pytest.mark.parametrize(
    ('name', 'tool', 'args'),
    [
        ('arguments that are not JSON', 'load_skill', 'not json'),
        ('a number where a skill name belongs', 'load_skill', {'name': 123}),
        ('a missing required argument', 'read_skill_resource', {'name': 'currency'}),
        ('an unexpected extra argument', 'unload_skill', {'name': 'weather', 'force': True}),
        ('a non-integer search limit', 'search_skills', {'query': 'x', 'limit': 'many'}),
    ],
)
def test_malformed_arguments_get_a_validation_retry_and_the_run_finishes(
    name: str, tool: str, args: dict[str, Any] | str
) -> None:
    outcome = play([[call(tool, 'bad', args)]])

    assert outcome.output == 'done'
    reply = outcome.reply('bad')
    assert outcome.retried('bad')
    assert reply.startswith(f'{{"error":"The arguments of `{tool}` are not valid (')
    case(AREA, name, f'validation retry, the run goes on: {reply}')


def test_a_misspelled_meta_tool_gets_the_available_tool_names() -> None:
    outcome = play([[call('load_skil', 'typo', {'name': 'weather'})]])

    assert outcome.output == 'done'
    assert "Available tools: 'load_skill', 'read_skill_resource', 'search_skills', 'unload_skill'" in outcome.reply(
        'typo'
    )
    case(AREA, 'misspelled meta-tool name (`load_skil`)', outcome.reply('typo'))


def test_reading_a_resource_of_an_unknown_skill_suggests_names() -> None:
    outcome = play([[call('read_skill_resource', 'read', {'name': 'curency', 'path': 'rates.md'})]])

    assert outcome.reply('read').startswith("There is no skill named 'curency'. Did you mean 'currency'?")
    case(AREA, 'reading a resource of an unknown skill', outcome.reply('read'))


def test_load_and_unload_of_one_skill_in_one_response_leave_a_state_that_history_agrees_with() -> None:
    outcome = play(
        [[call('load_skill', 'load', {'name': 'weather'}), call('unload_skill', 'unload', {'name': 'weather'})]]
    )
    in_run = outcome.tools_seen[1]

    continued = play([], message_history=outcome.messages)

    assert continued.tools_seen[0] == in_run, 'a continued conversation must see the state the run ended in'
    case(
        AREA,
        'load and unload of the same skill in one response',
        f'state at the end of the run ({"loaded" if "get_forecast" in in_run else "not loaded"}) '
        'is the state replayed from history',
    )


def test_a_model_that_makes_every_mistake_once_still_finishes() -> None:
    steps: list[list[ModelResponsePart]] = [
        [call('search_skills', 'm1', {'query': ''})],
        [call('load_skill', 'm2', {'name': 'wether'})],
        [call('unload_skill', 'm3', {'name': 'weather'})],
        [call('get_forecast', 'm4', {'city': 'Oslo'})],
        [call('load_skill', 'm5', {'name': 'weather'}), call('load_skill', 'm6', {'name': 'weather'})],
        [call('load_skill', 'm7', 'not json')],
        [call('read_skill_resource', 'm8', {'name': 'currency', 'path': 'rates.md'})],
        [
            call('load_skill', 'm9', {'name': 'currency'}),
            call('convert', 'm10', {'amount': 2, 'source': 'EUR', 'target': 'USD'}),
        ],
        [call('read_skill_resource', 'm11', {'name': 'currency', 'path': '../../etc/passwd'})],
        [call('search_skills', 'm12', {'query': 'x' * 50_000, 'limit': -1})],
        [call('load_skil', 'm13', {'name': 'weather'})],
        [call('unload_skill', 'm14', {'name': 'weather'}), call('get_forecast', 'm15', {'city': 'Oslo'})],
        [call('load_skill', 'm16', {'name': 'weather'}), call('get_alerts', 'm17', {'city': 'Oslo'})],
        [call('get_alerts', 'm18', {'town': 'Oslo'})],
        [call('convert', 'ok', {'amount': 2, 'source': 'EUR', 'target': 'USD'})],
        [TextPart('finished despite everything')],
    ]

    outcome = play(steps)

    assert outcome.output == 'finished despite everything'
    assert outcome.reply('ok') == '2.16 USD'
    assert outcome.tools_seen[-1] == sorted(['convert', 'get_alerts', 'get_forecast', *META])
    case(
        AREA,
        f'one run making {sum(len(step) for step in steps) - 2} different mistakes, each once (default retries)',
        f'the run finishes normally after {len(steps)} model responses',
    )


# --- property: any sequence of calls keeps the visible tools equal to the history's loaded skills -------------------

SKILL_TOOLS = {'weather': ['get_alerts', 'get_forecast'], 'currency': ['convert']}
NAMES = st.sampled_from(['weather', 'currency', 'wether', 'WEATHER', '', 'x' * 300, 'currency '])
TOOL_CALLS: dict[str, dict[str, Any]] = {
    'get_forecast': {'city': 'Oslo'},
    'get_alerts': {'city': 'Oslo'},
    'convert': {'amount': 1, 'source': 'EUR', 'target': 'USD'},
}


@st.composite
def model_turns(draw: st.DrawFn) -> list[list[ModelResponsePart]]:
    """Up to 8 responses of 1-3 calls: meta-tools with good and bad names, skill tools, and at most 2 malformed calls."""
    turns: list[list[ModelResponsePart]] = []
    malformed = 0
    for turn in range(draw(st.integers(1, 8))):
        parts: list[ModelResponsePart] = []
        for index in range(draw(st.integers(1, 3))):
            call_id = f't{turn}-{index}'
            kind = draw(st.sampled_from(['load', 'load', 'unload', 'search', 'read', 'tool', 'tool', 'malformed']))
            if kind == 'malformed' and malformed < 2:
                malformed += 1
                parts.append(call('load_skill', call_id, {'name': 7}))
            elif kind in ('load', 'unload'):
                parts.append(call(f'{kind}_skill', call_id, {'name': draw(NAMES)}))
            elif kind == 'search':
                parts.append(call('search_skills', call_id, {'query': draw(st.sampled_from(['', 'weather', 'rate']))}))
            elif kind == 'read':
                path = draw(st.sampled_from(['rates.md', '../x', '']))
                parts.append(call('read_skill_resource', call_id, {'name': draw(NAMES), 'path': path}))
            else:
                tool = draw(st.sampled_from(sorted(TOOL_CALLS)))
                parts.append(call(tool, call_id, TOOL_CALLS[tool]))
        turns.append(parts)
    return turns


@settings(derandomize=True, database=None, deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(turns=model_turns())
def test_any_call_sequence_keeps_visible_tools_equal_to_the_skills_loaded_in_history(
    turns: list[list[ModelResponsePart]],
) -> None:
    checked: list[tuple[list[str], list[str]]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        shown = revealed_from_history(messages, 'skillshelf')  # loaded now, or earlier and unloaded
        expected = sorted([*META, *(tool for name in shown for tool in SKILL_TOOLS[name])])
        checked.append((sorted(tool.name for tool in info.function_tools), expected))
        step = len(checked) - 1
        return ModelResponse(parts=turns[step] if step < len(turns) else [TextPart('done')])

    agent = Agent(FunctionModel(respond), capabilities=[every_meta_tool()], retries=20)
    result = agent.run_sync('go')

    assert result.output == 'done'
    for seen, expected in checked:
        assert seen == expected
    successes = sum(
        1
        for message in result.all_messages()
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
        and part.tool_name == 'get_forecast'
        and part.outcome == 'success'
        and 'which was unloaded' not in str(part.content)
    )
    assert len(forecast_calls) == successes, 'a hidden tool body ran'
    forecast_calls.clear()
    final = loaded_from_history(result.all_messages(), 'skillshelf')
    example(
        'call-sequences',
        'Any sequence of 1-8 responses mixing load/unload/search/read with good and bad names, skill-tool calls '
        '(hidden or not) and malformed arguments: the run finishes, the tools offered at every request are exactly '
        'those of the skills loaded at some point of the history, and the body of a tool whose skill is not loaded '
        'never runs',
        f'finished with {len(final)} skill(s) loaded',
    )
