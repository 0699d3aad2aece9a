"""`Shelf`: what every run of one `Skills` shares, built once at construction.

The library, its catalog (rendered again when a library check finds changed skills) and the toolset: the
meta-tools, `run_skill_script` and every skill's tools, in one toolset that exists from construction on (durable
engines need toolsets that exist when the agent is built, with stable ids).
"""

from __future__ import annotations

import asyncio
import functools
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.tools import AgentDepsT
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.workspaces import Workspace, WorkspaceError

from ..errors import SkillWarning
from ..library import SkillLibrary
from ..library.collection import check_tool_names
from ..scripts.environment import SkillEnvironment
from ..scripts.lacking import lacking_note, workspace_lacks
from ..scripts.materialise import Copied, copy_skill
from ..skill import Skill
from .body_commands import render_commands
from .catalog import CatalogEntry, text_fields
from .file_tools import FILE_TOOL_NAMES, build_file_toolset
from .fork import fork_reply
from .gated_tools import ToolGates
from .lazy_toolset import LazyToolset, ToolServerOutages
from .meta_tools import META_TOOL_NAMES, Commands, Lacks, Placement, build_meta_toolset
from .operations import Operation, ShelfToolset, skill_tool_tag
from .options import SkillsOptions
from .script_tool import SCRIPT_TOOL_NAME, build_script_toolset

__all__ = ('NAME_CHOICES_LIMIT', 'RESERVED_TOOL_NAMES', 'Shelf')

NAME_CHOICES_LIMIT = 30
"""Libraries of at most this many skills list the valid names in `load_skill`'s schema (an enum)."""
RESERVED_TOOL_NAMES = (*META_TOOL_NAMES, SCRIPT_TOOL_NAME)
"""Tool names no skill may use: the meta-tools, and `run_skill_script` whether or not scripts are enabled."""


@dataclass
class Shelf:
    """The library of one `Skills`, with its catalog and toolset; shared by every run's clone."""

    library: SkillLibrary
    """Every skill available to the model."""
    options: SkillsOptions
    """The capability's options, checked."""
    capability_id: str
    """The id the tools and history records are tagged with."""
    toolset: AbstractToolset[Any] = field(init=False)
    """The meta-tools and every skill's tools; `prepare_tools` hides the tools of unloaded skills."""
    meta_toolset: AbstractToolset[Any] = field(init=False)
    """The meta-tools alone (a forked skill's sub-agent gets its `read_skill_resource`)."""
    workspace_toolsets: tuple[AbstractToolset[Any], ...] = field(init=False)
    """`run_skill_script` and the file tools, those the options turn on (a forked skill's sub-agent gets them too)."""
    with_tools: set[str] = field(init=False)
    """The skills whose toolsets are registered: only theirs are announced on load."""
    catalog: str = field(init=False, default='')
    """The catalog in the instructions: identical on every request until the library changes."""
    name_choices: list[str] | None = field(init=False, default=None)
    """The names `load_skill` accepts, listed in its schema for a small library so a model cannot misspell one."""
    unused: frozenset[Operation] = field(init=False, default=frozenset[Operation]())
    """Meta-tools that add nothing for this library, so they are not sent: `search_skills` while the catalog lists
    every skill whole, `read_skill_resource` in a small library whose skills have no files, `unload_skill` when no
    skill has tools, `allowed-tools` or `tools:`. Decided when the library changes, never per request, so the prompt cache holds."""
    gates: ToolGates = field(init=False, default_factory=ToolGates)
    """The agent's tools that skills name in `tools:`, hidden until one of those skills is loaded."""
    outages: ToolServerOutages = field(init=False, default_factory=ToolServerOutages)
    """The skills whose tool servers are down in each run (see `LazyToolset`)."""
    _catalog_of: dict[str, Skill[Any]] | None = field(init=False, default=None)
    """The library's skills the catalog was rendered from; a check that found changes replaces them."""
    _tool_count: int = field(init=False, default=0)

    @classmethod
    def build(cls, skills: Sequence[Skill[AgentDepsT]], options: SkillsOptions, capability_id: str) -> Shelf:
        """The shelf of `skills` and the library `options` describe.

        Raises:
            SkillError: the library cannot be built (see `SkillLibrary.build`).
        """
        reserved = reserved_tool_names(options)
        library = SkillLibrary.build(skills, options.library, options.search, reserved_tool_names=reserved)
        return cls(library, options, capability_id)

    def __post_init__(self) -> None:
        # Every Python skill's toolset is registered, even an empty one, so a tool added to a skill after this
        # point is callable once the skill is loaded (its name is checked for clashes at the next run).
        with_tools = [skill for skill in self.library.skills.values() if skill.origin is None or skill.tool_names]
        self._tool_count = _count_tools(with_tools)
        self.with_tools = {skill.name for skill in with_tools}
        scripts = self.options.scripts
        self.meta_toolset = build_meta_toolset(
            self.library,
            self.capability_id,
            self.options.search.search_limit,
            self.with_tools,
            self.place,
            threshold=self.options.search.search_threshold,
            search_offered=self.offers_search,
            fork=self.fork,
            lacks=self.lacks,
            commands=self.commands,
        )
        self.workspace_toolsets = (
            *(
                [
                    build_script_toolset(
                        self.library,
                        self.capability_id,
                        scripts.script_limits,
                        self.offers_search,
                        scripts.skill_environment,
                    )
                ]
                if scripts.scripts
                else []
            ),
            *(
                [build_file_toolset(self.capability_id, scripts.script_limits, scripts.skill_environment)]
                if scripts.file_tools
                else []
            ),
        )
        self.toolset = ShelfToolset[Any](
            [
                self.meta_toolset,
                *self.workspace_toolsets,
                *(_skill_toolset(skill, self.capability_id, self.outages) for skill in with_tools),
            ]
        )
        self.sync()

    def offers_search(self) -> bool:
        """Whether the model has `search_skills` (not while the catalog lists every skill whole)."""
        return Operation.SEARCH not in self.unused

    async def fork(self, ctx: RunContext[Any], skill: Skill[Any], arguments: str) -> str:
        """Run `skill`, a `context: fork` skill, as a sub-agent (see `fork`): what loading it returns."""
        return await fork_reply(ctx, skill, arguments, self)

    @property
    def place(self) -> Placement | None:
        """With scripts on, how a loaded skill's files reach the run's workspace (see `place_skill`)."""
        return place_skill if self.options.scripts.workspace else None

    @property
    def lacks(self) -> Lacks | None:
        """With scripts on, what the run's workspace lacks for a loaded skill's scripts (see `note_lacks`)."""
        scripts = self.options.scripts
        return functools.partial(note_lacks, environment=scripts.skill_environment) if scripts.scripts else None

    @property
    def commands(self) -> Commands:
        """How the `` !`command` ``s of a loaded skill's instructions are run or refused (see `body_commands`)."""
        return partial(render_commands, self.options.scripts)

    def sync(self) -> None:
        """Catch up with a library check (this run's or a concurrent run's) that replaced the skills: render the
        catalog again and check the tools added to Python skills since. Done without an await, so concurrent runs
        never see a half-updated catalog.

        Raises:
            SkillConflictError: a tool added to a Python skill clashes with another tool.
        """
        count = _count_tools(self.library.skills.values())
        if count != self._tool_count:
            check_tool_names(self.library.skills.values(), set(reserved_tool_names(self.options)))
            self._tool_count = count
            self._catalog_of = None  # which meta-tools are unused may have changed
        if self.library.skills is not self._catalog_of:
            self._catalog_of = self.library.skills
            loadable = [skill for skill in self.library.skills.values() if skill.model_invocable]
            entries = [CatalogEntry(skill.name, skill.description, text_fields(skill.metadata)) for skill in loadable]
            small = len(loadable) <= NAME_CHOICES_LIMIT
            unused: set[Operation] = set()
            if self.options.catalog.lists_every_skill_whole(entries):
                unused.add(Operation.SEARCH)
            if small and not any(skill.content.has_files() for skill in loadable):
                unused.add(Operation.READ)
            registered = [skill for skill in loadable if skill.name in self.with_tools]
            self.gates = ToolGates.of(self.library.skills.values())
            if (
                not any(skill.allowed_tools for skill in loadable)
                and not any(skill.tool_names or not skill.tools_known for skill in registered)
                and not self.gates.skills_of
            ):
                unused.add(Operation.UNLOAD)  # nothing to stop: no tools, no pre-approvals; instructions stay read
            self.unused = frozenset(unused)
            self.catalog = self.options.catalog.render(entries, search=Operation.SEARCH not in unused)
            self.name_choices = [skill.name for skill in loadable] if small else None


