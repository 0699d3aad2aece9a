"""What a forked skill's sub-agent may call, and who approves what needs approval.

Its tools: the skill's own; the parent agent's tools (all of them, or only those its `allowed-tools` names), never
a `Skills` capability's meta-tools, so a fork cannot fork again; `read_skill_resource` for its own files; and, when
the parent's `Skills` has them on, `run_skill_script` for its own scripts and the file tools, on the parent run's
workspace.

Its calls that need approval (a tool with `requires_approval=True` or one that raises `ApprovalRequired`,
`run_command` and script runs as `capability.asking` says) never pass unasked. The sub-agent cannot stop and wait for
the application the way the parent run can (pydantic-ai ends a run with `DeferredToolRequests` and resumes it with
the answers, and the parent cannot resume its sub-agent), so each such call is decided while the sub-agent runs:

1. the skill's own `allowed-tools`, under the rules that hold for a loaded skill (`capability.approval`);
2. else the parent run's deferred-call handlers (a `HandleDeferredToolCalls` or `RequestInput` capability of the
   parent agent, the pre-approvals of the skills loaded there, and, when the application takes no approvals, the
   parent `Skills`'s own answer to a command or script run: run where the workspace isolates the host, refused where
   it does not), asked with the parent run's context; each call's metadata names the skill (`skillshelf_fork`), so an
   approval prompt can say where the call comes from;
3. else it is refused, and the sub-agent is told that the call needed an approval no one could give here, so it
   carries on without it and says so in its reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from pydantic_ai import RunContext, ToolDenied
from pydantic_ai.capabilities import AbstractCapability, WrapToolExecuteHandler
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset, WrapperToolset

from ..library import SkillLibrary
from ..skill import Skill
from .approval import Preapproval, preapproved
from .asking import ask_first
from .file_tools import FILE_TOOL_NAMES
from .meta_tools import Commands, Placement
from .operations import TAG, Operation, ShelfToolset, tag_of
from .options import SkillsOptions
from .script_tool import SCRIPT_TOOL_NAME

__all__ = ('FORK_METADATA_KEY', 'ForkGuard', 'ForkHost', 'fork_toolsets')

FORK_METADATA_KEY = 'skillshelf_fork'
"""Key of the deferred-call metadata that names the forked skill a call awaiting approval comes from."""
_OWN_FILES = frozenset({Operation.RUN, Operation.READ})
"""The workspace tools that take a skill's name: in a fork, only its own."""


class ForkHost(Protocol):
    """What a fork needs of the parent's shelf (`Shelf` is one): declared here so the fork modules sit below the
    shelf that runs them."""

    library: SkillLibrary
    options: SkillsOptions
    capability_id: str
    meta_toolset: AbstractToolset[Any]
    workspace_toolsets: tuple[AbstractToolset[Any], ...]

    @property
    def place(self) -> Placement | None:
        """How a loaded skill's files reach the run's workspace, when scripts are on."""
        ...

    @property
    def commands(self) -> Commands:
        """How the `` !`command` ``s of a skill's instructions are run or refused."""
        ...


def fork_toolsets(
    skill: Skill[Any], shelf: ForkHost, agent_toolsets: Sequence[AbstractToolset[Any]]
) -> list[AbstractToolset[Any]]:
    """The toolsets of `skill`'s sub-agent (see the module docstring); `agent_toolsets` are the parent agent's."""
    toolsets: list[AbstractToolset[Any]] = []
    if skill.tool_names or not skill.tools_known:
        toolsets.append(skill.toolset)
    if skill.content.has_files():
        read = shelf.meta_toolset.filtered(
            lambda _, tool_def: _operation(tool_def, shelf.capability_id) is Operation.READ
        )
        toolsets.append(read)
    toolsets += shelf.workspace_toolsets
    taken = {*skill.tool_names, *_names_of(shelf)}
    allowed = Preapproval(skill.allowed_tools)
    restricted = bool(skill.allowed_tools)

    def parent_tool(_: RunContext[Any], tool_def: ToolDefinition) -> bool:
        if tool_def.name in taken or _is_skillshelf_tool(tool_def):
            return False
        return not restricted or allowed.approves_tool(tool_def.name)

    toolsets += [toolset.filtered(parent_tool) for toolset in _parent_toolsets(agent_toolsets)]
    return toolsets


