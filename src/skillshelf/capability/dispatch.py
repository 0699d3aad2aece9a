"""One call of a tool the capability owns, with the run's load state applied and recorded around it.

A meta-tool's body depends on the library and its arguments only (it can run anywhere, a durable activity too);
whether a skill is loaded is decided here, on the run's state, never on the library as it is now, so a durable
replay takes the branches the original run took even if skill folders were added or removed since.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import WrapToolExecuteHandler

from .fork import forks
from .meta_tools import unknown_skill_message, user_only_message
from .operations import Operation, Tag
from .refusals import unloaded_tool_message
from .shelf import Shelf
from .state import LoadState
from .telemetry import traced_meta_call

__all__ = ('execute',)


async def execute(
    ctx: RunContext[Any],
    tool_name: str,
    tag: Tag,
    args: dict[str, Any],
    handler: WrapToolExecuteHandler,
    state: LoadState,
    shelf: Shelf,
) -> Any:
    """Run one call of the tool `tool_name` tagged `tag`: a skill's tool only while its skill is loaded, a meta-tool in a span (see
    `telemetry`) with the load state applied."""
    if tag.operation is None:
        if tag.skill is not None and tag.skill not in state.loaded:  # still listed after an unload
            return unloaded_tool_message(tool_name, tag.skill)
        return await handler(args)
    operation = tag.operation
    return await traced_meta_call(
        ctx, operation, args, state.loaded, lambda: _meta_call(ctx, operation, args, handler, state, shelf)
    )


async def _meta_call(
    ctx: RunContext[Any],
    operation: Operation,
    args: dict[str, Any],
    handler: WrapToolExecuteHandler,
    state: LoadState,
    shelf: Shelf,
) -> Any:
    name = args.get('name')
    if operation is Operation.SEARCH:
        return state.mark_loaded(await handler(args))
    if not isinstance(name, str):
        return await handler(args)
    if operation is Operation.LOAD:
        # The catalog's entry, not a use: the tool's `library.get` scans the skill at its first use, off the loop.
        # Nothing is awaited before `state.load`, so a read called beside the load finds the skill loaded.
        skill = shelf.library.skills.get(name)
        if skill is not None and forks(skill):
            return await handler(args)  # the tool runs the sub-agent; nothing is loaded, so several may run at once
        return await state.load(name, args, handler, shelf.capability_id)  # the tool explains a bad name
    if name not in state.loaded and name not in shelf.library.skills:
        return unknown_skill_message(shelf.library, name, shelf.offers_search())
    if operation is Operation.UNLOAD:
        return await state.unload(name, args, handler, shelf.capability_id)
    if name not in state.loaded:
        if (skill := shelf.library.skills.get(name)) is not None and not skill.model_invocable:
            return user_only_message(name)
        then = 'run its scripts' if operation is Operation.RUN else 'read its files'
        return f'The skill {name!r} is not loaded: call `load_skill` with {name!r} first, then {then}.'
    return await handler(args)
