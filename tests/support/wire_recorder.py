"""pydantic-ai's real Anthropic, OpenAI Chat and OpenAI Responses model classes, talking to a recording HTTP
transport instead of the provider: every request body is kept, and each reply is the next scripted tool call.

What a provider caches is a prefix of the request in its own order (Anthropic: tools, system, messages; OpenAI:
tools, instructions, input), so `cached_prefix` compares those parts of consecutive requests.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Literal

import httpx2 as httpx
from anthropic import AsyncAnthropic
from openai import AsyncOpenAI
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider

Provider = Literal['anthropic', 'openai-chat', 'openai-responses']
Step = tuple[str, dict[str, Any]] | None
"""A tool call (name, arguments), or `None` for a final text answer."""

STEPS: list[Step] = [
    ('load_skill', {'name': 'weather'}),
    ('get_forecast', {'city': 'Paris'}),
    ('unload_skill', {'name': 'weather'}),
    ('get_forecast', {'city': 'Rome'}),
    ('load_skill', {'name': 'currency'}),
    ('convert', {'amount': 10, 'source': 'EUR', 'target': 'USD'}),
    None,
]
"""The prompt-cache scenario (`test_wire_cache.py`, `benchmarks/prompt_cache.py`): load a skill, call its tool,
unload it, call the tool again (refused), load another skill and call its tool."""


@dataclass
class Recorder:
    """An HTTP transport handler that records request bodies and plays back `steps`, one per request."""

    provider: Provider
    steps: Sequence[Step]
    bodies: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    def model(self) -> Model:
        http = httpx.AsyncClient(transport=httpx.MockTransport(self._respond))
        if self.provider == 'anthropic':
            client = AsyncAnthropic(api_key='recorded', http_client=http)
            return AnthropicModel('claude-sonnet-4-6', provider=AnthropicProvider(anthropic_client=client))
        openai = OpenAIProvider(openai_client=AsyncOpenAI(api_key='recorded', http_client=http))
        if self.provider == 'openai-chat':
            return OpenAIChatModel('gpt-4o', provider=openai)
        return OpenAIResponsesModel('gpt-5', provider=openai)

    def _respond(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        number = len(self.bodies)
        step = self.steps[number - 1] if number <= len(self.steps) else None
        if self.provider == 'anthropic':
            message = _anthropic_message(number, step)
            if body.get('stream'):
                stream = _anthropic_events(message)
                return httpx.Response(200, headers={'content-type': 'text/event-stream'}, content=stream.encode())
            return httpx.Response(200, json=message)
        if self.provider == 'openai-chat':
            return httpx.Response(200, json=_chat_completion(number, step))
        return httpx.Response(200, json=_response(number, step))

    def cache_parts(self, body: dict[str, Any]) -> list[Any]:
        """The parts of a request body a provider's prompt cache keys on, in order, without cache markers."""
        body = _without_cache_control(body)
        if self.provider == 'anthropic':
            # Tools declared `defer_loading` sit at the end of `tools`, outside Anthropic's cache key.
            tools = [tool for tool in body.get('tools', []) if not tool.get('defer_loading')]
            return [*tools, body.get('system'), *body['messages']]
        if self.provider == 'openai-chat':
            return [*body.get('tools', []), *body['messages']]
        return [*body.get('tools', []), body.get('instructions'), *body['input']]

    def prefix_kept(self) -> list[bool]:
        """For each request after the first: whether the one before it is a prefix of it."""
        parts = [self.cache_parts(body) for body in self.bodies]
        return [after[: len(before)] == before for before, after in pairwise(parts)]

    def reused_characters(self) -> tuple[int, int]:
        """Characters of the requests after the first that repeat the previous request's longest common prefix of
        parts (what a provider can serve from cache), and their total characters."""
        parts = [[json.dumps(part, sort_keys=True) for part in self.cache_parts(body)] for body in self.bodies]
        reused = total = 0
        for before, after in pairwise(parts):
            common = 0
            while common < min(len(before), len(after)) and before[common] == after[common]:
                common += 1
            reused += sum(len(part) for part in after[:common])
            total += sum(len(part) for part in after)
        return reused, total


