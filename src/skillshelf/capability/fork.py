"""Fork: a skill with `context: fork` runs as a pydantic-ai sub-agent instead of loading into the conversation.

Claude Code runs such skills in a sub-agent so their tool calls do not flood the main conversation. Here loading
one (by the model, or by a user's `/name`) runs a fresh `Agent` whose instructions are the skill's instructions and
whose prompt is the arguments it was given (or `DEFAULT_PROMPT` when there are none). It runs in the parent run's
workspace, where the skill's files are put as for a loaded skill (`${SKILL_DIR}` names them there), so what it
writes is there for the parent and the application. Its tools are described in `fork_tools`: the parent's tools
(all of them, or those its `allowed-tools` names), never the meta-tools, so recursion stops at one level. It runs on
the parent's model unless the skill names one (`model: 'openai:gpt-5.2'`; Claude Code's aliases such as `sonnet` or
`inherit` mean the parent's). Only its final output returns to the parent, and its requests count toward the
parent run's usage and usage limits.

What cannot work is told to the parent's model, and the parent run goes on: a `model:` that cannot be built (an
unknown model, a provider without its API key), a sub-agent that stops on the model's misbehaviour, or one whose
own model fails.
"""

from __future__ import annotations

import warnings
from typing import Any, cast

from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior, UserError
from pydantic_ai.models import Model, infer_model

from .._text import one_line, shown
from ..errors import SkillFormatError, SkillWarning
from ..scripts.materialise import Copied
from ..skill import Skill
from .durable import in_durable_unit
from .fork_tools import ForkGuard, ForkHost, fork_toolsets
from .meta_tools import forks, read_instructions, skill_dir, unreadable_message

__all__ = ('DEFAULT_PROMPT', 'fork_reply', 'forks', 'run_fork')

DEFAULT_PROMPT = 'Carry out the task your instructions describe, then reply with the result.'
"""The sub-agent's prompt when the skill was given no arguments."""
_REASON_CHARACTERS = 300


async def fork_reply(ctx: RunContext[Any], skill: Skill[Any], arguments: str, shelf: ForkHost) -> str:
    """What loading a `context: fork` skill returns: the final output of its sub-agent (see `run_fork`), or why it
    could not run. With scripts or file tools on, the skill's files are put in the run's workspace first."""
    model = _fork_model(skill, ctx)
    if isinstance(model, str):
        return model
    placed = await shelf.place(ctx.workspace, skill) if shelf.place is not None else None
    try:
        folder = skill_dir(skill, placed, shelf.place is not None)
        body = await read_instructions(
            skill, folder, arguments, append=False, workspace=ctx.workspace, commands=shelf.commands
        )
        resources = skill.list_resources()
    except (SkillFormatError, OSError) as error:
        return unreadable_message(skill.name, error)
    instructions = [_preamble(skill, shelf, placed, resources), body]
    try:
        output = await run_fork(ctx, skill, shelf, model, instructions, arguments.strip() or DEFAULT_PROMPT)
    except UnexpectedModelBehavior as error:
        return _stopped(skill, f'its model misbehaved ({_reason(error)})')
    except ModelAPIError as error:
        if _named_model(skill) is None:
            raise  # the parent's own model failing is the parent run's failure, as for its own requests
        return _stopped(skill, f'its model {model.model_name!r} failed ({_reason(error)})')
    return f'The skill {skill.name!r} ran in a sub-agent. Its result:\n\n{output}'


async def run_fork(
    ctx: RunContext[Any], skill: Skill[Any], shelf: ForkHost, model: Model, instructions: list[str], prompt: str
) -> str:
    """Run `skill` as a sub-agent on `model`, with `instructions` and `prompt`, in the parent run's workspace, and
    return its final output."""
    toolsets = fork_toolsets(skill, shelf, ctx.agent.toolsets if ctx.agent is not None else ())
    sub_agent = Agent[Any, str](
        model,
        name=f'skill-{skill.name}',
        instructions=instructions,
        toolsets=toolsets,
        capabilities=[ForkGuard(skill, shelf, ctx)],
        output_type=str,
    )
    result = await sub_agent.run(
        prompt,
        deps=ctx.deps,
        usage=ctx.usage,
        usage_limits=ctx.usage_limits,
        workspace=ctx.workspace if ctx.workspace.attached else None,
    )
    return result.output


