"""`SkillSteps`: the tool calls of a `Skills` capability as DBOS steps (needs the `dbos` package: `[durable]`).

pydantic-ai's `DBOSDurability` records model requests and MCP calls as steps, but runs function tools in workflow
code, so a recovered workflow runs them again; its child workflows take only async tools. With this capability
each call of a meta-tool, `run_skill_script` or a skill's own tool is one step: a recovered workflow gets its
recorded result back instead of reading a `SKILL.md` again or running a tool twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbos import DBOS, StepOptions
from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability, WrapToolExecuteHandler
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import AgentDepsT, ToolDefinition

from .operations import tag_of

__all__ = ('SkillSteps',)


@dataclass
class SkillSteps(AbstractCapability[AgentDepsT]):
    """Run each call of the tools a `Skills` capability owns as a DBOS step, inside a DBOS workflow.

    List it after `Skills` and `DBOSDurability`, so the step holds only the tool's own work and `Skills` keeps
    its load state in workflow code:

    ```python
    agent = Agent(model, name='helper', capabilities=[Skills(directories=['skills']), DBOSDurability(), SkillSteps()])
    ```

    A step's result is recorded with pickle (DBOS's serializer), so a skill tool must return a picklable value.
    As with any DBOS step, a process killed while a tool runs runs that tool again on recovery: make tools with
    side effects idempotent. Outside a workflow tools run as they are.
    """

    skills_id: str = 'skillshelf'
    """The id of the `Skills` capability whose tools become steps."""
    step_options: StepOptions | None = None
    """DBOS step options (retries); the step's name is always `<agent name>.<skills_id>.<tool name>`."""

    async def wrap_tool_execute(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: WrapToolExecuteHandler,
    ) -> Any:
        """Run the call in a step when it is a skill tool called from workflow code; else as it is."""
        in_workflow_code = DBOS.workflow_id is not None and DBOS.step_id is None
        if not in_workflow_code or tag_of(tool_def, self.skills_id) is None:
            return await handler(args)
        agent = ctx.agent.name if ctx.agent is not None else None
        name = f'{agent or "agent"}.{self.skills_id}.{tool_def.name}'
        return await DBOS.run_step_async({**(self.step_options or {}), 'name': name}, handler, args)
