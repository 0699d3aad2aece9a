"""`LazyToolset`: a skill's toolset that is started (entered) only in runs that load the skill.

pydantic-ai enters every toolset of an agent when a run starts, which for an MCP server means launching its
process or opening its connection. A library may hold many skills backed by servers the model never needs, so
their toolsets are wrapped in this: entering the wrapper does nothing, and the inner toolset is entered at the
first step after `load_skill` and exited at the end of the run. It stays entered after `unload_skill`, and is
entered in later runs of the conversation, because an unloaded skill's tools stay listed (their calls refused) so
the prompt cache holds; see `history.revealed_from_history`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.tools import AgentDepsT
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool, WrapperToolset

from .history import revealed_from_history

__all__ = ('LazyToolset',)


@dataclass
class LazyToolset(WrapperToolset[AgentDepsT]):
    """Wraps a skill's toolset: no tools, and not entered, until the skill is loaded in the conversation.

    Whether the skill was loaded is read from the run's messages at each step (the same records `Skills` replays),
    so a continued conversation or a durable replay starts the toolset exactly when the original run did.
    """

    capability_id: str
    """The id of the `Skills` capability whose `load_skill` records count."""
    skill: str
    """The name of the skill the wrapped toolset belongs to."""
    _prepared: AbstractToolset[AgentDepsT] | None = field(default=None, init=False, repr=False)
    """The wrapped toolset's per-run copy, made at the first load in the run."""
    _entered: bool = field(default=False, init=False, repr=False)
    """Whether `_prepared` is entered (its server running)."""

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        # The wrapped toolset's own `for_run` waits until the skill is loaded: it may connect or evaluate a factory.
        return replace(self)

    async def for_run_step(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        if not self._entered and self.skill in revealed_from_history(ctx.messages, self.capability_id):
            await self._enter(ctx)
        if self._entered and self._prepared is not None:
            self._prepared = await self._prepared.for_run_step(ctx)
        return self

    async def _enter(self, ctx: RunContext[AgentDepsT]) -> None:
        if self._prepared is None:
            self._prepared = await self.wrapped.for_run(ctx)
        await self._prepared.__aenter__()  # pyright: ignore[reportUnknownMemberType]  (`Self` under Python 3.10)
        self._entered = True

    async def _exit(self, *args: Any) -> bool | None:
        self._entered = False
        assert self._prepared is not None
        return await self._prepared.__aexit__(*args)

    async def __aenter__(self) -> LazyToolset[AgentDepsT]:
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        return await self._exit(*args) if self._entered else None

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        if not self._entered or self._prepared is None:
            return {}
        return await self._prepared.get_tools(ctx)

    def _instruction_children(self) -> Sequence[AbstractToolset[AgentDepsT]]:
        # Instructions of the wrapped toolset (an MCP server's, say) reach the model only while the skill is loaded.
        return (self._prepared,) if self._entered and self._prepared is not None else ()

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        assert self._prepared is not None, 'a tool of an unloaded skill was called'
        return await self._prepared.call_tool(name, tool_args, ctx, tool)
