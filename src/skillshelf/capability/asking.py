"""When skillshelf asks before a shell command or a skill's script runs, and who answers when the application cannot.

`run_command` (with `file_tools`) asks before it runs; a script run (`run_skill_script`) asks with
`script_approval=True`, and by default (`None`) where the run's workspace does not isolate the host (see
`isolation`). A call asks no one when it is one simple command of a program in `preapproved_programs` (a script run:
on such an interpreter), or when a loaded skill's `allowed-tools` pre-approves it (see `approval`).

The application answers when the agent can take deferred calls: a capability handles them (`HandleDeferredToolCalls`,
`RequestInput`, a `Hooks` with that hook, any other that overrides `handle_deferred_tool_calls`) or
`DeferredToolRequests` is among the agent's output types. When it cannot, no run ends with pydantic-ai's "A deferred
tool call was present" error: skillshelf answers its own calls, running them in a workspace that isolates the host
and refusing them in one that does not, with a sentence the model can act on; a script run the application asked to
approve (`script_approval=True`) is refused anywhere. When the agent is built, `script_approval=True` on an agent that
cannot take approvals is an error, and a workspace that does not isolate gets a `SkillWarning` saying how to turn
approvals on. A run's own `output_type=` is not visible to capabilities: declare `DeferredToolRequests` on the agent.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from types import UnionType
from typing import Any, Union, cast, get_args, get_origin

from pydantic_ai import RunContext
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.capabilities import AbstractCapability, CombinedCapability, Hooks, WrapperCapability
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from pydantic_ai.workspaces import Workspace

from ..errors import SkillError, SkillWarning
from ..library import SkillLibrary
from .approval import answered, ask_before_command, ask_before_script, same_program, script_call
from .isolation import isolates
from .operations import Operation, Tag, tag_of
from .script_tool import ScriptOptions
from .simple_command import simple_command

__all__ = ('answer_unasked', 'application_answers', 'ask_first', 'check_agent')

_TURN_APPROVALS_ON = (
    'To ask a person, give the agent a `HandleDeferredToolCalls` or `RequestInput` capability, or put '
    '`DeferredToolRequests` among its output types (`output_type=[str, DeferredToolRequests]`)'
)
_HOST = (
    'no one can give it here: the workspace is the machine the agent runs on, not a sandbox, and the application '
    'takes no approvals. Do not retry it: carry on without {what}, and tell the user that running them needs the '
    'application to turn approvals on or to run the agent in a sandbox.'
)


def ask_first(
    tag: Tag | None,
    args: dict[str, Any],
    workspace: Workspace,
    options: ScriptOptions,
    library: SkillLibrary,
    *,
    approved: bool,
) -> None:
    """Make a `run_command` or script run wait for approval when it must (see the module docstring).

    Raises:
        ApprovalRequired: the call waits for approval.
    """
    if tag is None or approved:
        return
    programs = options.preapproved_programs
    if tag.operation is Operation.COMMAND and not _preapproved_line(str(args.get('command', '')), programs):
        ask_before_command(tag, args, approved=approved)
    elif (
        tag.operation is Operation.RUN
        and _script_asks(options, workspace)
        and not (programs and _preapproved_script(args, library, programs))
    ):
        ask_before_script(tag, args, library, approved=approved)


def application_answers(root: AbstractCapability[Any], output_type: object, *, besides: type[object]) -> bool:
    """Whether the application takes deferred calls: `DeferredToolRequests` is among `output_type`, or a capability
    under `root` other than those of type `besides` (the `Skills` capabilities) handles them."""
    return DeferredToolRequests in _output_types(output_type) or _handles_deferred_calls(root, besides)


def answer_unasked(
    ctx: RunContext[Any], requests: DeferredToolRequests, options: ScriptOptions, capability_id: str
) -> DeferredToolResults | None:
    """skillshelf's answers to its own calls in `requests`, for a run whose application takes none: run in a workspace
    that isolates the host, refused elsewhere (see the module docstring); `None` when none of them is its own."""
    tools = ctx.tools
    approvals: dict[str, ToolApproved | ToolDenied] = {}
    answered_by: dict[str, str] = {}
    isolated = isolates(ctx.workspace)
    for call in requests.approvals:
        tool_def = tools.get(call.tool_name)
        tag = tag_of(tool_def, capability_id) if tool_def is not None else None
        operation = tag.operation if tag is not None else None
        if operation is not Operation.COMMAND and operation is not Operation.RUN:
            continue
        approvals[call.tool_call_id] = _answer(operation, options, isolated=isolated)
        answered_by[call.tool_call_id] = f'skillshelf ({"an isolating" if isolated else "a host"} workspace)'
    return answered(requests, approvals, answered_by)


def check_agent(
    agent: AbstractAgent[Any, Any], options: ScriptOptions, *, besides: type[object], isolated: bool, workspace: str
) -> None:
    """At construction: refuse `script_approval=True` on an agent that cannot take approvals, and warn when calls
    will be refused because its workspace (`workspace`, named for the developer) does not isolate the host.

    Raises:
        SkillError: `script_approval=True` and the agent cannot take approvals.
    """
    if application_answers(agent.root_capability, agent.output_type, besides=besides):
        return
    if options.scripts and options.script_approval is True:
        raise SkillError(
            '`script_approval=True` asks the application before every script run, but this agent cannot take '
            f'approvals. {_TURN_APPROVALS_ON}; or leave `script_approval` unset, so scripts run unasked in a '
            'sandbox and are refused on the host'
        )
    refused = [
        *(['`run_command`'] if options.file_tools else []),
        *(['script runs'] if options.scripts and options.script_approval is None else []),
        *(
            ["the `!` commands of skills' instructions"]
            if options.body_commands and options.script_approval is None
            else []
        ),
    ]
    if isolated or not refused or options.preapproved_programs:
        return
    warnings.warn(
        SkillWarning(
            f'{" and ".join(refused)} will be refused: the run works in {workspace}, and this agent cannot take '
            f'approvals. {_TURN_APPROVALS_ON}; or run it in a sandbox (`SkillSandbox`, a pydantic-ai-harness '
            'sandbox); or name the programs that may run unasked in `preapproved_programs`'
            + (
                ", or set `script_approval=False` to run skills' scripts unasked"
                if options.scripts or options.body_commands
                else ''
            )
        ),
        stacklevel=2,
    )


def _answer(operation: Operation, options: ScriptOptions, *, isolated: bool) -> ToolApproved | ToolDenied:
    if operation is Operation.RUN and options.script_approval is True:
        return ToolDenied(
            'Not run: the application approves every script run, and no one can give approval in this run. Do not '
            "retry it: carry on without the skill's scripts, and tell the user."
        )
    if isolated:
        return ToolApproved()
    if operation is Operation.COMMAND:
        return ToolDenied('Not run: this command needs approval, and ' + _HOST.format(what='commands'))
    return ToolDenied('Not run: this script run needs approval, and ' + _HOST.format(what="the skill's scripts"))


def _script_asks(options: ScriptOptions, workspace: Workspace) -> bool:
    if options.script_approval is None:
        return not isolates(workspace)
    return options.script_approval


def _program(word: str) -> str:
    return same_program(word)


def _preapproved_line(command: str, programs: Sequence[str]) -> bool:
    """Whether `command` is one simple command of a program in `programs`, named by its bare name."""
    simple = simple_command(command) if programs else None
    return simple is not None and _program(simple.program) in {_program(program) for program in programs}


def _preapproved_script(args: dict[str, Any], library: SkillLibrary, programs: Sequence[str]) -> bool:
    """Whether the script run `args` asks for runs on an interpreter in `programs`."""
    name = args.get('name')
    skill = library.get(name) if isinstance(name, str) else None
    call = script_call(skill, args) if skill is not None else None
    return call is not None and bool(call.interpreter) and call.interpreter in {_program(p) for p in programs}


def _output_types(output_type: object) -> list[object]:
    """`output_type` flattened: the members of lists and unions."""
    if isinstance(output_type, Sequence) and not isinstance(output_type, str):
        return [member for item in cast('Sequence[object]', output_type) for member in _output_types(item)]
    if get_origin(output_type) in (Union, UnionType):
        return [member for item in get_args(output_type) for member in _output_types(item)]
    return [output_type]


def _handles_deferred_calls(root: AbstractCapability[Any], besides: type[object]) -> bool:
    found: list[AbstractCapability[Any]] = []

    def visit(capability: AbstractCapability[Any]) -> None:
        kind = type(capability)
        if isinstance(capability, (besides, WrapperCapability, CombinedCapability)):
            return  # a wrapper or a group passes the calls on to what it holds, which is visited too
        if kind.handle_deferred_tool_calls is AbstractCapability.handle_deferred_tool_calls:
            return
        if kind.handle_deferred_tool_calls is Hooks.handle_deferred_tool_calls:
            registered = getattr(capability, '_get', None)  # a `Hooks` handles them only with such a hook
            if callable(registered) and not registered('handle_deferred_tool_calls'):
                return
        found.append(capability)

    root.apply(visit)
    return bool(found)
