"""The operations of the meta-tools, and the tags that mark which tools a `Skills` capability owns.

Tools are told apart by their metadata, never by name, so prefixing or renaming an agent's tools changes nothing:
a meta-tool carries its `Operation`, a skill's tool the skill's name, both under the capability's id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, cast

from pydantic_ai.tools import AgentDepsT, ToolDefinition
from pydantic_ai.toolsets import CombinedToolset

__all__ = ('TAG', 'Operation', 'ShelfToolset', 'Tag', 'meta_tool_tag', 'record_of', 'skill_tool_tag', 'tag_of')

TAG = 'skillshelf'
"""The key under which skillshelf marks tool definitions and tool-return metadata."""


class Operation(str, Enum):
    """What a meta-tool does; the capability applies and records the run's load state around each."""

    SEARCH = 'search'
    """`search_skills`"""
    LOAD = 'load'
    """`load_skill`"""
    UNLOAD = 'unload'
    """`unload_skill`"""
    READ = 'read'
    """`read_skill_resource`"""
    RUN = 'run'
    """`run_skill_script`"""
    FILES = 'files'
    """`read_file`, `write_file`, `edit_file`, `list_files` (with `file_tools`)"""
    COMMAND = 'command'
    """`run_command` (with `file_tools`)"""


class ShelfToolset(CombinedToolset[AgentDepsT]):
    """The toolset of a `Skills` capability (meta-tools, workspace tools, skills' tools), told apart from the agent's
    other toolsets by its type: a forked skill's sub-agent gets the others, never this one."""


@dataclass(frozen=True)
class Tag:
    """What the capability knows of one of its tools."""

    operation: Operation | None = None
    """The meta-tool's operation; `None` for a skill's own tool."""
    skill: str | None = None
    """The skill a tool belongs to; `None` for a meta-tool."""


def skill_tool_tag(capability_id: str, skill: str) -> dict[str, Any]:
    """Tool metadata marking a tool as belonging to `skill` of the capability `capability_id`."""
    return {TAG: {'capability': capability_id, 'skill': skill}}


def meta_tool_tag(capability_id: str, operation: Operation) -> dict[str, Any]:
    """Tool metadata marking one of the capability's meta-tools."""
    return {TAG: {'capability': capability_id, 'meta': operation.value}}


def tag_of(tool_def: ToolDefinition, capability_id: str) -> Tag | None:
    """What `tool_def` is to the capability `capability_id`: one of its meta-tools, a skill's tool, or `None`."""
    record = record_of(tool_def.metadata, capability_id)
    if record is None:
        return None
    skill = record.get('skill')
    try:
        operation = Operation(record['meta']) if 'meta' in record else None
    except ValueError:
        return None  # a tag written by another version: not one of ours
    return Tag(operation, skill if isinstance(skill, str) else None)


def record_of(metadata: Any, capability_id: str) -> Mapping[str, Any] | None:
    """The skillshelf record in tool or tool-return `metadata` if it belongs to the capability `capability_id`."""
    if not isinstance(metadata, Mapping):
        return None
    record = cast('Mapping[str, Any]', metadata).get(TAG)
    if not isinstance(record, Mapping):
        return None
    record = cast('Mapping[str, Any]', record)
    return record if record.get('capability') == capability_id else None
