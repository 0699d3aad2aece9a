"""What `Skills` needs from pydantic-ai's durable execution: whether a run is inside a workflow, and running the
library check off the event loop the way pydantic-ai runs sync tools.

Under a durable engine the per-run library check is a recorded operation (`Skills._refresh_library`), called once
the engine dispatches operations (in `before_run`); outside one it runs in `for_run`, in a worker thread. An engine
whose operations run on another worker (a Temporal activity) rebuilds the capability there with `for_run` on a
context that carries no message history (`in_durable_unit`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic_ai import RunContext
from pydantic_ai._utils import run_in_executor  # pyright: ignore[reportPrivateUsage]
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.durable_exec import BaseDurabilityCapability, DurableRunContext

__all__ = ('in_durable_unit', 'in_durable_workflow', 'off_event_loop', 'workspace_supplier')

T = TypeVar('T')


def in_durable_workflow(ctx: RunContext[Any]) -> bool:
    """Whether this run executes inside a durable engine's workflow (DBOS, Temporal, Prefect), where anything that
    reads the file system has to run as a recorded operation."""
    agent = ctx.agent
    if agent is None:
        return False
    found: list[bool] = []

    def visit(capability: AbstractCapability[Any]) -> None:
        if isinstance(capability, BaseDurabilityCapability):
            found.append(capability.in_durable_context)

    agent.root_capability.apply(visit)
    return any(found)


def in_durable_unit(ctx: RunContext[Any]) -> bool:
    """Whether `ctx` was rebuilt inside a durable unit that runs apart from the workflow (a Temporal activity):
    it carries the run's deps and ids, but not its message history."""
    return isinstance(ctx, DurableRunContext)


async def off_event_loop(function: Callable[[], T]) -> T:
    """`function()` in a worker thread, so other runs on the loop go on meanwhile.

    It goes through pydantic-ai's own helper for sync tools (private, but the only way to honour its thread
    settings): `Agent.using_thread_executor` picks the executor, and where threads are disabled (a Temporal
    workflow) it runs inline.
    """
    return await run_in_executor(function)


def workspace_supplier(agent: AbstractAgent[Any, Any], *, besides: AbstractCapability[Any]) -> str | None:
    """The class name of a capability of `agent` other than `besides` that supplies the run's workspace
    (`LocalWorkspace`, a harness sandbox, `SkillSandbox`), or `None` if none does.

    pydantic-ai's own test is private (`_has_get_workspace`, on every capability from 2.60 on): it sees through
    wrapper capabilities, which define `get_workspace` only to pass it on. Where it is missing, a capability whose
    class defines its own `get_workspace` counts.
    """
    found: list[str] = []

    def visit(capability: AbstractCapability[Any]) -> None:
        if capability is besides or type(capability) is type(besides):
            return
        has = getattr(capability, '_has_get_workspace', None)
        if not isinstance(has, bool):
            has = type(capability).get_workspace is not AbstractCapability.get_workspace
        if has:
            found.append(type(capability).__name__)

    agent.root_capability.apply(visit)
    return found[-1] if found else None
