"""The agent's tools a skill names in its `tools:` field: hidden from the model until a skill naming them is loaded.

A tool only one skill needs (an invoicing API beside an invoicing skill) then costs no context in the runs that never
load that skill. Only the agent's other tools are gated so (a skill's own tools are hidden until it loads anyway, and
skillshelf's meta-tools and file tools never are). A name is an exact tool name; a tool several skills name is shown
while any of them is loaded, or was loaded earlier in the conversation with `unload='keep'` (the tools stay listed, so
the prompt cache holds). Gating is about context, not permission: a shown tool runs as the agent runs it, and a call
to a hidden one is answered with the skill to load.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic_ai.tools import ToolDefinition

from ..skill import Skill
from .operations import tag_of

__all__ = ('ToolGates', 'gated_tool_names')

FIELD = 'tools'
"""The frontmatter field (or Python skill metadata key) that names the agent tools a skill brings into view."""


def gated_tool_names(metadata: Mapping[str, Any]) -> tuple[str, ...]:
    """The tool names of a skill's `tools:` field: a list of names, or one text of names separated by commas or
    spaces (as Claude Code's agent files write them); anything else names nothing."""
    value = cast(object, metadata.get(FIELD))
    if isinstance(value, str):
        words = value.replace(',', ' ').split()
    elif isinstance(value, (list, tuple)):
        words = [item.strip() for item in cast('Iterable[object]', value) if isinstance(item, str)]
    else:
        return ()
    return tuple(dict.fromkeys(word for word in words if word))


@dataclass(frozen=True)
class ToolGates:
    """Which skills bring each gated tool into view."""

    skills_of: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Each tool some skill names in `tools:`, and the skills that name it."""

    @classmethod
    def of(cls, skills: Iterable[Skill[Any]]) -> ToolGates:
        """The gates the `tools:` fields of `skills` set."""
        skills_of: dict[str, list[str]] = {}
        for skill in skills:
            for tool in gated_tool_names(skill.metadata):
                skills_of.setdefault(tool, []).append(skill.name)
        return cls({tool: tuple(names) for tool, names in skills_of.items()})

    def visible(self, tool_defs: list[ToolDefinition], capability_id: str, shown: Set[str]) -> list[ToolDefinition]:
        """`tool_defs` without the agent's tools whose skills are none of `shown` (loaded, or kept in view)."""
        if not self.skills_of:
            return tool_defs
        return [
            tool_def
            for tool_def in tool_defs
            if tool_def.name not in self.skills_of
            or tag_of(tool_def, capability_id) is not None
            or any(skill in shown for skill in self.skills_of[tool_def.name])
        ]

    def hidden_message(self, tool: str) -> str | None:
        """What to tell a model that called `tool` while it is hidden; `None` when no skill gates it."""
        skills = self.skills_of.get(tool)
        if not skills:
            return None
        named = ' or '.join(repr(skill) for skill in skills)
        return f'The tool {tool!r} comes with the skill {named}: load it with `load_skill`, then call the tool again.'
