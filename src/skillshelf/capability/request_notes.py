"""What `Skills` changes in the request before it goes to the model: pydantic-ai's "Unknown tool name" refusals that
concern skills, explained (see `refusals`), and with `reminders`, a note pointing out the skills that match a new
user prompt (see `reminders`). Both change the request in the history too, so later requests repeat it as sent."""

from __future__ import annotations

from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.messages import ModelRequest

from .durable import off_event_loop
from .lazy_toolset import tool_server_down_message
from .operations import Operation
from .refusals import (
    explain_unknown_tool_refusals,
    forgive,
    skill_called_as_tool_message,
    unknown_tool_refusals,
    unused_search_message,
)
from .reminders import Reminder, prompt_to_remind, with_reminder
from .shelf import Shelf
from .state import LoadState
from .telemetry import traced_meta_call

__all__ = ('explained_refusals', 'revised_request')


async def revised_request(ctx: RunContext[Any], shelf: Shelf, state: LoadState) -> ModelRequest | None:
    """The latest request of `ctx.messages` as the model should see it, put back in the history; `None` when it
    stays as it is. Refusals it explains are not charged to the retry budget."""
    rewritten = None
    down = shelf.outages.of(ctx.run_id or '')
    explained = explain_unknown_tool_refusals(
        ctx.messages, state.owners, set(state.loaded), lambda tool: _explain_unknown(shelf, tool, down)
    )
    if explained is not None:
        rewritten, forgiven = explained
        forgive(ctx.retries, forgiven)
    if (reminder := await _reminder(ctx, shelf, state)) is not None:
        ctx.messages[-1] = rewritten = reminder.request
    return rewritten


def explained_refusals(ctx: RunContext[Any], shelf: Shelf, state: LoadState) -> set[str]:
    """The tools whose "Unknown tool name" refusals in the latest request `revised_request` explains, so that
    `prepare_tools` gives back what pydantic-ai charged for them: its retry counts for the step are set there, before
    the request reaches `before_model_request`, so a model that calls a skill's name as a tool twice (or a tool of a
    server that is down) would otherwise end the run."""
    down = shelf.outages.of(ctx.run_id or '')
    return {
        tool
        for tool in unknown_tool_refusals(ctx.messages)
        if tool in state.owners or _explain_unknown(shelf, tool, down) is not None
    }


def _explain_unknown(shelf: Shelf, tool: str, down: dict[str, str]) -> str | None:
    """What to tell a model that called `tool`, which is not a tool: a skill's name (written as it is or with `_` for
    `-`) is loaded with `load_skill`, `search_skills` is not offered when every skill is listed, and while a skill's
    tool server is down (`down`: skill → what happened) its tools are not listed, so an unknown tool may be one of
    them (a model remembers them from an earlier run): it is told which skills' tools are unavailable. An agent tool a
    skill's `tools:` names is hidden until that skill loads: the model is told which skill to load."""
    if tool == 'search_skills' and Operation.SEARCH in shelf.unused:
        return unused_search_message()
    if (gated := shelf.gates.hidden_message(tool)) is not None:
        return gated
    for name in dict.fromkeys((tool, tool.replace('_', '-'), tool.lower().replace('_', '-'))):
        # The catalog, not a use: `load_skill` scans the skill (and refuses it if it must).
        if (skill := shelf.library.skills.get(name)) is not None and skill.model_invocable:
            return skill_called_as_tool_message(tool, name)
    if down:
        return ' '.join(
            tool_server_down_message(skill, what, tool if index == 0 else None)
            for index, (skill, what) in enumerate(down.items())
        )
    return None


async def _reminder(ctx: RunContext[Any], shelf: Shelf, state: LoadState) -> Reminder | None:
    options = shelf.options.reminders
    if not options.reminders or (prompt := prompt_to_remind(ctx.messages)) is None:
        return None
    (request, query), loaded = prompt, list(state.loaded)

    def remind() -> Reminder | None:
        return with_reminder(request, query, shelf.library, loaded, options.reminders, options.reminder_threshold)

    return await traced_meta_call(ctx, 'remind', {'query': query}, loaded, lambda: off_event_loop(remind))
