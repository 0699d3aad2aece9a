"""A scripted `FunctionModel` that records what the model received on every request, and the helpers to write its
scripts (`call`) and read a run's tool returns (`tool_returns`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

META = ['load_skill', 'read_skill_resource', 'search_skills', 'unload_skill']
"""Every meta-tool's name, sorted, as the model sees them when the library uses them all."""
SMALL = ['load_skill', 'unload_skill']
"""The meta-tools of a small library whose skills have tools and no files: its catalog lists every skill whole, so
there is no `search_skills`, and nothing for `read_skill_resource` to read."""
SMALL_WITH_FILES = ['load_skill', 'read_skill_resource', 'unload_skill']
"""The meta-tools of a small library where a skill has files too."""
NO_CATALOG = 0
"""A catalog budget that lists no skill, so `search_skills` is how the model finds them: a small library otherwise
lists every skill whole and leaves `search_skills` out. For tests of search in small libraries."""


@dataclass
class Request:
    """What the model received on one request."""

    tools: list[str]
    """Tool names on the wire, sorted."""
    instructions: str | None
    messages: list[ModelMessage]


@dataclass
class Script:
    """A model that plays back one response per request and records every request."""

    steps: Sequence[Sequence[ModelResponsePart]]
    requests: list[Request] = field(default_factory=list[Request])

    def model(self) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.requests.append(
                Request(sorted(tool.name for tool in info.function_tools), info.instructions, list(messages))
            )
            step = len(self.requests) - 1
            return ModelResponse(parts=list(self.steps[step]) if step < len(self.steps) else [TextPart('done')])

        return FunctionModel(respond)


def call(tool: str, **args: Any) -> ToolCallPart:
    """A tool call part, for scripts."""
    return ToolCallPart(tool, args)


def tool_returns(messages: Sequence[ModelMessage], tool: str) -> list[Any]:
    """The contents of every return of `tool` in `messages`, in order."""
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == tool
    ]


FORK_PREAMBLE = 'You are carrying out the skill'
"""How a forked skill's sub-agent's instructions begin: `parent_and_fork` tells its requests apart by it."""


def parent_and_fork(parent: Script, fork: Script) -> FunctionModel:
    """One model for a parent agent and the sub-agents of its forked skills (which run on the parent's model unless
    the skill names one): `fork` answers the requests whose instructions are a sub-agent's, `parent` the others."""
    parent_function, fork_function = parent.model().function, fork.model().function
    assert parent_function is not None
    assert fork_function is not None

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        forked = info.instructions is not None and info.instructions.startswith(FORK_PREAMBLE)
        return (fork_function if forked else parent_function)(messages, info)  # pyright: ignore[reportReturnType]

    return FunctionModel(respond)
