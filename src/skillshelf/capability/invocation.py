"""User invocation: a prompt that starts with `/name` (Claude Code) or `$name` (Codex), naming a skill the user may
invoke, loads that skill before the model's first request, with the rest of the prompt as its arguments.

The load goes into the history as if the model had called `load_skill` (a call and its return, recorded like any
other load), so everything that derives state from the history (the next run, a durable replay, `loaded_skills`)
sees it, and the model reads the instructions in the first request without a round trip.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai import RunContext, ToolReturn
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserContent

from ..markdown.names import MAX_QUALIFIED_NAME_LENGTH, qualified_name_problem
from .durable import off_event_loop
from .fork import forks
from .history import state_change
from .meta_tools import load_reply
from .operations import Operation
from .shelf import Shelf
from .telemetry import traced_meta_call

__all__ = ('SkillCommand', 'UserLoad', 'invocation_messages', 'invoke_from_prompt', 'parse_invocation', 'user_load')

UserLoad = tuple[Literal['loaded', 'unreadable', 'fork'], str]
"""What a user's `/name` does: load (with the text the load returns), explain (why it cannot be read), or fork
(with what its sub-agent's run returns)."""

_COMMAND = re.compile(rf'[/$](?P<name>[^\W_](?:[\w:-]{{0,{MAX_QUALIFIED_NAME_LENGTH - 2}}}[^\W_])?)(?:\s|\Z)')
"""`/name` at the start of a prompt, then a space or the end: the name is checked against the naming rules
(`name_problem`) once matched, so a user can invoke every name a skill may have (`/data_analysis`, `/café-été`)
and nothing else. The rest of the prompt, stripped, is the arguments: taken by slicing, not by the pattern, so a
prompt such as `/name a` and 200,000 spaces and a letter costs one pass (a lazy `.*?` before trailing whitespace took minutes)."""


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
    if not isinstance(prompt, str):
        return None
    text = prompt.lstrip()
    if (match := _COMMAND.match(text)) is None or qualified_name_problem(match['name']) is not None:
        return None
    return match['name'], text[match.end('name') :].strip()


def invocation_messages(call_id: str, name: str, arguments: str, reply: ToolReturn[Any] | str) -> list[ModelMessage]:
    """The `load_skill` call and its return that record a user's invocation of `name`."""
    call = ToolCallPart('load_skill', {'name': name, 'arguments': arguments}, tool_call_id=call_id)
    if isinstance(reply, str):
        returned = ToolReturnPart('load_skill', reply, tool_call_id=call_id)
    else:
        returned = ToolReturnPart('load_skill', reply.return_value, tool_call_id=call_id, metadata=reply.metadata)
    return [ModelResponse(parts=[call]), ModelRequest(parts=[returned])]


async def user_load(ctx: RunContext[Any], shelf: Shelf, name: str, arguments: str) -> UserLoad | None:
    """What a user's `/name` does: `('loaded', reply)` with the text the load returns, `('unreadable', why)`, or
    `('fork', reply)` for a skill that runs as a sub-agent, which it runs; `None` when `name` is no skill a user may
    invoke. Reads the skill's files and runs a fork's sub-agent: `Skills` makes it a recorded durable operation."""
    skill = await off_event_loop(lambda: shelf.library.get(name))  # its first use reads its files
    if skill is None or not skill.user_invocable:
        return None
    if forks(skill):
        return 'fork', await shelf.fork(ctx, skill, arguments)
    library, capability_id, with_tools = shelf.library, shelf.capability_id, shelf.with_tools
    reply = await load_reply(
        library, capability_id, name, with_tools, arguments, ctx.workspace, shelf.place, shelf.lacks, shelf.commands
    )
    return ('unreadable', reply) if isinstance(reply, str) else ('loaded', str(reply.return_value))


async def invoke_from_prompt(
    ctx: RunContext[Any],
    shelf: Shelf,
    loaded: list[str],
    recorded_user_load: Callable[[RunContext[Any], str, str], Awaitable[UserLoad | None]],
) -> None:
    """Load the skill a prompt such as `/release-notes v2.1` names, now, recorded in the history like a model's load,
    so its instructions are in the model's first request; `loaded` (the run's loaded skills) gains it.

    `recorded_user_load` is `user_load` as the capability's durable operation: it is asked whatever the prompt names,
    since a replay must schedule the same operations as the original run, so whether to ask cannot depend on the
    library as it is at replay time.
    """
    if (parsed := parse_invocation(ctx.prompt)) is None:
        return
    name, arguments = parsed
    if (outcome := await recorded_user_load(ctx, name, arguments)) is None:
        return
    status, text = outcome

    async def invoke() -> ToolReturn[Any] | str:
        if status in ('fork', 'unreadable'):
            return text
        if name not in loaded:
            loaded.append(name)
        return ToolReturn(text, metadata=state_change(shelf.capability_id, Operation.LOAD, name))

    reply = await traced_meta_call(ctx, Operation.LOAD, {'name': name, 'invoked_by': 'user'}, loaded, invoke)
    ctx.enqueue(*invocation_messages(f'{shelf.capability_id}-invoke-{ctx.run_id}', name, arguments, reply))