def _anthropic_message(number: int, step: Step) -> dict[str, Any]:
    if step is None:
        content: list[dict[str, Any]] = [{'type': 'text', 'text': 'done'}]
    else:
        content = [{'type': 'tool_use', 'id': f'toolu_{number}', 'name': step[0], 'input': step[1]}]
    return {
        'id': f'msg_{number}',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-6',
        'content': content,
        'stop_reason': 'end_turn' if step is None else 'tool_use',
        'stop_sequence': None,
        'usage': {'input_tokens': 10, 'output_tokens': 5},
    }


def _anthropic_events(message: dict[str, Any]) -> str:
    """`message` as the server-sent events of a streamed Messages API reply."""
    events: list[str] = []

    def event(kind: str, **data: Any) -> None:
        events.append(f'event: {kind}\ndata: {json.dumps({"type": kind, **data})}\n\n')

    event('message_start', message={**message, 'content': [], 'stop_reason': None})
    for index, block in enumerate(message['content']):
        if block['type'] == 'text':
            event('content_block_start', index=index, content_block={'type': 'text', 'text': ''})
            event('content_block_delta', index=index, delta={'type': 'text_delta', 'text': block['text']})
        else:
            event('content_block_start', index=index, content_block={**block, 'input': {}})
            delta = {'type': 'input_json_delta', 'partial_json': json.dumps(block['input'])}
            event('content_block_delta', index=index, delta=delta)
        event('content_block_stop', index=index)
    event(
        'message_delta',
        delta={'stop_reason': message['stop_reason'], 'stop_sequence': None},
        usage={'output_tokens': 5},
    )
    event('message_stop')
    return ''.join(events)


def _chat_completion(number: int, step: Step) -> dict[str, Any]:
    if step is None:
        message: dict[str, Any] = {'role': 'assistant', 'content': 'done'}
    else:
        function = {'name': step[0], 'arguments': json.dumps(step[1])}
        message = {
            'role': 'assistant',
            'content': None,
            'tool_calls': [{'id': f'call_{number}', 'type': 'function', 'function': function}],
        }
    return {
        'id': f'chatcmpl-{number}',
        'object': 'chat.completion',
        'created': 0,
        'model': 'gpt-4o',
        'choices': [{'index': 0, 'message': message, 'finish_reason': 'stop' if step is None else 'tool_calls'}],
        'usage': {'prompt_tokens': 10, 'completion_tokens': 5, 'total_tokens': 15},
    }


def _response(number: int, step: Step) -> dict[str, Any]:
    if step is None:
        text = {'type': 'output_text', 'text': 'done', 'annotations': []}
        output: dict[str, Any] = {
            'type': 'message',
            'id': f'msg_{number}',
            'role': 'assistant',
            'status': 'completed',
            'content': [text],
        }
    else:
        output = {
            'type': 'function_call',
            'id': f'fc_{number}',
            'call_id': f'call_{number}',
            'name': step[0],
            'arguments': json.dumps(step[1]),
            'status': 'completed',
        }
    return {
        'id': f'resp_{number}',
        'object': 'response',
        'created_at': 0,
        'status': 'completed',
        'model': 'gpt-5',
        'output': [output],
        'parallel_tool_calls': True,
        'tool_choice': 'auto',
        'tools': [],
        'usage': {
            'input_tokens': 10,
            'output_tokens': 5,
            'total_tokens': 15,
            'input_tokens_details': {'cached_tokens': 0},
            'output_tokens_details': {'reasoning_tokens': 0},
        },
    }


def _without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        items = value.items()  # pyright: ignore[reportUnknownVariableType]
        return {key: _without_cache_control(item) for key, item in items if key != 'cache_control'}
    if isinstance(value, list):
        return [_without_cache_control(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return value
