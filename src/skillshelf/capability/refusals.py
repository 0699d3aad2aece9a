"""Answers to calls the model should not have made, written so it recovers instead of losing the run.

pydantic-ai refuses a call to a tool that `prepare_tools` hid with a generic "Unknown tool name" and charges the
refusal to that tool's retry budget (1 by default), so a model that calls a skill's tool before loading the skill
twice in a row ends the run. The same budget ends a run after a few malformed meta-tool calls. A confused model
must be steered, not stopped: these refusals are rewritten to name the skill to load, and they are not charged.
A loaded skill's tools keep pydantic-ai's normal retry rules for their own mistakes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, MutableMapping, MutableSequence, Sequence, Set
from dataclasses import replace
from typing import cast

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart

from .._text import SHOWN_CHARACTERS, one_line, shown

__all__ = (
    'describe_problems',
    'explain_unknown_tool_refusals',
    'forgive',
    'hidden_tool_message',
    'invalid_arguments_message',
    'sanitized',
    'skill_called_as_tool_message',
    'unknown_tool_refusals',
    'unloaded_tool_message',
    'unused_search_message',
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


def skill_called_as_tool_message(tool: str, skill: str) -> str:
    """What the model is told when it calls a skill's name (`tool`) as if it were a tool."""
    return (
        f'{tool!r} is a skill, not a tool: call `load_skill` with {skill!r}; its instructions say what to do, and '
        'its tools (if it has any) can be called from your next response.'
    )


def unused_search_message() -> str:
    """What the model is told when it calls `search_skills` where it is not offered."""
    return (
        'Every skill is listed in your instructions, so `search_skills` is not offered: pick a skill from that list '
        'and call `load_skill`, or carry on without one.'
    )


def explain_unknown_tool_refusals(
    messages: MutableSequence[ModelMessage],
    owners: Mapping[str, str],
    loaded: Set[str],
    explain: Callable[[str], str | None],
) -> tuple[ModelRequest, set[str]] | None:
    """Rewrite the latest request's "Unknown tool name" refusals that concern skills: a call of a skill's hidden tool
    (`owners`: tool → skill) names the skill to load, and `explain` (a tool name → what to say, if anything) answers
    the others, such as a skill's own name called as a tool. Returns the rewritten request, which replaces the old
    one in `messages`, and the tool names rewritten (their retries are not charged); `None` when nothing changed."""
    if not messages or not isinstance(request := messages[-1], ModelRequest):
        return None
    parts = list(request.parts)
    rewritten_names: set[str] = set()
    for position, part in enumerate(parts):
        if not isinstance(part, ToolReturnPart) or part.retry is None or part.retry.cause != 'unknown_tool':
            continue
        if (skill := owners.get(part.tool_name)) is not None:
            parts[position] = replace(part, content=hidden_tool_message(part.tool_name, skill, skill in loaded))
        elif (message := explain(part.tool_name)) is not None:
            parts[position] = replace(part, content=message)
        else:
            continue
        rewritten_names.add(part.tool_name)
    if not rewritten_names:
        return None
    messages[-1] = rewritten = replace(request, parts=parts)
    return rewritten, rewritten_names


def unknown_tool_refusals(messages: Sequence[ModelMessage]) -> list[str]:
    """The tool names of the latest request's "Unknown tool name" refusals."""
    if not messages or not isinstance(request := messages[-1], ModelRequest):
        return []
    return [
        part.tool_name
        for part in request.parts
        if isinstance(part, ToolReturnPart) and part.retry is not None and part.retry.cause == 'unknown_tool'
    ]


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
