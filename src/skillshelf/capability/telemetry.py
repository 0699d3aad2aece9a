"""OpenTelemetry spans for the meta-tool calls, visible in Logfire beside pydantic-ai's own.

Each span is opened with the run's tracer (`RunContext.tracer`, set up by pydantic-ai's `Instrumentation`
capability, `agent.instrument` or `Agent.instrument_all()`) inside pydantic-ai's tool span, so it is that span's
child. An uninstrumented run has a no-op tracer, and then nothing is built at all. Skill names and script paths are
always recorded (they name things in the library); the search query is the user's text, recorded only when the
instrumentation includes content (`InstrumentationSettings(include_content=...)`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, cast

from opentelemetry.trace import NoOpTracer, Span, get_current_span
from opentelemetry.util.types import AttributeValue
from pydantic_ai import RunContext

from ..scripts.script import ScriptResult
from .meta_tools import SkillMatch
from .operations import Operation
from .reminders import Reminder

__all__ = ('SPAN_NAMES', 'Traced', 'record_script_result', 'traced_meta_call')

Traced = Operation | Literal['remind']
"""What a span is of: a meta-tool operation, or a reminder's search."""
SPAN_NAMES: dict[Traced, str] = {
    Operation.SEARCH: 'skillshelf.search',
    Operation.LOAD: 'skillshelf.load',
    Operation.UNLOAD: 'skillshelf.unload',
    Operation.READ: 'skillshelf.read_resource',
    Operation.RUN: 'skillshelf.run_script',
    Operation.FILES: 'skillshelf.file',
    Operation.COMMAND: 'skillshelf.command',
    'remind': 'skillshelf.reminder',
}
"""The span of each meta-tool operation, and of a reminder's search."""


async def traced_meta_call(
    ctx: RunContext[Any],
    operation: Traced,
    args: dict[str, Any],
    loaded: Sequence[str],
    call: Callable[[], Awaitable[Any]],
) -> Any:
    """`call()` (one meta-tool call) inside a span named for `operation`, with its arguments and what it found.

    `loaded` is the run's list of loaded skills, read again after the call for the state it left.
    """
    if isinstance(ctx.tracer, NoOpTracer):
        return await call()
    span_name = SPAN_NAMES[operation]
    attributes: dict[str, AttributeValue] = {'logfire.msg': span_name}
    if isinstance(name := args.get('name'), str):
        attributes['skillshelf.skill'] = name
        attributes['logfire.msg'] = f'{span_name} {name}'
    if (
        operation in (Operation.SEARCH, 'remind')
        and ctx.trace_include_content
        and isinstance(query := args.get('query'), str)
    ):
        attributes['skillshelf.query'] = query
    if isinstance(invoked_by := args.get('invoked_by'), str):  # a user's `/name`, outside any tool call
        attributes['skillshelf.invoked_by'] = invoked_by
    if operation is Operation.RUN and isinstance(script := args.get('script'), str):
        attributes['skillshelf.script'] = script
    with ctx.tracer.start_as_current_span(span_name, attributes=attributes) as span:
        result = await call()
        if span.is_recording():
            if operation is Operation.SEARCH:
                _record_matches(span, result)
            if operation == 'remind':
                span.set_attribute('skillshelf.reminded', result.skills if isinstance(result, Reminder) else [])
            span.set_attribute('skillshelf.loaded_skills', list(loaded))
        return result


def record_script_result(result: ScriptResult) -> None:
    """Put a script run's outcome on the current span (the `run_script` span of an instrumented run)."""
    span = get_current_span()
    if span.is_recording():
        span.set_attribute('skillshelf.timed_out', result.timed_out)
        if result.exit_code is not None:
            span.set_attribute('skillshelf.exit_code', result.exit_code)
        span.set_attribute('skillshelf.output_bytes', result.output_bytes)


def _record_matches(span: Span, result: object) -> None:
    """What a search found, best first (none when it replied with text: an empty query, nothing matching)."""
    items = cast('list[object]', result) if isinstance(result, list) else []
    matches = [match for match in items if isinstance(match, SkillMatch)]
    span.set_attribute('skillshelf.results', [match.name for match in matches])
    span.set_attribute('skillshelf.scores', [round(match.score, 4) for match in matches])
