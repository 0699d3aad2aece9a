"""The tool names a toolset exposes, when they follow from how it was built, without running it."""

from __future__ import annotations

from typing import Any

from pydantic_ai.toolsets import (
    AbstractToolset,
    ApprovalRequiredToolset,
    CombinedToolset,
    DeferredLoadingToolset,
    FunctionToolset,
    IncludeReturnSchemasToolset,
    PrefixedToolset,
    RenamedToolset,
    SetMetadataToolset,
    WrapperToolset,
)

__all__ = ('known_tool_names',)

_NAME_KEEPING: tuple[type[AbstractToolset[Any]], ...] = (
    SetMetadataToolset,
    ApprovalRequiredToolset,
    DeferredLoadingToolset,
    IncludeReturnSchemasToolset,
)
"""Wrappers that change how tools are offered or run, never which tools there are or their names."""


def known_tool_names(toolset: AbstractToolset[Any]) -> list[str] | None:
    """The names of `toolset`'s tools, in order, or `None` when only running it can tell.

    They are known for function tools and for prefixed, renamed, combined or relabelled toolsets of them. They are
    not for an MCP server (it lists its tools once started), nor for a filtered, prepared or dynamic toolset (which
    decide per run); nor for any other class, whose `get_tools` may do anything.
    """
    if isinstance(toolset, FunctionToolset):
        return list(toolset.tools)
    # Exact types from here on: a subclass may override `get_tools`.
    if type(toolset) is CombinedToolset:
        parts = [known_tool_names(child) for child in toolset.toolsets]
        return None if None in parts else [name for part in parts if part is not None for name in part]
    if type(toolset) not in (PrefixedToolset, RenamedToolset, *_NAME_KEEPING):
        return None
    assert isinstance(toolset, WrapperToolset)
    inner = known_tool_names(toolset.wrapped)
    if inner is None:
        return None
    if isinstance(toolset, PrefixedToolset):
        return [f'{toolset.prefix}_{name}' for name in inner]
    if isinstance(toolset, RenamedToolset):
        new_names = {original: new for new, original in toolset.name_map.items()}
        return [new_names.get(name, name) for name in inner]
    return inner
