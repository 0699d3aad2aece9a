"""One run's load state: which skills are loaded, and which skill owns each tool the run has seen.

Each run's `Skills` clone holds its own `LoadState`, rebuilt from the message history at the start of the run
(see `history.loaded_from_history`), so concurrent runs never share it and a replay rebuilds the same state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, cast

from pydantic_ai import ToolReturn
from pydantic_ai.capabilities import WrapToolExecuteHandler

from .history import record_of
from .meta_tools import SkillMatch

__all__ = ('LoadState',)


@dataclass
class LoadState:
    """Loaded skills of one run, updated around the `load_skill` and `unload_skill` calls that record them."""

    loaded: list[str] = field(default_factory=list[str])
    """Loaded skills, in load order."""
    owners: dict[str, str] = field(default_factory=dict[str, str])
    """Each skill tool seen by `prepare_tools` in this run, and the skill it belongs to."""
    hidden: set[str] = field(default_factory=set[str])
    """Skill tools hidden at the latest `prepare_tools`."""

    async def load(self, name: str, args: dict[str, Any], handler: WrapToolExecuteHandler, capability_id: str) -> Any:
        """Run `load_skill` for a known skill, marking it loaded if the tool recorded the load."""
        if name in self.loaded:
            return f'The skill {name!r} is already loaded; its instructions are above and its tools are available.'
        # Marked before awaiting, so a second `load_skill` for it in the same response sees it as loaded.
        self.loaded.append(name)
        result = await handler(args)
        if not _records(result, 'load', capability_id):
            self.loaded.remove(name)
        return result

    async def unload(self, name: str, args: dict[str, Any], handler: WrapToolExecuteHandler, capability_id: str) -> Any:
        """Run `unload_skill` for a known skill, marking it unloaded if the tool recorded the unload."""
        if name not in self.loaded:
            loaded = ', '.join(self.loaded) or 'none'
            return f'The skill {name!r} is not loaded, so there is nothing to unload. Loaded skills: {loaded}.'
        result = await handler(args)
        if _records(result, 'unload', capability_id) and name in self.loaded:
            self.loaded.remove(name)
        return result

    def mark_loaded(self, result: object) -> object:
        """Set `loaded` on each `search_skills` match."""
        if isinstance(result, list):
            for match in cast('list[object]', result):
                if isinstance(match, SkillMatch):
                    match.loaded = match.name in self.loaded
        return result  # pyright: ignore[reportUnknownVariableType]


def _records(result: object, operation: Literal['load', 'unload'], capability_id: str) -> bool:
    """Whether a meta-tool result records a load or unload (a plain string means it explained a problem)."""
    if not isinstance(result, ToolReturn):
        return False
    record = record_of(cast('ToolReturn[Any]', result).metadata, capability_id)
    return record is not None and record.get('op') == operation
