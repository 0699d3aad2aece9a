"""Prompt caches survive load and unload, checked on the wire of pydantic-ai's real provider model classes.

A run loads a skill, calls its tool, unloads it, calls the tool again (refused) and loads another skill. On
Anthropic and OpenAI Responses every request keeps the one before it as a prefix of what the provider caches; on
OpenAI Chat, which has no channel for tools added mid-run, only the load changes the `tools` array.
"""

from __future__ import annotations

import pytest
from pydantic_ai import Agent

from skillshelf import Skills

from skill_fixtures import currency, forecast_calls, weather
from wire_recorder import STEPS, Provider, Recorder


def record(provider: Provider) -> Recorder:
    recorder = Recorder(provider, STEPS)
    Agent(recorder.model(), capabilities=[Skills(skills=[weather, currency])]).run_sync('Weather in Paris?')
    assert len(recorder.bodies) == len(STEPS)
    assert forecast_calls == ['Paris'], 'the call after the unload must be refused'
    return recorder


@pytest.mark.parametrize('provider', ['anthropic', 'openai-responses'])
def test_every_request_keeps_the_previous_one_as_its_cached_prefix(provider: Provider) -> None:
    recorder = record(provider)
    assert recorder.prefix_kept() == [True] * (len(STEPS) - 1)


def test_openai_chat_changes_only_at_each_load() -> None:
    """Chat Completions has no way to add a tool mid-conversation without changing `tools`: each load does."""
    recorder = record('openai-chat')
    assert recorder.prefix_kept() == [False, True, True, True, False, True]


def test_a_refused_call_after_unload_says_how_to_get_the_tool_back() -> None:
    recorder = record('anthropic')
    last = recorder.bodies[-1]['messages']
    refusals = [
        block['content'][0]['text']
        for message in last
        if message['role'] == 'user'
        for block in message['content']
        if block.get('type') == 'tool_result' and 'which was unloaded' in str(block['content'])
    ]
    assert refusals == [
        "The tool 'get_forecast' belongs to the skill 'weather', which was unloaded, so it did not run. "
        "Call `load_skill` with 'weather' to use it again."
    ]
