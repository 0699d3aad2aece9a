"""`Skills`: the pydantic-ai capability that puts a skill library on the agent's shelf."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import ValidationError
from pydantic_ai import ApprovalRequired, ModelRetry, RunContext, ToolReturn
from pydantic_ai.capabilities import AbstractCapability, WrapToolExecuteHandler, durable_operation
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import AgentDepsT, DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset

from .._imports import import_object
from ..errors import SkillFormatError
from ..library import SkillLibrary, check_tool_names
from ..name_filter import merged_include, name_patterns
from ..ranking.hybrid import DEFAULT_LEXICAL_WEIGHT
from ..ranking.lexical import DEFAULT_THRESHOLD
from ..ranking.ranker import RankerFactory, SearchMode
from ..ranking.semantic import Encoder
from ..scripts.runner import ScriptRunner
from ..skill import Skill
from ..sources.base import SkillSource
from ..sources.spec import SourceSpec, resolve_sources
from .approval import preapproving_skill, script_command_of
from .catalog import (
    DEFAULT_CATALOG_BUDGET,
    DEFAULT_CATALOG_ENTRY,
    CatalogEntry,
    render_catalog,
    text_fields,
)
from .durable import in_durable_unit, in_durable_workflow, off_event_loop
from .fork import forks, run_fork
from .history import (
    DEFAULT_ID,
    loaded_from_history,
    loaded_skills,
    revealed_from_history,
    skill_tool_tag,
    state_change,
    tag_of,
)
from .invocation import SkillCommand, invocation_messages, parse_invocation
from .lazy_toolset import LazyToolset
from .meta_tools import (
    META_TOOL_NAMES,
    build_meta_toolset,
    load_reply,
    read_instructions,
    unknown_skill_message,
    unreadable_message,
    with_name_choices,
)
from .options import check_options, directory_list, import_encoder, resolve_skills, skill_list
from .refusals import (
    describe_problems,
    explain_hidden_tool_refusals,
    forgive,
    invalid_arguments_message,
    sanitized,
    unloaded_tool_message,
)
from .reminders import Reminder, prompt_to_remind, with_reminder
from .script_tool import SCRIPT_TOOL_NAME, build_script_toolset, script_runner
from .state import LoadState
from .telemetry import traced_meta_call

__all__ = ('DEFAULT_ID', 'RESERVED_TOOL_NAMES', 'SkillCommand', 'Skills', 'loaded_skills')

NAME_CHOICES_LIMIT = 30
"""Libraries of at most this many skills list the valid names in `load_skill`'s schema (an enum)."""
RESERVED_TOOL_NAMES = (*META_TOOL_NAMES, SCRIPT_TOOL_NAME)
"""Tool names no skill may use: the meta-tools, and `run_skill_script` whether or not scripts are enabled."""


