"""User invocation: a prompt that starts with `/name` (Claude Code) or `$name` (Codex), naming a skill the user may
invoke, loads that skill before the model's first request, with the rest of the prompt as its arguments.

The load goes into the history as if the model had called `load_skill` (a call and its return, recorded like any
other load), so everything that derives state from the history (the next run, a durable replay, `loaded_skills`)
sees it, and the model reads the instructions in the first request without a round trip.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai import ToolReturn
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserContent

__all__ = ('SkillCommand', 'invocation_messages', 'parse_invocation')

_COMMAND = re.compile(r'\s*[/$](?P<name>[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?:\s+(?P<arguments>.*?))?\s*', re.DOTALL)


@dataclass(frozen=True)
class SkillCommand:
    """A skill a user may invoke as `/name`, for a chat UI's autocomplete."""

    name: str
    """What follows the `/`."""
    description: str
    """The skill's description."""
    argument_hint: str | None
    """What the skill expects after its name (frontmatter `argument-hint`, e.g. `'[version]'`), if it says."""


def parse_invocation(prompt: str | Sequence[UserContent] | None) -> tuple[str, str] | None:
    """The skill name and argument text of a prompt such as `/release-notes v2.1`, or `None` if it is not one."""
    if not isinstance(prompt, str) or (match := _COMMAND.fullmatch(prompt)) is None:
        return None
    return match['name'], match['arguments'] or ''


def invocation_messages(call_id: str, name: str, arguments: str, reply: ToolReturn[Any] | str) -> list[ModelMessage]:
    """The `load_skill` call and its return that record a user's invocation of `name`."""
    call = ToolCallPart('load_skill', {'name': name, 'arguments': arguments}, tool_call_id=call_id)
    if isinstance(reply, str):
        returned = ToolReturnPart('load_skill', reply, tool_call_id=call_id)
    else:
        returned = ToolReturnPart('load_skill', reply.return_value, tool_call_id=call_id, metadata=reply.metadata)
    return [ModelResponse(parts=[call]), ModelRequest(parts=[returned])]