def reserved_tool_names(options: SkillsOptions) -> tuple[str, ...]:
    """The tool names no skill may use: the meta-tools, `run_skill_script`, and the file tools when they are on."""
    return (*RESERVED_TOOL_NAMES, *(FILE_TOOL_NAMES if options.scripts.file_tools else ()))


async def place_skill(workspace: Workspace, skill: Skill[Any]) -> Copied | None:
    """Copy `skill`'s files into `workspace` (see `workspace.materialise`): where they are, or `None` when there is no
    workspace, the skill has no files, or the workspace refused them (the skill still loads, without them)."""
    if not workspace.attached or not await asyncio.to_thread(skill.content.list_files):
        return None
    try:
        return await copy_skill(workspace, skill)
    except (WorkspaceError, OSError, ValueError) as error:
        warnings.warn(
            SkillWarning(f'skill {skill.name!r}: its files could not be put in the workspace: {error}'), stacklevel=2
        )
        return None


async def note_lacks(workspace: Workspace, skill: Skill[Any], environment: SkillEnvironment | None = None) -> str:
    """The note on what `workspace` lacks for `skill`'s scripts, on the skills' `environment` where the workspace
    shows it (see `scripts.lacking`), `''` for nothing."""
    return lacking_note(await workspace_lacks(workspace, skill, environment))


def _skill_toolset(
    skill: Skill[AgentDepsT], capability_id: str, outages: ToolServerOutages
) -> AbstractToolset[AgentDepsT]:
    """A skill's tools, tagged with it; a toolset that lists its tools only when it runs (an MCP server, say) is
    started only in runs that load the skill, and reports to `outages` when its server is down."""
    tagged = skill.toolset.with_metadata(**skill_tool_tag(capability_id, skill.name))
    return tagged if skill.tools_known else LazyToolset(tagged, capability_id, skill.name, outages)


def _count_tools(skills: Iterable[Skill[Any]]) -> int:
    return sum(len(skill.tool_names) for skill in skills)
