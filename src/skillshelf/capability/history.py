"""Which skills are loaded, derived from what `load_skill` and `unload_skill` returned in the message history.

Deriving the state from history (rather than keeping it on an object) makes it survive a continued
conversation (`message_history=`) and replay deterministically under durable execution.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, post_compaction_window

from .operations import TAG, Operation, record_of

__all__ = (
    'DEFAULT_ID',
    'loaded_from_history',
    'loaded_skills',
    'recorded_change',
    'revealed_from_history',
    'state_change',
)

DEFAULT_ID = 'skillshelf'
"""The capability id unless you pass another; one `Skills` per agent merges into it."""


def state_change(capability_id: str, operation: Operation, skill: str) -> dict[str, Any]:
    """Tool-return metadata recording that `skill` was loaded or unloaded (`operation`); never sent to the model."""
    return {TAG: {'capability': capability_id, 'op': operation.value, 'skill': skill}}


def loaded_from_history(messages: Sequence[ModelMessage], capability_id: str) -> list[str]:
    """Names of the skills loaded at the end of `messages`, in the order they were loaded.

    Only the window after the latest compaction counts: a summary replaces the instructions that
    `load_skill` returned, so the model must load the skill again to see them.
    """
    loaded: dict[str, None] = {}
    for operation, skill in _state_changes(messages, capability_id):
        if operation is Operation.LOAD:
            loaded[skill] = None
        else:
            loaded.pop(skill, None)
    return list(loaded)


def revealed_from_history(messages: Sequence[ModelMessage], capability_id: str) -> set[str]:
    """Names of the skills loaded at any point of `messages` (after the latest compaction), unloaded or not.

    Their tools stay on the wire after an unload: removing a definition would change every later request from the
    point where it was added, and so lose the provider's prompt cache. Calls to them are refused instead.
    """
    return {skill for operation, skill in _state_changes(messages, capability_id) if operation is Operation.LOAD}


def _state_changes(messages: Sequence[ModelMessage], capability_id: str) -> Iterator[tuple[Operation, str]]:
    for message in post_compaction_window(messages):
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and (change := recorded_change(part.metadata, capability_id)):
                yield change


def recorded_change(metadata: Any, capability_id: str) -> tuple[Operation, str] | None:
    """The load or unload that tool-return `metadata` records for the capability `capability_id`, if any."""
    record = record_of(metadata, capability_id)
    if record is None or not isinstance(skill := record.get('skill'), str):
        return None
    operation = record.get('op')
    if operation == Operation.LOAD.value:
        return Operation.LOAD, skill
    return (Operation.UNLOAD, skill) if operation == Operation.UNLOAD.value else None


def loaded_skills(messages: Sequence[ModelMessage], capability_id: str = DEFAULT_ID) -> list[str]:
    """The skills a conversation has loaded at its end, in load order: pass a finished run's `all_messages()`, or a
    stored history before continuing it. `capability_id` is the `id` of the `Skills` that loaded them."""
    return loaded_from_history(messages, capability_id)
