"""Answers to calls the model should not have made, written so it recovers instead of losing the run.

pydantic-ai refuses a call to a tool that `prepare_tools` hid with a generic "Unknown tool name" and charges the
refusal to that tool's retry budget (1 by default), so a model that calls a skill's tool before loading the skill
twice in a row ends the run. The same budget ends a run after a few malformed meta-tool calls. A confused model
must be steered, not stopped: these refusals are rewritten to name the skill to load, and they are not charged.
A loaded skill's tools keep pydantic-ai's normal retry rules for their own mistakes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping, MutableSequence, Set
from dataclasses import replace
from typing import cast

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart

from .._text import SHOWN_CHARACTERS, one_line, shown

__all__ = (
    'describe_problems',
    'explain_hidden_tool_refusals',
    'forgive',
    'hidden_tool_message',
    'invalid_arguments_message',
    'sanitized',
    'unloaded_tool_message',
)


def hidden_tool_message(tool: str, skill: str, loaded: bool) -> str:
    """What the model is told when it calls `tool`, which belongs to `skill`, while the tool is hidden."""
    if loaded:
        return (
            f'The tool {tool!r} was called before its skill {skill!r} was loaded, so it did not run. '
            f'{skill!r} is loaded now: call {tool!r} again.'
        )
    return (
        f'The tool {tool!r} belongs to the skill {skill!r}, which is not loaded, so it did not run. '
        f'Call `load_skill` with {skill!r} first; its tools can be called from your next response.'
    )


def unloaded_tool_message(tool: str, skill: str) -> str:
    """What the model is told when it calls `tool` after unloading its skill (the tool is still listed)."""
    return (
        f'The tool {tool!r} belongs to the skill {skill!r}, which was unloaded, so it did not run. '
        f'Call `load_skill` with {skill!r} to use it again.'
    )


def explain_hidden_tool_refusals(
    messages: MutableSequence[ModelMessage], owners: Mapping[str, str], loaded: Set[str]
) -> ModelRequest | None:
    """Rewrite the latest request's "Unknown tool name" refusals of skill tools (`owners`: tool → skill) so they
    name the skill to load. Returns the rewritten request, which replaces the old one in `messages`, or `None`."""
    if not messages or not isinstance(request := messages[-1], ModelRequest):
        return None
    parts = list(request.parts)
    changed = False
    for position, part in enumerate(parts):
        if not isinstance(part, ToolReturnPart) or part.retry is None or part.retry.cause != 'unknown_tool':
            continue
        if (skill := owners.get(part.tool_name)) is not None:
            parts[position] = replace(part, content=hidden_tool_message(part.tool_name, skill, skill in loaded))
            changed = True
    if not changed:
        return None
    messages[-1] = rewritten = replace(request, parts=parts)
    return rewritten


def forgive(retries: MutableMapping[str, int], tool_names: Set[str]) -> None:
    """Drop what `tool_names` were charged: refusals of hidden tools and meta-tool mistakes never end a run."""
    for name in tool_names:
        retries.pop(name, None)


def sanitized(value: object) -> object:
    """`value` (a tool call's arguments) with every lone surrogate replaced: a model can send one as a JSON escape
    (`"\\ud800"`), and text that cannot be encoded must never reach a reply, the history or its serialisation."""
    if isinstance(value, str):
        return _SURROGATE.sub('\ufffd', value)
    if isinstance(value, dict):
        return {sanitized(key): sanitized(item) for key, item in cast('dict[object, object]', value).items()}
    if isinstance(value, list):
        return [sanitized(item) for item in cast('list[object]', value)]
    return value


_SURROGATE = re.compile('[\ud800-\udfff]')


def invalid_arguments_message(tool: str, problems: str) -> str:
    """The reply to a meta-tool call whose arguments do not fit its schema."""
    return f'The arguments of `{tool}` are not valid ({problems}). Call it again with arguments that fit its schema.'


def describe_problems(errors: list[dict[str, object]]) -> str:
    """pydantic validation errors on one line, each input shown escaped and shortened."""
    described: list[str] = []
    for error in errors[:5]:
        location = '.'.join(str(part) for part in cast('tuple[object, ...]', error.get('loc') or ())) or 'arguments'
        message = str(error.get('msg', 'invalid'))
        given = error.get('input')
        if given is not None:
            message += f', got {shown(given) if isinstance(given, str) else one_line(repr(given), SHOWN_CHARACTERS)}'
        described.append(f'{location}: {message}')
    return '; '.join(described)
