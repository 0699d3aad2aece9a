"""Fork: a skill with `context: fork` runs as a pydantic-ai sub-agent instead of loading into the conversation.

Claude Code runs such skills in a sub-agent so their tool calls do not flood the main conversation. Here loading
one (by the model, or by a user's `/name`) runs a fresh `Agent` whose prompt is the skill's instructions (with its
arguments); it has the skill's own tools and those of the parent agent's tools its `allowed-tools` lists, and
the parent's model unless the skill names one (`model: 'openai:gpt-5.2'`; Claude Code's aliases such as `sonnet`
or `inherit` mean the parent's). Only its final output returns to the parent, and its requests count toward the
parent run's usage and usage limits. It gets no meta-tools, so a forked skill cannot fork again: recursion stops
at one level.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.models import Model
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset

from ..errors import SkillFormatError
from ..skill import Skill
from .approval import Preapproval
from .meta_tools import Placement, read_instructions, unreadable_message

__all__ = ('fork_reply', 'forks', 'run_fork')


def forks(skill: Skill[Any]) -> bool:
    """Whether the skill runs as a sub-agent: frontmatter (or a Python skill's metadata) `context: fork`."""
    return skill.metadata.get('context') == 'fork'


async def fork_reply(
    ctx: RunContext[Any],
    skill: Skill[Any],
    arguments: str,
    place: Placement | None,
    reserved_tool_names: tuple[str, ...],
) -> str:
    """What loading a `context: fork` skill returns: the final output of its sub-agent (see `run_fork`), or why its
    instructions cannot be read. With `place`, the skill's files are put in the run's workspace first."""
    placed = await place(ctx.workspace, skill) if place is not None else None
    try:
        instructions = read_instructions(skill, placed.folder if placed is not None else None, arguments)
    except (SkillFormatError, OSError) as error:
        return unreadable_message(skill.name, error)
    output = await run_fork(ctx, skill, instructions, reserved_tool_names)
    return f'The skill {skill.name!r} ran in a sub-agent. Its result:\n\n{output}'


async def run_fork(
    ctx: RunContext[Any], skill: Skill[Any], instructions: str, reserved_tool_names: tuple[str, ...]
) -> str:
    """Run `skill` as a sub-agent with `instructions` as its prompt, and return its final output."""
    allowed = Preapproval(skill.allowed_tools)

    def parent_tool_allowed(_: RunContext[Any], tool_def: ToolDefinition) -> bool:
        return tool_def.name not in reserved_tool_names and allowed.approves_tool(tool_def.name)

    parent_toolsets = _agent_toolsets(ctx.agent.toolsets if ctx.agent is not None else ())
    toolsets: list[AbstractToolset[Any]] = [toolset.filtered(parent_tool_allowed) for toolset in parent_toolsets]
    if skill.tool_names or not skill.tools_known:
        toolsets.insert(0, skill.toolset)
    named = skill.metadata.get('model')
    model = named if isinstance(named, str) and ':' in named else ctx.model
    if not isinstance(model, (str, Model)):
        return f'The skill {skill.name!r} runs as a sub-agent, which a {type(model).__name__} cannot drive.'
    chosen = cast('Model[Any] | str', model)  # Model's type parameter is lost by the isinstance check
    sub_agent = Agent[Any, str](chosen, name=f'skill-{skill.name}', toolsets=toolsets)
    result = await sub_agent.run(instructions, deps=ctx.deps, usage=ctx.usage, usage_limits=ctx.usage_limits)
    return result.output


def _agent_toolsets(toolsets: Sequence[AbstractToolset[Any]]) -> list[AbstractToolset[Any]]:
    """The agent's own tools and toolsets, without the capabilities' (pydantic-ai binds those to their capability,
    which the sub-agent does not have: so no meta-tools, and no tools of other capabilities)."""
    own: list[AbstractToolset[Any]] = []
    for toolset in toolsets:
        if isinstance(toolset, CombinedToolset):
            own += _agent_toolsets(toolset.toolsets)
        elif not isinstance(getattr(toolset, 'capability', None), AbstractCapability):
            own.append(toolset)
    return own
