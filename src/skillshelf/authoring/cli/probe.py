"""What the model actually receives: a real agent run against a scripted model that records every request.

`catalog`, `show` and `search` report what these runs capture, not a reconstruction, so they stay true
however the capability builds its instructions, tools and tool results.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition

from ...capability.meta_tools import META_TOOL_NAMES
from ...capability.skills import Skills
from ..lint import CHARACTERS_PER_TOKEN

__all__ = ('Capture', 'Size', 'replay', 'size_of', 'tool_json')


@dataclass
class Capture:
    """Every request the model received in one run, and the tool results it was sent."""

    requests: list[AgentInfo] = field(default_factory=list[AgentInfo])
    """What the model was given on each request: instructions and tool definitions."""
    returns: list[ToolReturnPart] = field(default_factory=list[ToolReturnPart])
    """The results of the scripted tool calls, in call order, as the model received them."""


@dataclass(frozen=True)
class Size:
    """A size in characters and estimated tokens."""

    characters: int
    """Characters."""

    @property
    def tokens(self) -> int:
        """Estimated tokens: characters / 4, a rough rule that holds for English prose on most models."""
        return -(-self.characters // CHARACTERS_PER_TOKEN)

    def __add__(self, other: Size) -> Size:
        return Size(self.characters + other.characters)


def replay(capability: Skills[Any], calls: Sequence[tuple[str, dict[str, Any]]] = ()) -> Capture:
    """Run an agent with `capability`: the model makes `calls` on its first request, then stops."""
    capture = Capture()

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        capture.requests.append(info)
        if len(capture.requests) == 1 and calls:
            return ModelResponse(
                parts=[
                    ToolCallPart(name, args, tool_call_id=f'call-{index}') for index, (name, args) in enumerate(calls)
                ]
            )
        last = messages[-1]
        if isinstance(last, ModelRequest):
            capture.returns.extend(part for part in last.parts if isinstance(part, ToolReturnPart))
        return ModelResponse(parts=[TextPart('done')])

    Agent(FunctionModel(model), capabilities=[capability]).run_sync('Which skills do you have?')
    capture.returns.sort(key=lambda part: int(part.tool_call_id.rsplit('-', 1)[-1]))
    return capture


def tool_json(tool: ToolDefinition) -> dict[str, Any]:
    """A tool definition as providers receive it: name, description and JSON schema of the arguments."""
    return {'name': tool.name, 'description': tool.description or '', 'parameters': tool.parameters_json_schema}


def size_of(text: str) -> Size:
    """The size of a text."""
    return Size(len(text))


def tools_size(tools: Sequence[ToolDefinition]) -> Size:
    """The size of tool definitions, serialised as JSON."""
    return Size(sum(len(json.dumps(tool_json(tool), ensure_ascii=False)) for tool in tools))


def skill_tools(tools: Sequence[ToolDefinition]) -> list[ToolDefinition]:
    """The tools that belong to skills rather than to the capability's meta-tools."""
    return [tool for tool in tools if tool.name not in META_TOOL_NAMES]