def _fork_model(skill: Skill[Any], ctx: RunContext[Any]) -> Model | str:
    """The model the skill's sub-agent runs on: the one its `model:` names (`provider:name`), else the parent's; or,
    when that cannot be, the message for the parent's model (and, for a named one, a warning for the application)."""
    named = _named_model(skill)
    if named is None:
        return _parent_model(skill, ctx)
    try:
        return infer_model(named)
    except (UserError, ImportError, ValueError) as error:
        reason = _reason(error)
    warnings.warn(
        SkillWarning(f'skill {skill.name!r}: its sub-agent model {named!r} cannot be used: {reason}'), stacklevel=3
    )
    return (
        f'The skill {skill.name!r} runs as a sub-agent on the model {shown(named)}, which cannot be used here '
        f'({reason}). It did not run. Do the task without it, or tell the user the skill needs that model set up.'
    )


def _named_model(skill: Skill[Any]) -> str | None:
    """The model the skill's `model:` names (`provider:name`); `None` for Claude Code's aliases (`sonnet`, `inherit`)
    and no model at all, which mean the parent's."""
    named = skill.metadata.get('model')
    return named if isinstance(named, str) and ':' in named else None


def _parent_model(skill: Skill[Any], ctx: RunContext[Any]) -> Model | str:
    """The parent run's model; in a durable unit that runs apart from the run (a Temporal activity), which is not
    told the run's model, the agent's own (`Agent(model=...)`)."""
    model: object = ctx.model if not in_durable_unit(ctx) else ctx.agent.model if ctx.agent is not None else None
    why = f'a {type(model).__name__} cannot drive it'
    if isinstance(model, str):
        try:
            model = infer_model(model)
        except (UserError, ImportError, ValueError) as error:
            why = f'its model cannot be built ({_reason(error)})'
    elif model is None:
        why = "it runs on the agent's own model, and the agent has none (a model given to the run does not reach here)"
    if isinstance(model, Model):
        return cast('Model[Any]', model)  # Model's type parameter is lost by the isinstance check
    return f'The skill {skill.name!r} runs as a sub-agent, which cannot run here: {why}. Do the task without it.'


def _preamble(skill: Skill[Any], shelf: ForkHost, placed: Copied | None, resources: list[str]) -> str:
    """What the sub-agent is told before the skill's own instructions: that only its final reply is passed on, and
    where the skill's files are."""
    name = skill.name
    lines = [
        f'You are carrying out the skill {name!r} for another agent. Only your final reply reaches it: make that '
        'reply the result.'
    ]
    if placed is not None:
        scripts = (
            f', and run its scripts with `run_skill_script` (name {name!r})' if shelf.options.scripts.scripts else ''
        )
        lines.append(
            f"The skill's files are in the workspace at {placed.folder}{scripts}; the working directory is where "
            'your files go.'
        )
        if placed.left_out:
            lines.append(f'Not copied there: {"; ".join(placed.left_out)}.')
    if resources:
        lines.append(f'Its files (read them with `read_skill_resource`, name {name!r}): {", ".join(resources)}.')
    return '\n'.join(lines)


def _stopped(skill: Skill[Any], why: str) -> str:
    return (
        f'The skill {skill.name!r} ran in a sub-agent, which stopped before it finished: {why}. '
        'Do the task another way, or tell the user.'
    )


def _reason(error: BaseException) -> str:
    """The first sentence of an error's message, shortened: enough to say what is wrong, never a page of advice."""
    first = str(error).split('\n', 1)[0].split('. ', 1)[0].rstrip('.')
    return one_line(first, _REASON_CHARACTERS) or type(error).__name__