@dataclass
class Skills(AbstractCapability[AgentDepsT]):
    """Give an agent a library of skills it loads on demand.

    The model sees a short catalog and four meta-tools (`search_skills`, `load_skill`, `unload_skill`,
    `read_skill_resource`; `run_skill_script` too with `scripts`); a skill's instructions and tools reach it only
    after it loads the skill. Which skills are loaded is derived from the run's message history.

    ```python
    agent = Agent('openai:gpt-5.2', capabilities=[Skills(skills=[weather], directories=['skills'])])
    ```

    Every option can also be given in an agent spec (YAML/JSON), where `skills` and `encoder` are import paths
    such as `'myapp.skills:weather'`.
    """

    directories: str | Path | Sequence[str | Path] = ()
    """Library directories: each holds skill folders (or is one). Earlier directories win name clashes."""
    _: KW_ONLY
    skills: Sequence[Skill[AgentDepsT]] | Sequence[str] | str = ()
    """Skills defined in Python, or import paths naming a `Skill` or a list of them (`'myapp.skills:weather'`)."""
    sources: SkillSource | SourceSpec | Sequence[SkillSource | SourceSpec] = ()
    """Other places skills come from, after the directories: `SkillSource`s, import paths of them, or in a spec
    `{'package': ...}`, `{'entry_points': ...}`, `{'git': url, 'ref': ...}`, `{'registry': url}`."""
    command_directories: str | Path | Sequence[str | Path] = ()
    """Directories of Claude Code command files (`*.md`, each a skill named by its file), read after `directories`."""
    standard_directories: bool = False
    """Also read the usual locations that exist: `.claude/skills`, `.agents/skills`, `.claude/commands` here, then
    `~/.claude/skills`, `~/.agents/skills`, `~/.codex/skills`, `~/.claude/commands` (earlier ones win clashes)."""
    include: str | Sequence[str] = ()
    """Names or globs (`'pdf-*'`) of the only skills to offer; empty offers every skill."""
    exclude: str | Sequence[str] = ()
    """Names or globs of skills to leave out of the catalog, search and `load_skill`; exclude wins over include."""
    id: str | None = DEFAULT_ID
    """Capability id; also tags the tools and history records this capability owns."""
    catalog_budget: int = DEFAULT_CATALOG_BUDGET
    """Characters the catalog in the instructions may use; larger libraries get shorter descriptions, then names,
    then a pointer to `search_skills`."""
    catalog_header: str | None = None
    """The catalog's opening text instead of the default (`{count}` becomes the number of skills)."""
    catalog_entry: str = DEFAULT_CATALOG_ENTRY
    """How the catalog lists each skill: `{name}`, `{description}` and any text field of its frontmatter
    (`{when_to_use}`, `{argument-hint}`, `{license}`, ...); a field a skill lacks shows as nothing."""
    search_limit: int = 5
    """Default number of `search_skills` results."""
    search_threshold: float = DEFAULT_THRESHOLD
    """The score (0 to 1) a skill needs to be a `search_skills` result: higher finds fewer near-misses, and nothing
    more often."""
    reminders: int = 0
    """With each new user prompt, point out up to this many matching skills in a short note at the end of that
    request (never in the instructions, so the prompt cache holds); 0 adds none."""
    reminder_threshold: float = 0.6
    """The score (0 to 1, as `search_skills` reports it) a skill needs to be pointed out by a reminder."""
    strict: bool = False
    """Raise on any broken or shadowed skill folder instead of skipping it with a warning."""
    search: SearchMode = 'lexical'
    """How `search_skills` ranks: `'lexical'` (BM25) or `'hybrid'` (BM25 plus embeddings, see `encoder`)."""
    encoder: Encoder | str | None = None
    """Hybrid search's embedding model (texts → L2-normalised rows), or its import path; default: the `[semantic]`
    extra's model."""
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    """Hybrid only: the lexical score's share (0–1) for a short skill; the embedding similarity gets the rest, less
    for a longer skill, whose embedding tells only what its start says."""
    ranker: RankerFactory | str | None = None
    """Your own ranking instead of `search`'s: a callable (a class will do) building a `Ranker` from the library's
    `SearchDocument`s, or its import path."""
    allow_hard_links: bool = False
    """Serve a skill's files that have other hard links. Off by default: a hard link's other names may lie outside
    the skill folder. Turn it on for libraries installed with hard links (e.g. by `uv` in its default link mode)."""
    auto_reload: bool = True
    """Check the directories for added, removed or edited skills at the start of each run: one `stat` per
    skill, about 0.7 s per run at 100k skills. Turn it off for a library that does not change while the
    process runs."""
    trusted_directories: Sequence[str | Path] = ()
    """Directories (of `directories`) whose skills get the Python tools their `SKILL.md` declares (`tools:`).
    Importing them runs code from the folder, so a skill elsewhere that declares tools loads without them."""
    scripts: bool | ScriptRunner = False
    """Let the model run the scripts of loaded skills with `run_skill_script`: `True` runs each in a bubblewrap
    sandbox (`BubblewrapRunner`); or pass a runner (`LocalRunner()` runs them unsandboxed, for trusted skills only).
    With scripts on, `${SKILL_DIR}` in a skill's instructions becomes its folder as scripts see it."""
    script_approval: bool = False
    """Ask before each script run (pydantic-ai's deferred tool requests: the run ends with `DeferredToolRequests`,
    or a `HandleDeferredToolCalls` capability decides), unless the loaded skill's `allowed-tools` pre-approves it
    (`Bash(python scripts/fill.py:*)`; see `capability.approval`)."""

    library: SkillLibrary = field(init=False, repr=False, compare=False)
    """Every skill available to the model (built at construction)."""
    _catalog: str = field(init=False, repr=False, compare=False)
    _catalog_skills: dict[str, Skill[Any]] | None = field(default=None, init=False, repr=False, compare=False)
    """The library's skills the catalog was rendered from; a check that found changes replaces them."""
    _check_in_run: bool = field(default=False, init=False, repr=False, compare=False)
    """This run is a durable workflow's, so the library check waits for `before_run`, where it is recorded."""
    _toolset: AbstractToolset[AgentDepsT] = field(init=False, repr=False, compare=False)
    _tool_count: int = field(default=0, init=False, repr=False, compare=False)
    _state: LoadState = field(default_factory=LoadState, init=False, repr=False, compare=False)
    _runner: ScriptRunner | None = field(default=None, init=False, repr=False, compare=False)
    _with_tools: set[str] = field(default_factory=set[str], init=False, repr=False, compare=False)
    _name_choices: list[str] | None = field(default=None, init=False, repr=False, compare=False)
    """The names `load_skill` accepts, listed in its schema for a small library so a model cannot misspell one."""
    """The skills whose toolsets are registered: only theirs are announced on load."""

    def __post_init__(self) -> None:
        self.id = self.id or DEFAULT_ID
        check_options(self)
        self._runner = script_runner(self.scripts)
        skills = resolve_skills(self.skills)
        encoder = import_encoder(self.encoder) if isinstance(self.encoder, str) else self.encoder
        ranker = (
            cast('RankerFactory', import_object(self.ranker, 'ranker')) if isinstance(self.ranker, str) else self.ranker
        )
        self.library = SkillLibrary.build(
            skills,
            directory_list(self.directories, 'directories'),
            strict=self.strict,
            reserved_tool_names=RESERVED_TOOL_NAMES,
            search=self.search,
            encoder=encoder,
            lexical_weight=self.lexical_weight,
            ranker=ranker,
            allow_hard_links=self.allow_hard_links,
            trusted_directories=directory_list(self.trusted_directories, 'trusted_directories'),
            sources=resolve_sources(self.sources),
            command_directories=directory_list(self.command_directories, 'command_directories'),
            standard_directories=self.standard_directories,
            include=self.include,
            exclude=self.exclude,
        )
        self.search = self.library.search_mode
        self._sync_catalog()
        # Every Python skill's toolset is registered, even an empty one, so a tool added to a skill after this
        # point is callable once the skill is loaded (its name is checked for clashes at the next run).
        with_tools = [skill for skill in self.library.skills.values() if skill.origin is None or skill.tool_names]
        self._tool_count = _count_tools(with_tools)
        self._with_tools = {skill.name for skill in with_tools}
        # Built once and shared by every run's clone: durable engines require toolsets that exist at construction.
        self._toolset = CombinedToolset[AgentDepsT](
            [
                build_meta_toolset(
                    self.library,
                    self.id,
                    self.search_limit,
                    self._with_tools,
                    self._skill_dir,
                    threshold=self.search_threshold,
                ),
                *([build_script_toolset(self.library, self.id, self._runner)] if self._runner is not None else []),
                *(_skill_toolset(skill, self.id) for skill in with_tools),
            ]
        )

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
        """Merge several `Skills` with one id into one library: directories, skills and filters in order (an `include`
        only if every part has one), options from the last."""
        parts = cast('Sequence[Skills[AgentDepsT]]', capabilities)
        return replace(
            parts[-1],
            directories=[directory for part in parts for directory in directory_list(part.directories, 'directories')],
            trusted_directories=[
                directory
                for part in parts
                for directory in directory_list(part.trusted_directories, 'trusted_directories')
            ],
            skills=cast('list[str]', [skill for part in parts for skill in skill_list(part.skills)]),
            sources=[source for part in parts for source in resolve_sources(part.sources)],
            command_directories=[
                path for part in parts for path in directory_list(part.command_directories, 'command_directories')
            ],
            standard_directories=any(part.standard_directories for part in parts),
            include=merged_include([part.include for part in parts]),
            exclude=[pattern for part in parts for pattern in name_patterns(part.exclude, 'exclude')],
        )

    def get_instructions(self) -> str:
        """The catalog: identical on every request, so it never breaks a prompt cache."""
        return self._catalog

    def get_toolset(self) -> AbstractToolset[AgentDepsT]:
        """The meta-tools and every skill's tools; `prepare_tools` hides the tools of unloaded skills."""
        return self._toolset

    def _render_catalog(self) -> str:
        entries = [
            CatalogEntry(skill.name, skill.description, text_fields(skill.metadata))
            for skill in self.library.skills.values()
            if skill.model_invocable  # `disable-model-invocation: true`: a skill for users to invoke only
        ]
        return render_catalog(entries, self.catalog_budget, header=self.catalog_header, entry=self.catalog_entry)

    @durable_operation(name='refresh_library')
    async def _refresh_library(self, ctx: RunContext[AgentDepsT], loaded: list[str]) -> list[str]:
        """The library check of a durable run: re-read the skill directories if they changed (with `auto_reload`),
        then return which of `loaded` (the skills its history loaded) the library still has.

        Under a durable engine this is a recorded operation (a DBOS step, a Temporal activity), so a replay gets
        the answer the original run got without touching the file system, even if skill folders were added or
        removed since. Its result is small on purpose: the loads a run starts with, not the whole library.
        """
        if self.auto_reload:
            await off_event_loop(self.library.refresh)
        known = self.library.skills
        return [name for name in loaded if name in known]

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
        if self.auto_reload and not durable and self.library.watches_files:
            await off_event_loop(self.library.refresh)
        self._sync_catalog()
        self._check_new_tools()
        clone = copy.copy(self)  # not dataclasses.replace(): that would rebuild the library and toolsets
        loaded = loaded_from_history(ctx.messages, self.capability_id)
        known = self.library.skills
        clone._state = LoadState(loaded if durable else [name for name in loaded if name in known])
        clone._check_in_run = durable
        return clone

    async def before_run(self, ctx: RunContext[AgentDepsT]) -> None:
        """In a durable workflow, the recorded library check: keep only the loads the library had when it ran."""
        if self._check_in_run:
            self._state.loaded[:] = await self._refresh_library(ctx, list(self._state.loaded))
        await self._invoke_from_prompt(ctx)

    async def _invoke_from_prompt(self, ctx: RunContext[AgentDepsT]) -> None:
        """A prompt such as `/release-notes v2.1` loads that skill now, recorded in the history like a model's load
        (see `invocation`), so its instructions are in the model's first request."""
        if (parsed := parse_invocation(ctx.prompt)) is None:
            return
        name, arguments = parsed
        # Asked of the library in a recorded operation, whatever the prompt names: a replay must schedule the same
        # operations as the original run, so whether to ask cannot depend on the library as it is at replay time.
        if (outcome := await self._user_load(ctx, name, arguments)) is None:
            return
        status, text = outcome

        async def invoke() -> ToolReturn[Any] | str:
            if status == 'fork':
                skill = self.library.get(name)
                return (
                    unknown_skill_message(self.library, name)
                    if skill is None
                    else await self._fork(ctx, skill, arguments)
                )
            if status == 'unreadable':
                return text
            if name not in self._state.loaded:
                self._state.loaded.append(name)
            return ToolReturn(text, metadata=state_change(self.capability_id, 'load', name))

        reply = await traced_meta_call(ctx, 'load', {'name': name, 'invoked_by': 'user'}, self._state.loaded, invoke)
        ctx.enqueue(*invocation_messages(f'{self.capability_id}-invoke-{ctx.run_id}', name, arguments, reply))

    @durable_operation(name='user_load')
    async def _user_load(
        self, ctx: RunContext[AgentDepsT], name: str, arguments: str
    ) -> tuple[Literal['loaded', 'unreadable', 'fork'], str] | None:
        """What a user's `/name` does: `('loaded', reply)` with the text the load returns, `('unreadable', why)`, or
        `('fork', '')` for a skill that runs as a sub-agent (the caller runs it); `None` when `name` is no skill a
        user may invoke.

        Under a durable engine this is a recorded operation (a DBOS step, a Temporal activity): a recovered run gets
        the reply the original run got, reading no `SKILL.md`, even if the skill was edited or removed since.
        """
        skill = self.library.get(name)
        if skill is None or not skill.user_invocable:
            return None
        if forks(skill):
            return 'fork', ''
        reply = load_reply(self.library, self.capability_id, name, self._with_tools, self._skill_dir, arguments)
        return ('unreadable', reply) if isinstance(reply, str) else ('loaded', str(reply.return_value))

    async def _fork(self, ctx: RunContext[AgentDepsT], skill: Skill[Any], arguments: str) -> str:
        """Run a `context: fork` skill as a sub-agent (see `fork`): the parent gets its final output only."""
        try:
            instructions = read_instructions(skill, self._skill_dir, arguments)
        except (SkillFormatError, OSError) as error:
            return unreadable_message(skill.name, error)
        output = await run_fork(ctx, skill, instructions, RESERVED_TOOL_NAMES)
        return f'The skill {skill.name!r} ran in a sub-agent. Its result:\n\n{output}'

    def commands(self) -> list[SkillCommand]:
        """The skills a user may invoke with `/name` (or `$name`), in catalog order: for a chat UI's autocomplete."""
        return [
            SkillCommand(skill.name, skill.description, skill.argument_hint)
            for skill in self.library.skills.values()
            if skill.user_invocable
        ]

    @property
    def _skill_dir(self) -> Callable[[Path], str] | None:
        """With scripts on, how `${SKILL_DIR}` is expanded: the folder as the runner shows it to scripts."""
        return self._runner.skill_dir if self._runner is not None else None

    def _sync_catalog(self) -> None:
        """Render the catalog again if a library check (this run's or a concurrent run's) replaced the skills;
        checked and rendered without an await, so concurrent runs never see a half-updated catalog."""
        if self.library.skills is not self._catalog_skills:
            self._catalog_skills = self.library.skills
            self._catalog = self._render_catalog()
            loadable = [skill.name for skill in self.library.skills.values() if skill.model_invocable]
            self._name_choices = loadable if len(loadable) <= NAME_CHOICES_LIMIT else None

    def _check_new_tools(self) -> None:
        """Tools added to Python skills since construction must not clash with others (or with a meta-tool)."""
        count = _count_tools(self.library.skills.values())
        if count != self._tool_count:
            check_tool_names(self.library.skills.values(), set(RESERVED_TOOL_NAMES))
            self._tool_count = count

    async def prepare_tools(self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        """Hide the tools of skills not loaded in this conversation; every other tool passes untouched.

        An unloaded skill's tools stay listed, so every request keeps the one before it as a prefix (the prompt
        cache holds); `wrap_tool_execute` refuses their calls.

        What pydantic-ai charged for refusing a hidden tool, or for a mistaken meta-tool call, is given back here:
        a confused model is steered by the replies (see `refusals`), never stopped by a retry budget.
        """
        visible: list[ToolDefinition] = []
        forgiven: set[str] = set()
        shown = {*self._state.loaded, *revealed_from_history(ctx.messages, self.capability_id)}
        for tool_def in tool_defs:
            tag = tag_of(tool_def, self.capability_id)
            skill = tag.get('skill') if tag is not None else None
            if tag is not None and 'meta' in tag:
                forgiven.add(tool_def.name)
                if tag['meta'] == 'load' and self._name_choices:
                    tool_def = with_name_choices(tool_def, self._name_choices)
            if not isinstance(skill, str):
                visible.append(tool_def)
                continue
            self._state.owners[tool_def.name] = skill
            if skill in shown:
                if tool_def.name in self._state.hidden:  # charged only for refusals while it was hidden
                    forgiven.add(tool_def.name)
                visible.append(tool_def)
            else:
                forgiven.add(tool_def.name)
        forgive(ctx.retries, forgiven)
        self._state.hidden = {name for name, skill in self._state.owners.items() if skill not in shown}
        return visible

    async def before_model_request(
        self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Replace pydantic-ai's "Unknown tool name" for a hidden skill tool with the skill to load, and, with
        `reminders`, point out the skills that match a new user prompt (see `reminders`). Both change the request in
        the history too, so later requests repeat it as it was sent."""
        previous = ctx.messages[-1] if ctx.messages else None
        rewritten = explain_hidden_tool_refusals(ctx.messages, self._state.owners, set(self._state.loaded))
        if self.reminders and (prompt := prompt_to_remind(ctx.messages)) is not None:
            (request, query), loaded = prompt, list(self._state.loaded)

            def remind() -> Reminder | None:
                return with_reminder(request, query, self.library, loaded, self.reminders, self.reminder_threshold)

            reminder = await traced_meta_call(ctx, 'remind', {'query': query}, loaded, lambda: off_event_loop(remind))
            if reminder is not None:
                ctx.messages[-1] = rewritten = reminder.request
        if rewritten is not None:
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
        """With `script_approval`, a loaded skill's script run waits for approval (see `handle_deferred_tool_calls`)."""
        tag = tag_of(tool_def, self.capability_id)
        if (
            self.script_approval
            and tag is not None
            and tag.get('meta') == 'run'
            and not ctx.tool_call_approved
            and args.get('name') in self._state.loaded
            and (command := script_command_of(args)) is not None  # else the tool refuses the path
        ):
            raise ApprovalRequired(metadata={'skill': args['name'], 'command': command})
        return args

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[AgentDepsT], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """Approve the calls awaiting approval that a loaded skill's `allowed-tools` pre-approves; the application
        decides the others."""
        approvals: dict[str, ToolApproved] = {}
        answered_by: dict[str, str] = {}
        for call in requests.approvals:
            if (skill := preapproving_skill(call, self._state.loaded, self.library)) is not None:
                approvals[call.tool_call_id] = ToolApproved()
                answered_by[call.tool_call_id] = f'allowed-tools of skill {skill!r}'
        return requests.build_results(approvals=approvals, answered_by=answered_by) if approvals else None

    def _is_meta(self, tool_def: ToolDefinition) -> bool:
        tag = tag_of(tool_def, self.capability_id)
        return tag is not None and 'meta' in tag

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
        `telemetry`); other tools run as they are."""
        tag = tag_of(tool_def, self.capability_id)
        operation = tag.get('meta') if tag else None
        if operation is None:
            skill = tag.get('skill') if tag else None
            if isinstance(skill, str) and skill not in self._state.loaded:  # still listed after an unload
                return unloaded_tool_message(tool_def.name, skill)
            return await handler(args)
        return await traced_meta_call(
            ctx, operation, args, self._state.loaded, lambda: self._meta_call(ctx, operation, args, handler)
        )

    async def _meta_call(
        self, ctx: RunContext[AgentDepsT], operation: str, args: dict[str, Any], handler: WrapToolExecuteHandler
    ) -> Any:
        """One meta-tool call, with the run's load state applied and recorded."""
        name = args.get('name')
        if operation == 'search':
            return self._state.mark_loaded(await handler(args))
        if not isinstance(name, str):
            return await handler(args)
        # Branches follow the run's load state, never the library as it is now, so a durable replay takes the
        # branches the original run took even if skill folders were added or removed since.
        if operation == 'load':
            skill = self.library.get(name)
            if skill is not None and skill.model_invocable and forks(skill):
                return await self._fork(ctx, skill, str(args.get('arguments') or ''))
            return await self._state.load(name, args, handler, self.capability_id)  # the tool explains a bad name
        if name not in self._state.loaded and name not in self.library.skills:
            return unknown_skill_message(self.library, name)
        if operation == 'unload':
            return await self._state.unload(name, args, handler, self.capability_id)
        if name not in self._state.loaded:
            then = 'run its scripts' if operation == 'run' else 'read its files'
            return f'The skill {name!r} is not loaded: call `load_skill` with {name!r} first, then {then}.'
        return await handler(args)


def _skill_toolset(skill: Skill[AgentDepsT], capability_id: str) -> AbstractToolset[AgentDepsT]:
    """A skill's tools, tagged with it; a toolset that lists its tools only when it runs (an MCP server, say) is
    started only in runs that load the skill."""
    tagged = skill.toolset.with_metadata(**skill_tool_tag(capability_id, skill.name))
    return tagged if skill.tools_known else LazyToolset(tagged, capability_id, skill.name)


def _count_tools(skills: Iterable[Skill[Any]]) -> int:
    return sum(len(skill.tool_names) for skill in skills)
