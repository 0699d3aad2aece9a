"""One run's load state: which skills are loaded, which skill owns each tool the run has seen, and so which tools the
model sees.

Each run's `Skills` clone holds its own `LoadState`, rebuilt from the message history at the start of the run
(see `history.loaded_from_history`), so concurrent runs never share it and a replay rebuilds the same state.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from pydantic_ai import ToolReturn
from pydantic_ai.capabilities import WrapToolExecuteHandler
from pydantic_ai.tools import ToolDefinition

from ..errors import SkillError
from .history import recorded_change
from .meta_tools import SkillMatch, with_name_choices
from .operations import Operation, tag_of

__all__ = ('LoadState', 'UnloadOptions', 'Visibility')


@dataclass(frozen=True)
class UnloadOptions:
    """What unloading a skill does to its tools; checked when created.

    Raises:
        SkillError: an unknown value.
    """

    unload: Literal['keep', 'hide'] = 'keep'
    """`'keep'`: an unloaded skill's tools stay listed and their calls are refused, so every request keeps the one
    before it as its prefix and the provider's prompt cache holds; `'hide'`: they leave the request, which gives
    the context back in a long session but changes the tools from that point, so the cached prefix ends there."""

    def __post_init__(self) -> None:
        if self.unload not in ('keep', 'hide'):
            raise SkillError(f"the `unload` option must be 'keep' or 'hide', not {self.unload!r}")


@dataclass(frozen=True)
class Visibility:
    """What `prepare_tools` lets through at one step."""

    tools: list[ToolDefinition]
    """The tool definitions the model sees."""
    forgiven: set[str]
    """Tools whose retry charges are given back: meta-tools, and skill tools refused while hidden."""


@dataclass
class LoadState:
    """Loaded skills of one run, updated around the `load_skill` and `unload_skill` calls that record them."""

    loaded: list[str] = field(default_factory=list[str])
    """Loaded skills, in load order."""
    owners: dict[str, str] = field(default_factory=dict[str, str])
    """Each skill tool seen by `prepare_tools` in this run, and the skill it belongs to."""
    hidden: set[str] = field(default_factory=set[str])
    """Skill tools hidden at the latest `prepare_tools`."""

    def visible(
        self,
        tool_defs: list[ToolDefinition],
        capability_id: str,
        revealed: Set[str],
        name_choices: list[str] | None,
        unused: Set[Operation] = frozenset(),
    ) -> Visibility:
        """The tools the model may see now: every tool but the tools of skills neither loaded nor `revealed` (loaded
        earlier in the conversation: an unloaded skill's tools stay listed, so the prompt cache holds, and their calls
        are refused), and the `unused` meta-tools. With `name_choices`, `load_skill` lists the valid names."""
        visible: list[ToolDefinition] = []
        forgiven: set[str] = set()
        shown = {*self.loaded, *revealed}
        for tool_def in tool_defs:
            tag = tag_of(tool_def, capability_id)
            if tag is not None and tag.operation is not None:
                forgiven.add(tool_def.name)
                if tag.operation in unused:
                    continue
                if tag.operation is Operation.LOAD and name_choices:
                    tool_def = with_name_choices(tool_def, name_choices)
            if tag is None or tag.skill is None:
                visible.append(tool_def)
                continue
            self.owners[tool_def.name] = tag.skill
            if tag.skill in shown:
                if tool_def.name in self.hidden:  # charged only for refusals while it was hidden
                    forgiven.add(tool_def.name)
                visible.append(tool_def)
            else:
                forgiven.add(tool_def.name)
        self.hidden = {name for name, skill in self.owners.items() if skill not in shown}
        return Visibility(visible, forgiven)

    async def load(self, name: str, args: dict[str, Any], handler: WrapToolExecuteHandler, capability_id: str) -> Any:
        """Run `load_skill` for a known skill, marking it loaded if the tool recorded the load."""
        if name in self.loaded:
            return f'The skill {name!r} is already loaded; its instructions are above and its tools are available.'
        # Marked before awaiting, so a second `load_skill` for it in the same response sees it as loaded.
        self.loaded.append(name)
        result = await handler(args)
        if not _records(result, Operation.LOAD, capability_id):
            self.loaded.remove(name)
        return result

    async def unload(self, name: str, args: dict[str, Any], handler: WrapToolExecuteHandler, capability_id: str) -> Any:
        """Run `unload_skill` for a known skill, marking it unloaded if the tool recorded the unload."""
        if name not in self.loaded:
            loaded = ', '.join(self.loaded) or 'none'
            return f'The skill {name!r} is not loaded, so there is nothing to unload. Loaded skills: {loaded}.'
        result = await handler(args)
        if _records(result, Operation.UNLOAD, capability_id) and name in self.loaded:
            self.loaded.remove(name)
        return result

    def mark_loaded(self, result: object) -> object:
        """Set `loaded` on each `search_skills` match."""
        if isinstance(result, list):
            for match in cast('list[object]', result):
                if isinstance(match, SkillMatch):
                    match.loaded = match.name in self.loaded
        return result  # pyright: ignore[reportUnknownVariableType]


def _records(result: object, operation: Operation, capability_id: str) -> bool:
    """Whether a meta-tool result records a load or unload (a plain string means it explained a problem)."""
    if not isinstance(result, ToolReturn):
        return False
    change = recorded_change(cast('ToolReturn[Any]', result).metadata, capability_id)
    return change is not None and change[0] is operation
