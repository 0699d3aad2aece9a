"""`LazyToolset`: a skill's toolset that is started (entered) only in runs that load the skill.

pydantic-ai enters every toolset of an agent when a run starts, which for an MCP server means launching its
process or opening its connection. A library may hold many skills backed by servers the model never needs, so
their toolsets are wrapped in this: entering the wrapper does nothing, and the inner toolset is entered at the
first step after `load_skill` and exited at the end of the run. It stays entered after `unload_skill`, and is
entered in later runs of the conversation, because an unloaded skill's tools stay listed (their calls refused) so
the prompt cache holds; see `history.revealed_from_history`.

A tool server that is down never ends a run: one that fails to start, or whose connection is lost mid-run, is
marked down for the rest of the run (`ToolServerOutages`), with a `SkillWarning` for the application. Its tools stay
listed as they were last listed in this process (so the prompt cache holds), each call answered with a message that
the skill's tools are unavailable; the instructions say so too, and the other skills keep working. The next run
tries to start it again.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import anyio
from pydantic_ai import RunContext
from pydantic_ai.messages import InstructionPart
from pydantic_ai.tools import AgentDepsT
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool, WrapperToolset

from ..errors import SkillWarning
from .history import revealed_from_history

__all__ = ('LazyToolset', 'ToolServerOutages', 'tool_server_down_message')

_MCP_CONNECTION_CLOSED = -32000
"""The error code the MCP SDK gives a request whose connection closed (`mcp_types.CONNECTION_CLOSED`)."""
_LOST_CONNECTION = (ConnectionError, EOFError, anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)


@dataclass
class ToolServerOutages:
    """The skills whose toolsets are down in each run, shared by a shelf's lazy toolsets (which report them) and its
    capability (which explains a call of a tool that is not listed because of them)."""

    by_run: dict[str, dict[str, str]] = field(default_factory=dict[str, dict[str, str]])
    """Run id → skill → what happened (`'did not start'`, `'stopped responding'`)."""

    def report(self, run_id: str, skill: str, what: str) -> None:
        """Note that `skill`'s toolset is down in run `run_id`."""
        self.by_run.setdefault(run_id, {})[skill] = what

    def of(self, run_id: str) -> dict[str, str]:
        """The skills down in run `run_id`, with what happened."""
        return dict(self.by_run.get(run_id, {}))

    def forget(self, run_id: str, skill: str) -> None:
        """The run ended: drop what it noted about `skill`."""
        if (down := self.by_run.get(run_id)) is not None:
            down.pop(skill, None)
            if not down:
                self.by_run.pop(run_id, None)