@dataclass
class ForkGuard(AbstractCapability[Any]):
    """The sub-agent's side of a fork: its own skill's scripts and files only, and approvals decided as the module
    docstring says."""

    skill: Skill[Any]
    """The forked skill."""
    shelf: ForkHost
    """The parent's `Skills` shelf (its library, options and tools)."""
    parent: RunContext[Any]
    """The parent run's context, whose deferred-call handlers are asked."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # built per fork, never named in an agent spec

    async def after_tool_validate(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any]
    ) -> dict[str, Any]:
        """`run_command` and a script run of the skill wait for approval as in the parent (see `asking`)."""
        tag = tag_of(tool_def, self.shelf.capability_id)
        if tag is not None and tag.operation is Operation.RUN and args.get('name') != self.skill.name:
            return args  # another skill's script: `wrap_tool_execute` refuses it
        options, library = self.shelf.options.scripts, self.shelf.library
        ask_first(tag, args, ctx.workspace, options, library, approved=ctx.tool_call_approved)
        return args

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: WrapToolExecuteHandler,
    ) -> Any:
        """Refuse `run_skill_script` and `read_skill_resource` for any skill but this one."""
        operation = _operation(tool_def, self.shelf.capability_id)
        name = args.get('name')
        if operation in _OWN_FILES and name != self.skill.name:
            what = 'its scripts' if operation is Operation.RUN else 'its files'
            return (
                f'Only the skill {self.skill.name!r} runs here, so only {what} are available: '
                f'call `{tool_def.name}` with name {self.skill.name!r}.'
            )
        return await handler(args)

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """Decide every call awaiting approval or an external result: see the module docstring."""
        decided = DeferredToolResults()
        own_tools = dict.fromkeys(self.skill.tool_names, self.skill.name)
        remaining: DeferredToolRequests | None = requests
        if (own := preapproved(requests, [self.skill.name], self.shelf.library, own_tools)) is not None:
            decided.update(own)
            remaining = requests.remaining(own)
        root = self.parent.root_capability
        if remaining is not None and root is not None:
            pending = {call.tool_call_id for call in (*remaining.approvals, *remaining.calls)}
            marked = {
                call_id: {**remaining.metadata.get(call_id, {}), FORK_METADATA_KEY: self.skill.name}
                for call_id in pending
            }
            theirs = await root.handle_deferred_tool_calls(self.parent, requests=replace(remaining, metadata=marked))
            if theirs is not None:
                theirs = DeferredToolResults(
                    approvals={key: value for key, value in theirs.approvals.items() if key in pending},
                    calls={key: value for key, value in theirs.calls.items() if key in pending},
                )
                decided.update(theirs)
                remaining = remaining.remaining(theirs)
        if remaining is not None:
            decided.update(self._refused(remaining))
        return decided

    def _refused(self, requests: DeferredToolRequests) -> DeferredToolResults:
        why = (
            f'this call needs approval, and no one could give it: the skill {self.skill.name!r} runs as a sub-agent, '
            "where a call that needs approval runs only if the skill's `allowed-tools` or the application approves "
            'it. Do not retry it: carry on without it, and say in your reply what you could not do and why.'
        )
        external = (
            f'this call waits for a result from outside the run, which a skill running as a sub-agent '
            f'({self.skill.name!r}) cannot wait for. Do not retry it: carry on without it, and say so in your reply.'
        )
        return requests.build_results(
            approvals={call.tool_call_id: ToolDenied(f'Not run: {why}') for call in requests.approvals},
            calls={call.tool_call_id: ToolFailed(f'Not run: {external}') for call in requests.calls},
        )


def _operation(tool_def: ToolDefinition, capability_id: str) -> Operation | None:
    tag = tag_of(tool_def, capability_id)
    return tag.operation if tag is not None else None


def _is_skillshelf_tool(tool_def: ToolDefinition) -> bool:
    """Whether a tool is a `Skills` capability's (of any id): a meta-tool, or a skill's tool, which a fork does not
    get from its parent."""
    metadata = tool_def.metadata
    return isinstance(metadata, dict) and isinstance(metadata.get(TAG), dict)  # pyright: ignore[reportUnknownMemberType]


def _names_of(shelf: ForkHost) -> set[str]:
    """The names of the tools a fork gets from `shelf`, which none of the parent's tools may take."""
    scripts = shelf.options.scripts
    return {
        'read_skill_resource',
        *([SCRIPT_TOOL_NAME] if scripts.scripts else []),
        *(FILE_TOOL_NAMES if scripts.file_tools else ()),
    }


def _parent_toolsets(toolsets: Sequence[AbstractToolset[Any]]) -> list[AbstractToolset[Any]]:
    """The parent agent's toolsets, its capabilities' taken out of the wrapper that binds them to their capability
    (the sub-agent does not have it), without any `Skills` capability's."""
    found: list[AbstractToolset[Any]] = []
    for toolset in toolsets:
        if isinstance(toolset, ShelfToolset):
            continue
        if isinstance(toolset, CombinedToolset):
            found += _parent_toolsets(toolset.toolsets)
        elif isinstance(toolset, WrapperToolset) and isinstance(
            getattr(toolset, 'capability', None), AbstractCapability
        ):
            found += _parent_toolsets([toolset.wrapped])
        else:
            found.append(toolset)
    return found
