"""Which skills are loaded, derived from what `load_skill` and `unload_skill` returned in the message history.

Deriving the state from history (rather than keeping it on an object) makes it survive a continued
conversation (`message_history=`) and replay deterministically under durable execution.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, cast

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, post_compaction_window
from pydantic_ai.tools import ToolDefinition

DEFAULT_ID = 'skillshelf'
"""The capability id unless you pass another; one `Skills` per agent merges into it."""
TAG = 'skillshelf'
"""The key under which skillshelf marks tool definitions and tool-return metadata."""

MetaOperation = Literal['search', 'load', 'unload', 'read', 'run']


def skill_tool_tag(capability_id: str, skill: str) -> dict[str, Any]:
    """Tool metadata marking a tool as belonging to `skill` of the capability `capability_id`."""
    return {TAG: {'capability': capability_id, 'skill': skill}}


def meta_tool_tag(capability_id: str, operation: MetaOperation) -> dict[str, Any]:
    """Tool metadata marking one of the capability's meta-tools."""
    return {TAG: {'capability': capability_id, 'meta': operation}}


def state_change(capability_id: str, operation: Literal['load', 'unload'], skill: str) -> dict[str, Any]:
    """Tool-return metadata recording that `skill` was loaded or unloaded; never sent to the model."""
    return {TAG: {'capability': capability_id, 'op': operation, 'skill': skill}}


def tag_of(tool_def: ToolDefinition, capability_id: str) -> Mapping[str, Any] | None:
    """The skillshelf tag of `tool_def` if it belongs to the capability `capability_id`."""
    return record_of(tool_def.metadata, capability_id)


def loaded_from_history(messages: Sequence[ModelMessage], capability_id: str) -> list[str]:
    """Names of the skills loaded at the end of `messages`, in the order they were loaded.

    Only the window after the latest compaction counts: a summary replaces the instructions that
    `load_skill` returned, so the model must load the skill again to see them.
    """
    loaded: dict[str, None] = {}
    for operation, skill in _state_changes(messages, capability_id):
        if operation == 'load':
            loaded[skill] = None
        else:
            loaded.pop(skill, None)
    return list(loaded)


def revealed_from_history(messages: Sequence[ModelMessage], capability_id: str) -> set[str]:
    """Names of the skills loaded at any point of `messages` (after the latest compaction), unloaded or not.

    Their tools stay on the wire after an unload: removing a definition would change every later request from the
    point where it was added, and so lose the provider's prompt cache. Calls to them are refused instead.
    """
    return {skill for operation, skill in _state_changes(messages, capability_id) if operation == 'load'}


def _state_changes(messages: Sequence[ModelMessage], capability_id: str) -> Iterator[tuple[str, str]]:
    for message in post_compaction_window(messages):
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if not isinstance(part, ToolReturnPart):
                continue
            record = record_of(part.metadata, capability_id)
            if record is not None and isinstance(record.get('skill'), str) and record.get('op') in ('load', 'unload'):
                yield record['op'], record['skill']


def record_of(metadata: Any, capability_id: str) -> Mapping[str, Any] | None:
    """The skillshelf record in tool or tool-return `metadata` if it belongs to the capability `capability_id`."""
    if not isinstance(metadata, Mapping):
        return None
    record = cast('Mapping[str, Any]', metadata).get(TAG)
    if not isinstance(record, Mapping):
        return None
    record = cast('Mapping[str, Any]', record)
    return record if record.get('capability') == capability_id else None


def loaded_skills(messages: Sequence[ModelMessage], capability_id: str = DEFAULT_ID) -> list[str]:
    """The skills a conversation has loaded at its end, in load order: pass a finished run's `all_messages()`, or a
    stored history before continuing it. `capability_id` is the `id` of the `Skills` that loaded them."""
    return loaded_from_history(messages, capability_id)