def tool_server_down_message(skill: str, what: str, tool: str | None = None) -> str:
    """What the model is told about the tools of `skill`, whose server `what` (`'did not start'`, say); with `tool`,
    in reply to a call of that tool. No error text: it can name host paths and the model cannot act on it."""
    did_not_run = f'The tool {tool!r} did not run. ' if tool is not None else ''
    return (
        f'{did_not_run}The tools of the skill {skill!r} are unavailable in this run: its tool server {what}. '
        'Carry on without them (its instructions still apply), or tell the user.'
    )


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
    outages: ToolServerOutages = field(default_factory=ToolServerOutages)
    """Where this toolset reports that it is down, per run (shared with the capability)."""
    _prepared: AbstractToolset[AgentDepsT] | None = field(default=None, init=False, repr=False)
    """The wrapped toolset's per-run copy, made at the first load in the run."""
    _entered: bool = field(default=False, init=False, repr=False)
    """Whether `_prepared` is entered (its server running)."""
    _down: str | None = field(default=None, init=False, repr=False)
    """What happened to the server in this run (it did not start, it stopped responding), or `None`."""
    _run_id: str = field(default='', init=False, repr=False)
    _listed: dict[str, ToolsetTool[AgentDepsT]] = field(
        default_factory=dict[str, ToolsetTool[AgentDepsT]], init=False, repr=False
    )
    """The tools the wrapped toolset listed last, in any run of this process: listed while it is down."""

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        # The wrapped toolset's own `for_run` waits until the skill is loaded: it may connect or evaluate a factory.
        copy = replace(self)
        copy._listed = self._listed  # shared by every run's copy
        copy._run_id = ctx.run_id or ''
        return copy

    async def for_run_step(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        if (
            not self._entered
            and self._down is None
            and self.skill in revealed_from_history(ctx.messages, self.capability_id)
        ):
            await self._enter(ctx)
        if self._entered and self._prepared is not None:
            try:
                self._prepared = await self._prepared.for_run_step(ctx)
            except Exception as error:  # a server that is down must not end the run
                await self._lost(error, 'stopped responding')
        return self

    async def _enter(self, ctx: RunContext[AgentDepsT]) -> None:
        try:
            if self._prepared is None:
                self._prepared = await self.wrapped.for_run(ctx)
            await self._prepared.__aenter__()  # pyright: ignore[reportUnknownMemberType]  (`Self` under Python 3.10)
        except Exception as error:  # a command that fails, a server that exits at once: the run goes on without it
            self._mark_down(error, 'did not start')
            return
        self._entered = True

    def _mark_down(self, error: BaseException, what: str) -> None:
        self._down = what
        self.outages.report(self._run_id, self.skill, what)
        problem = f'{type(error).__name__}: {error}'.strip().rstrip(':')
        warnings.warn(
            SkillWarning(
                f'the tools of the skill {self.skill!r} are unavailable in this run: its server {what} ({problem})'
            ),
            stacklevel=2,
        )

    async def _lost(self, error: BaseException, what: str) -> None:
        """The entered server failed: mark it down and close what is left of it (which may fail too)."""
        self._mark_down(error, what)
        await self._exit_quietly()

    async def _exit_quietly(self) -> None:
        self._entered = False
        if self._prepared is None:
            return
        with contextlib.suppress(Exception):  # closing a connection that is already gone; the warning said why
            await self._prepared.__aexit__(None, None, None)

    async def __aenter__(self) -> LazyToolset[AgentDepsT]:
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        self.outages.forget(self._run_id, self.skill)
        if not self._entered:
            return None
        self._entered = False
        assert self._prepared is not None
        try:
            return await self._prepared.__aexit__(*args)
        except Exception as error:  # a server that died as the run ended: the run's result stands
            warnings.warn(
                SkillWarning(f'the tool server of the skill {self.skill!r} did not stop cleanly: {error}'), stacklevel=2
            )
            return None

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        if self._down is not None:
            return dict(self._listed)
        if not self._entered or self._prepared is None:
            return {}
        try:
            tools = await self._prepared.get_tools(ctx)
        except Exception as error:
            await self._lost(error, 'stopped responding')
            return dict(self._listed)
        self._listed.clear()
        self._listed.update(tools)
        return tools

    async def get_instructions(
        self, ctx: RunContext[AgentDepsT]
    ) -> str | InstructionPart | Sequence[str | InstructionPart] | None:
        if self._down is not None and self.skill in revealed_from_history(ctx.messages, self.capability_id):
            return tool_server_down_message(self.skill, self._down)
        return await super().get_instructions(ctx)

    def _instruction_children(self) -> Sequence[AbstractToolset[AgentDepsT]]:
        # Instructions of the wrapped toolset (an MCP server's, say) reach the model only while the skill is loaded.
        return (self._prepared,) if self._entered and self._prepared is not None else ()

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        if self._down is not None or not self._entered or self._prepared is None:
            return tool_server_down_message(self.skill, self._down or 'is not running', name)
        try:
            return await self._prepared.call_tool(name, tool_args, ctx, tool)
        except Exception as error:
            if not _connection_lost(error):
                raise  # the tool's own error (a `ModelRetry`, say): pydantic-ai's rules apply
            await self._lost(error, 'stopped responding')
            return tool_server_down_message(self.skill, 'stopped responding', name)


def _connection_lost(error: BaseException) -> bool:
    """Whether `error`, or anything that caused it, says the connection to the server is gone (pydantic-ai turns the
    MCP SDK's "Connection closed" into a `ModelRetry`, which would end the run once the retries run out)."""
    pending: list[BaseException] = [error]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, _LOST_CONNECTION) or getattr(current, 'code', None) == _MCP_CONNECTION_CLOSED:
            return True
        grouped = cast('object', getattr(current, 'exceptions', None))  # an exception group's members
        if isinstance(grouped, tuple):
            pending.extend(item for item in cast('tuple[object, ...]', grouped) if isinstance(item, BaseException))
        pending.extend(cause for cause in (current.__cause__, current.__context__) if cause is not None)
    return False
