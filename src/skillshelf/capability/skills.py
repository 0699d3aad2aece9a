"""`Skills`: the pydantic-ai capability that puts a skill library on the agent's shelf.

Read it as two tables: the options (flat fields, as agent specs need them; each is declared, documented and checked
in its value object, see `options`), and the hooks pydantic-ai calls, each handing its work to the module named
after it: `state` (what is loaded and visible), `dispatch` (the meta-tool calls), `invocation` (a user's `/name`),
`approval` and `request_notes` (what is added to a request).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import ValidationError
from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.capabilities import AbstractCapability, WrapToolExecuteHandler, durable_operation
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import AgentDepsT, DeferredToolRequests, DeferredToolResults, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

from ..library import LibraryOptions, SkillLibrary
from ..library.source_spec import SourceSpec
from ..ranking.documents import DEFAULT_THRESHOLD
from ..ranking.hybrid import DEFAULT_LEXICAL_WEIGHT
from ..ranking.ranker import RankerFactory, SearchMode
from ..ranking.semantic import Encoder
from ..scan import ScanMode
from ..scripts.limits import ScriptLimits, given_sandbox_limits, warn_ignored_sandbox_limits
from ..skill import Skill
from ..sources.base import SkillSource
from .approval import preapproved
from .asking import answer_unasked, application_answers, ask_first, check_agent
from .catalog import DEFAULT_CATALOG_BUDGET, DEFAULT_CATALOG_ENTRY
from .dispatch import execute
from .durable import in_durable_unit, in_durable_workflow, off_event_loop, workspace_suppliers
from .history import DEFAULT_ID, loaded_from_history, loaded_skills, revealed_from_history
from .invocation import SkillCommand, UserLoad, invoke_from_prompt, user_load
from .isolation import isolating_capability, workspace_label
from .operations import tag_of
from .options import SkillsOptions, resolve_skills, skill_list
from .refusals import describe_problems, forgive, invalid_arguments_message, sanitized
from .request_notes import explained_refusals, revised_request
from .shelf import RESERVED_TOOL_NAMES, Shelf
from .state import LoadState

if TYPE_CHECKING:
    from ..sandbox import SkillSandbox

__all__ = ('DEFAULT_ID', 'RESERVED_TOOL_NAMES', 'SkillCommand', 'Skills', 'loaded_skills')


@dataclass
class Skills(AbstractCapability[AgentDepsT]):
    """Give an agent a library of skills it loads on demand.

    The model sees a short catalog and the meta-tools the library needs (`load_skill`, `search_skills`,
    `unload_skill`, `read_skill_resource`; `run_skill_script` with `scripts`); a skill's instructions and tools reach
    it only after it loads the skill. Which skills are loaded is derived from the run's message history.

    ```python
    agent = Agent('openai:gpt-5.2', capabilities=[Skills(skills=[weather], directories=['skills'])])
    ```

    Every option can also be given in an agent spec (YAML/JSON), where `skills` and `encoder` are import paths
    such as `'myapp.skills:weather'`. Each option is documented where it is declared: `LibraryOptions` (where skills
    come from), `SearchOptions`, `CatalogOptions`, `ReminderOptions` and `ScriptOptions`.
    """

    directories: str | Path | Sequence[str | Path] = ()
    """Library directories (`LibraryOptions.directories`)."""
    _: KW_ONLY
    skills: Sequence[Skill[AgentDepsT]] | Sequence[str] | str = ()
    """Skills defined in Python, or import paths naming a `Skill` or a list of them (`'myapp.skills:weather'`)."""
    sources: SkillSource | SourceSpec | Sequence[SkillSource | SourceSpec] = ()
    """Other sources of skills (`LibraryOptions.sources`)."""
    command_directories: str | Path | Sequence[str | Path] = ()
    """Directories of command files (`LibraryOptions.command_directories`)."""
    standard_directories: bool = False
    """Also read the usual locations (`LibraryOptions.standard_directories`)."""
    include: str | Sequence[str] = ()
    """The only skills to offer (`LibraryOptions.include`)."""
    exclude: str | Sequence[str] = ()
    """Skills to leave out (`LibraryOptions.exclude`)."""
    id: str | None = DEFAULT_ID
    """Capability id; also tags the tools and history records this capability owns."""
    catalog_budget: int = DEFAULT_CATALOG_BUDGET
    """The catalog's size in characters (`CatalogOptions.catalog_budget`)."""
    catalog_header: str | None = None
    """The catalog's opening text (`CatalogOptions.catalog_header`)."""
    catalog_entry: str = DEFAULT_CATALOG_ENTRY
    """How the catalog lists each skill (`CatalogOptions.catalog_entry`)."""
    pinned: str | Sequence[str] = ()
    """Skills the catalog always lists whole (`CatalogOptions.pinned`)."""
    search_limit: int = 5
    """Default number of `search_skills` results (`SearchOptions.search_limit`)."""
    search_threshold: float = DEFAULT_THRESHOLD
    """The score a search result needs (`SearchOptions.search_threshold`)."""
    unload: Literal['keep', 'hide'] = 'keep'
    """What unloading does to a skill's tools (`UnloadOptions.unload`)."""
    reminders: int = 0
    """Skills pointed out with each new prompt (`ReminderOptions.reminders`)."""
    reminder_threshold: float = 0.6
    """The score a reminder needs (`ReminderOptions.reminder_threshold`)."""
    strict: bool = False
    """Raise on any broken or shadowed skill (`LibraryOptions.strict`)."""
    scan: ScanMode = 'refuse'
    """The content scan of skills from directories and sources: `'refuse'`, `'warn'` or `'off'` (`LibraryOptions.scan`)."""
    search: SearchMode = 'lexical'
    """`'lexical'` or `'hybrid'` ranking (`SearchOptions.search`)."""
    encoder: Encoder | str | None = None
    """Hybrid search's embedding model (`SearchOptions.encoder`)."""
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    """Hybrid search's lexical share (`SearchOptions.lexical_weight`)."""
    ranker: RankerFactory | str | None = None
    """Your own ranking (`SearchOptions.ranker`)."""
    allow_hard_links: bool = False
    """Serve files with other hard links (`LibraryOptions.allow_hard_links`)."""
    auto_reload: bool = True
    """Pick up changed skills at each run (`LibraryOptions.auto_reload`)."""
    lock: str | Path | None = None
    """A lock file the skills must match, or be refused (`LibraryOptions.lock`)."""
    trusted_directories: Sequence[str | Path] = ()
    """Directories whose skills' Python tools are imported (`LibraryOptions.trusted_directories`)."""
    scripts: bool = False
    """Let the model run loaded skills' scripts in the workspace (`ScriptOptions.scripts`)."""
    script_approval: bool | None = None
    """Ask before each script run: always, never, or where the workspace does not isolate (`ScriptOptions.script_approval`)."""
    preapproved_programs: Sequence[str] = ()
    """Programs whose simple commands and scripts run without asking (`ScriptOptions.preapproved_programs`)."""
    script_limits: ScriptLimits = field(default_factory=ScriptLimits)
    """Limits of a script run (`ScriptOptions.script_limits`)."""
    environment: str | Path | None = None
    """The skills' environment every workspace runs scripts on (`ScriptOptions.environment`)."""
    file_tools: bool = False
    """File tools and shell commands on the workspace (`ScriptOptions.file_tools`)."""
    body_commands: bool = False
    """Run the `` !`command` ``s of trusted skills' instructions when they load (`ScriptOptions.body_commands`)."""

    _shelf: Shelf = field(init=False, repr=False, compare=False)
    """The library, catalog and toolset every run shares (built at construction)."""
    _state: LoadState = field(default_factory=LoadState, init=False, repr=False, compare=False)
    """This run's load state (empty on the agent-level instance)."""
    _check_in_run: bool = field(default=False, init=False, repr=False, compare=False)
    """This run is a durable workflow's, so the library check waits for `before_run`, where it is recorded."""
    _sandbox: SkillSandbox | None = field(default=None, init=False, repr=False, compare=False)
    """The workspace `Skills` supplies for scripts when no other capability of the agent supplies one."""

    def __post_init__(self) -> None:
        self.id = self.id or DEFAULT_ID
        options = SkillsOptions.of(self)
        self._shelf = Shelf.build(resolve_skills(self.skills), options, self.id)
        self.search = options.search.search  # an encoder implies hybrid search

    @property
    def library(self) -> SkillLibrary:
        """Every skill available to the model (built at construction)."""
        return self._shelf.library

    @property
    def capability_id(self) -> str:
        """The id this capability tags its tools and history records with."""
        return self.id or DEFAULT_ID

    @property
    def loaded(self) -> list[str]:
        """Skills loaded in this run, in load order (empty on the agent-level instance)."""
        return list(self._state.loaded)

    @classmethod
    def combine(cls, capabilities: Sequence[AbstractCapability[AgentDepsT]]) -> AbstractCapability[AgentDepsT]:
        """Merge several `Skills` with one id into one library: directories, skills, sources and filters in order (an
        `include` only if every part has one), options from the last."""
        parts = cast('Sequence[Skills[AgentDepsT]]', capabilities)
        merged = LibraryOptions.merged([part._shelf.options.library for part in parts])
        skills = cast('list[str]', [skill for part in parts for skill in skill_list(part.skills)])
        return replace(parts[-1], skills=skills, **{name: getattr(merged, name) for name in _MERGED})

    def for_agent(self, agent: AbstractAgent[AgentDepsT, Any]) -> Skills[AgentDepsT]:
        """With scripts or file tools on: check who answers approvals (see `asking.check_agent`), and when no other
        capability of `agent` supplies a workspace, supply skillshelf's sandbox (`SkillSandbox`) as the run's.

        Sandbox limits given the deprecated way (`ScriptLimits(max_memory_bytes=...)`) go to that sandbox; where
        `Skills` makes none, a `SkillWarning` says they are ignored and where to set them.

        Raises:
            SkillError: the sandbox is needed and bubblewrap is not installed, or `script_approval=True` and the agent
                cannot take approvals.
        """
        options = self._shelf.options.scripts
        moved = given_sandbox_limits(options.script_limits)
        if not options.workspace:
            if moved:
                warn_ignored_sandbox_limits(moved, None)
            return self
        suppliers = workspace_suppliers(agent, besides=self)
        host = next((supplier for supplier in suppliers if not isolating_capability(supplier)), None)
        isolated = not suppliers or any(isolating_capability(supplier) for supplier in suppliers)
        label = workspace_label(host) if host is not None else ''
        check_agent(agent, options, besides=type(self), isolated=isolated, workspace=label)
        if suppliers:
            if moved:
                warn_ignored_sandbox_limits(moved, type(suppliers[-1]).__name__)
            return self
        from ..sandbox import SandboxLimits, SkillSandbox  # the sandbox annex, only for an agent with no workspace

        bound = copy.copy(self)
        environment = options.skill_environment
        python = environment.python if environment is not None else None
        bound._sandbox = SkillSandbox(limits=SandboxLimits(**moved), python=python)
        return bound

    def get_workspace(self, ctx: RunContext[AgentDepsT], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        """skillshelf's sandbox, for a new conversation or one whose history names it (see `for_agent`); `None` leaves
        the choice to the agent's other capabilities."""
        return None if self._sandbox is None else self._sandbox.get_workspace(ctx, ref=ref)

    def get_instructions(self) -> str:
        """The catalog: identical on every request, so it never breaks a prompt cache."""
        return self._shelf.catalog

    def get_toolset(self) -> AbstractToolset[AgentDepsT]:
        """The meta-tools and every skill's tools; `prepare_tools` hides the tools of unloaded skills."""
        return self._shelf.toolset

    def commands(self) -> list[SkillCommand]:
        """The skills a user may invoke with `/name` (or `$name`), in catalog order: for a chat UI's autocomplete."""
        skills = self.library.skills.values()
        return [
            SkillCommand(skill.name, skill.description, skill.argument_hint) for skill in skills if skill.user_invocable
        ]

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> Skills[AgentDepsT]:
        """A per-run copy whose loaded skills are replayed from the run's message history.

        Skill folders added, removed or edited since the last run are picked up first (a few `stat`
        calls per skill, in a worker thread, tell whether anything changed; see `auto_reload`), so the catalog
        stays fixed within a run. In a durable workflow the check is a recorded operation that runs in
        `before_run`, once the engine dispatches operations, so what it finds shows in the catalog from the next run.
        """
        if in_durable_unit(ctx):
            return self  # a worker running the recorded check (a Temporal activity): it needs the library only
        durable = in_durable_workflow(ctx)
        if not durable and self.library.watches_files:
            await off_event_loop(self.library.refresh)
        self._shelf.sync()
        clone = copy.copy(self)  # not dataclasses.replace(): that would rebuild the library and toolsets
        loaded = loaded_from_history(ctx.messages, self.capability_id)
        known = self.library.skills
        clone._state = LoadState(loaded if durable else [name for name in loaded if name in known])
        clone._check_in_run = durable
        return clone

    async def before_run(self, ctx: RunContext[AgentDepsT]) -> None:
        """In a durable workflow, the recorded library check: keep only the loads the library had when it ran. Then a
        prompt such as `/release-notes v2.1` loads that skill (see `invocation`)."""
        if self._check_in_run:
            self._state.loaded[:] = await self._refresh_library(ctx, list(self._state.loaded))
        await invoke_from_prompt(ctx, self._shelf, self._state.loaded, self._user_load)

    @durable_operation(name='refresh_library')
    async def _refresh_library(self, ctx: RunContext[AgentDepsT], loaded: list[str]) -> list[str]:
        """The library check of a durable run: re-read the sources if they changed (with `auto_reload`), then return
        which of `loaded` (the skills its history loaded) the library still has.

        Under a durable engine this is a recorded operation (a DBOS step, a Temporal activity), so a replay gets
        the answer the original run got without touching the file system, even if skill folders were added or
        removed since. Its result is small on purpose: the loads a run starts with, not the whole library.
        """
        if self.library.watches_files:
            await off_event_loop(self.library.refresh)
        known = self.library.skills
        return [name for name in loaded if name in known]

    @durable_operation(name='user_load')
    async def _user_load(self, ctx: RunContext[AgentDepsT], name: str, arguments: str) -> UserLoad | None:
        """What a user's `/name` does (see `invocation.user_load`). Under a durable engine this is a recorded
        operation: a recovered run gets the reply the original run got, reading no `SKILL.md`, even if the skill was
        edited or removed since."""
        return await user_load(ctx, self._shelf, name, arguments)

    async def prepare_tools(self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        """Hide the tools of skills not loaded in this conversation, and the agent's tools that a skill's `tools:`
        names until one such skill is loaded (see `gated_tools`); every other tool passes untouched.

        An unloaded skill's tools stay listed, so every request keeps the one before it as a prefix (the prompt
        cache holds); `wrap_tool_execute` refuses their calls. What pydantic-ai charged for refusing a hidden tool,
        or for a mistaken meta-tool call, is given back: a confused model is steered by the replies (see
        `refusals`), never stopped by a retry budget.
        """
        keep = self._shelf.options.unloading.unload == 'keep'
        revealed = revealed_from_history(ctx.messages, self.capability_id) if keep else set[str]()
        shelf = self._shelf
        visible = self._state.visible(tool_defs, self.capability_id, revealed, shelf.name_choices, shelf.unused)
        forgive(ctx.retries, visible.forgiven | explained_refusals(ctx, shelf, self._state))
        return shelf.gates.visible(visible.tools, self.capability_id, {*self._state.loaded, *revealed})

    async def before_model_request(
        self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Explain pydantic-ai's "Unknown tool name" for a skill's tool or name, and, with `reminders`, point out the
        skills that match a new user prompt (see `request_notes`)."""
        previous = ctx.messages[-1] if ctx.messages else None
        if (rewritten := await revised_request(ctx, self._shelf, self._state)) is not None:
            request_context.messages = [
                rewritten if message is previous else message for message in request_context.messages
            ]
        return request_context

    async def before_tool_validate(
        self, ctx: RunContext[AgentDepsT], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
    ) -> Any:
        """A meta-tool's arguments lose any lone surrogate before use, so nothing the model sent can make a reply
        (or the history) impossible to serialise."""
        return sanitized(args) if self._is_meta(tool_def) else args

    async def on_tool_validate_error(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: Any,
        error: ValidationError | ModelRetry,
    ) -> Any:
        """A meta-tool called with arguments that do not fit its schema gets a short message with the inputs escaped
        (pydantic's own error would echo them verbatim)."""
        if not self._is_meta(tool_def) or not isinstance(error, ValidationError):
            raise error
        problems = describe_problems(cast('list[dict[str, object]]', error.errors(include_url=False)))
        raise ModelRetry(invalid_arguments_message(tool_def.name, problems)) from error

    async def after_tool_validate(
        self, ctx: RunContext[AgentDepsT], *, call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any]
    ) -> dict[str, Any]:
        """A shell command (`run_command`) waits for approval, and a script run where `script_approval` says so,
        unless `preapproved_programs` lets it go unasked (see `asking`, and `handle_deferred_tool_calls`)."""
        tag = tag_of(tool_def, self.capability_id)
        options = self._shelf.options.scripts
        ask_first(tag, args, ctx.workspace, options, self.library, approved=ctx.tool_call_approved)
        return args

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[AgentDepsT], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """Approve the calls awaiting approval that a loaded skill's `allowed-tools` pre-approves; the application
        decides the others, and when it takes no approvals, skillshelf decides its own: run where the workspace
        isolates the host, refused where it does not (see `asking`)."""
        decided = preapproved(requests, self._state.loaded, self.library, self._state.owners)
        remaining = requests if decided is None else requests.remaining(decided)
        agent = ctx.agent
        if remaining is None or ctx.root_capability is None or agent is None:
            return decided
        if application_answers(ctx.root_capability, agent.output_type, besides=type(self)):
            return decided
        unasked = answer_unasked(ctx, remaining, self._shelf.options.scripts, self.capability_id)
        if unasked is None:
            return decided
        if decided is not None:
            unasked.update(decided)
        return unasked

    async def wrap_tool_execute(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: WrapToolExecuteHandler,
    ) -> Any:
        """Apply and record load state around the meta-tools, each in a span when the run is instrumented (see
        `dispatch`); other tools run as they are."""
        if (tag := tag_of(tool_def, self.capability_id)) is None:
            return await handler(args)
        return await execute(ctx, tool_def.name, tag, args, handler, self._state, self._shelf)

    def _is_meta(self, tool_def: ToolDefinition) -> bool:
        tag = tag_of(tool_def, self.capability_id)
        return tag is not None and tag.operation is not None


_MERGED = (
    'directories',
    'trusted_directories',
    'sources',
    'command_directories',
    'standard_directories',
    'include',
    'exclude',
)
"""The library options `combine` merges across parts (the others come from the last part)."""
