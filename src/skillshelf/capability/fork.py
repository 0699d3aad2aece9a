"""Fork: a skill with `context: fork` runs as a pydantic-ai sub-agent instead of loading into the conversation.

Claude Code runs such skills in a sub-agent so their tool calls do not flood the main conversation. Here loading
one (by the model, or by a user's `/name`) runs a fresh `Agent` whose prompt is the skill's instructions (with its
arguments); it has the skill's own tools and those of the parent agent's tools its `allowed-tools` lists, and
the parent's model unless the skill names one (`model: 'openai:gpt-5.2'`; Claude Code's aliases such as `sonnet`
or `inherit` mean the parent's). Only its final output returns to the parent, and its requests count toward the
parent run's usage and usage limits. It gets no meta-tools, so a forked skill cannot fork again: recursion stops
at one level.

A fork never ends the parent's run on account of its frontmatter: a `model:` that cannot be built (an unknown
provider, a missing API key) and an `allowed-tools` entry naming a tool that needs approval (which a sub-agent
cannot ask for) each come back to the model as a message saying so, with a `SkillWarning` for the model name.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, cast

from pydantic_ai import Agent, DeferredToolRequests, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.models import Model, infer_model
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset

from .._text import one_line, without_paths
from ..errors import SkillFormatError, SkillWarning
from ..skill import Skill
from .approval import Preapproval
from .meta_tools import Placement, read_instructions, unreadable_message

__all__ = ('ForkNotRun', 'fork_reply', 'forks', 'run_fork')


class ForkNotRun(Exception):
    """The sub-agent could not run, or could not finish: the message says why, for the model."""


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
    try:
        output = await run_fork(ctx, skill, instructions, reserved_tool_names)
    except ForkNotRun as refused:
        return str(refused)
    return f'The skill {skill.name!r} ran in a sub-agent. Its result:\n\n{output}'


async def run_fork(
    ctx: RunContext[Any], skill: Skill[Any], instructions: str, reserved_tool_names: tuple[str, ...]
) -> str:
    """Run `skill` as a sub-agent with `instructions` as its prompt, and return its final output.

    Raises:
        ForkNotRun: its model cannot be built or driven, or it stopped at a tool that needs approval.
    """
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
        raise ForkNotRun(f'The skill {skill.name!r} runs as a sub-agent, which a {type(model).__name__} cannot drive.')
    try:
        chosen = infer_model(cast('Model[Any] | str', model))  # Model's type parameter is lost by the isinstance check
    except Exception as error:  # an unknown provider, a missing API key or package: the skill's problem, not the run's
        problem = without_paths(one_line(str(error), 200))
        warnings.warn(
            SkillWarning(f'skill {skill.name!r}: its model {named!r} cannot be used: {problem}'), stacklevel=2
        )
        raise ForkNotRun(
            f'The skill {skill.name!r} did not run: it asks for the model {named!r} for its sub-agent, which cannot be '
            f'used here ({problem}). Carry on without it, or tell the user.'
        ) from None
    output_type: list[type[str] | type[DeferredToolRequests]] = [str, DeferredToolRequests]
    sub_agent = Agent[Any, str | DeferredToolRequests](
        chosen, name=f'skill-{skill.name}', toolsets=toolsets, output_type=output_type
    )
    result = await sub_agent.run(instructions, deps=ctx.deps, usage=ctx.usage, usage_limits=ctx.usage_limits)
    if isinstance(result.output, DeferredToolRequests):  # a tool that needs approval: a sub-agent cannot ask for it
        wanted = sorted({call.tool_name for call in [*result.output.approvals, *result.output.calls]})
        raise ForkNotRun(
            f'The skill {skill.name!r} stopped before it finished: its sub-agent called {", ".join(map(repr, wanted))}, which needs '
            "the user's approval (or runs outside the agent), and a sub-agent cannot ask for it. Call the tool "
            'yourself if the task needs it, or tell the user.'
        )
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
