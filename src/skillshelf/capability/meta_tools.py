"""The meta-tools the model uses to find, load, read and unload skills.

Tool bodies depend only on the library and their arguments, never on run state, so they can run
anywhere (including a durable-execution activity). Whether a skill is loaded is the capability's
business: it checks and records that around each call (see `Skills.wrap_tool_execute`).
Mistakes the model makes come back as plain text that says how to recover, not as retries, so a
confused model never exhausts a retry budget and aborts the run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai import RunContext, ToolReturn
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.workspaces import Workspace

from .._text import one_line, shown, without_paths
from ..content.base import decode_text
from ..content.file_map import file_map, folder_listing
from ..errors import ResourceError, SkillFormatError
from ..library import SkillLibrary
from ..scripts.materialise import Copied
from ..skill import Skill
from .arguments import substitute_arguments
from .durable import off_event_loop
from .history import state_change
from .operations import Operation, meta_tool_tag

MAX_PAGE_LINES = 2000
"""Lines of a skill's file one `read_skill_resource` call returns at most."""
MAX_PAGE_CHARACTERS = 100_000
"""Characters one `read_skill_resource` call returns at most (a page ends at a line's end)."""
MAX_PAGED_BYTES = 8 << 20
"""A skill's file larger than this is not read, even in pages."""
MAX_QUERY_CHARACTERS = 1000
"""Longer queries are cut: the ranking needs keywords, not documents."""
MAX_SEARCH_LIMIT = 20
_RESULT_DESCRIPTION = 160
META_TOOL_NAMES = ('search_skills', 'load_skill', 'unload_skill', 'read_skill_resource')
SKILL_DIR_VARIABLES = ('${SKILL_DIR}', '${CLAUDE_SKILL_DIR}')
"""Written in a skill's instructions, each stands for its folder (see `skill_dir`); nothing else in a skill's text is
ever expanded but its arguments and, where allowed, its `` !`command` ``s."""
Placement = Callable[[Workspace, Skill[Any]], Awaitable[Copied | None]]
"""Puts a loaded skill's files in the run's workspace; returns where, or `None` when they are not put there."""
Lacks = Callable[[Workspace, Skill[Any]], Awaitable[str]]
"""What the run's workspace lacks for a loaded skill's scripts, as a note for the model (`''`: nothing, or unknown)."""
Commands = Callable[[Workspace | None, Skill[Any], str, Callable[[str], str]], Awaitable[str]]
"""Renders a loaded skill's instructions (the third argument): its `` !`command` ``s run or refused in the run's
workspace, and the second callable (the arguments' substitution) applied to the rest (see `body_commands`)."""
Fork = Callable[[RunContext[Any], Skill[Any], str], Awaitable[str]]
"""Runs a `context: fork` skill as a sub-agent with the given arguments; returns what its load replies."""


@dataclass
class SkillMatch:
    """One `search_skills` result."""

    name: str
    """The skill's name, to pass to `load_skill`."""
    description: str
    """The skill's description, on one line."""
    score: float
    """Relevance from 0 to 1: the share of the best score the query could reach in this library (with hybrid
    search, that share weighted with the query's embedding similarity to the skill)."""
    loaded: bool = False
    """Whether the skill is already loaded."""


def build_meta_toolset(
    library: SkillLibrary,
    capability_id: str,
    default_limit: int,
    with_tools: set[str],
    place: Placement | None = None,
    *,
    threshold: float,
    search_offered: Callable[[], bool] = lambda: True,
    fork: Fork | None = None,
    lacks: Lacks | None = None,
    commands: Commands | None = None,
) -> FunctionToolset[Any]:
    """The toolset holding `search_skills`, `load_skill`, `unload_skill` and `read_skill_resource`.

    `with_tools` names the skills whose tools the capability registered: only theirs are announced on load.
    `search_skills` leaves out skills scoring below `threshold`. With `place` (scripts enabled), a loaded skill's
    files are put in the run's workspace and `${SKILL_DIR}` in its instructions becomes their folder there.
    `search_offered` tells whether the model has `search_skills` now, for the hints of its replies. With `fork`,
    loading a `context: fork` skill runs it as a sub-agent, inside the tool call, so a durable engine that records
    the call (a Temporal activity, a DBOS step with `SkillSteps`) records the sub-agent's result with it. With
    `lacks` (scripts enabled), the reply says up front what the workspace lacks for the skill's scripts. `commands`
    renders the `` !`command` ``s of the instructions.
    """
    toolset = FunctionToolset[Any](id=capability_id, max_retries=3)

    @toolset.tool_plain(metadata=meta_tool_tag(capability_id, Operation.SEARCH))
    def search_skills(query: str, limit: int = default_limit) -> list[SkillMatch] | str:
        """Find skills for a task, best first (scores 0-1).

        Args:
            query: The task in a few words.
            limit: At most 20.
        """
        query = ' '.join(query.split())[:MAX_QUERY_CHARACTERS]
        if not query:
            return 'The query is empty: describe the task in a few words, e.g. "convert a CSV file to a chart".'
        limit = max(1, min(limit, MAX_SEARCH_LIMIT))
        # Skills only a user may invoke are left out; a wider search keeps `limit` results when some are.
        found = library.search(query, limit + MAX_SEARCH_LIMIT, threshold)
        # A skill the scan refused since the index was built is no longer in `skills`.
        hits = [
            (skill, hit)
            for hit in found
            if (skill := library.skills.get(hit.name)) is not None and skill.model_invocable
        ]
        if not hits:
            return f'No skill matches {shown(query)}. Try other words for the task, or carry on without a skill.'
        return [_match(skill, hit.score) for skill, hit in hits[:limit]]

    @toolset.tool(metadata=meta_tool_tag(capability_id, Operation.LOAD))
    async def load_skill(ctx: RunContext[Any], name: str, arguments: str = '') -> ToolReturn[str]:
        """Load a skill: its instructions, files and tools (usable from your next response).

        Args:
            name: The skill.
            arguments: Its arguments, if any.
        """
        # Off the loop: a skill's first use scans its files, which an MCP server or an application's own store
        # serves over the network, and other runs on the loop must go on meanwhile.
        skill = await off_event_loop(lambda: library.get(name))
        if skill is None or not skill.model_invocable:
            return ToolReturn(unknown_skill_message(library, name, search_offered()))
        if fork is not None and forks(skill):
            return ToolReturn(await fork(ctx, skill, arguments))
        return _returned(
            await load_reply(library, capability_id, name, with_tools, arguments, ctx.workspace, place, lacks, commands)
        )

    @toolset.tool_plain(metadata=meta_tool_tag(capability_id, Operation.UNLOAD))
    def unload_skill(name: str) -> ToolReturn[str]:
        """Unload a skill: its tools stop working.

        Args:
            name: The skill.
        """
        if library.get(name) is None:
            return ToolReturn(unknown_skill_message(library, name, search_offered()))
        return ToolReturn(
            f'Unloaded {name!r}: its tools no longer run (load it again to use them).',
            metadata=state_change(capability_id, Operation.UNLOAD, name),
        )

    @toolset.tool_plain(metadata=meta_tool_tag(capability_id, Operation.READ))
    def read_skill_resource(name: str, path: str, offset: int = 0, limit: int = MAX_PAGE_LINES) -> str:
        """Read a file of a loaded skill (a long one in pages).

        Args:
            name: The skill.
            path: As `load_skill` lists it.
            offset: First line (for the next page).
            limit: Lines, at most 2000.
        """
        skill = library.get(name)
        if skill is None:
            return unknown_skill_message(library, name, search_offered())
        listed = skill.list_resources()
        if path not in listed and (listing := folder_listing(path, listed)) is not None:
            return _page(listing, max(0, offset), max(1, min(limit, MAX_PAGE_LINES)))
        try:
            served = _same_but_for_case(path, listed)
            text = decode_text(served, skill.content.read_bytes(served, MAX_PAGED_BYTES))
        except ResourceError as error:
            available = f'Its resources are: {", ".join(listed)}.' if listed else 'It has no resources.'
            return f'Cannot read {shown(path)} from {name!r}: {error}. {available}'
        note = f'[{shown(path)} is {served!r}: names are case-sensitive]\n' if served != path else ''
        return note + _page(text, max(0, offset), max(1, min(limit, MAX_PAGE_LINES)))

    return toolset


async def load_reply(
    library: SkillLibrary,
    capability_id: str,
    name: str,
    with_tools: set[str],
    arguments: str = '',
    workspace: Workspace | None = None,
    place: Placement | None = None,
    lacks: Lacks | None = None,
    commands: Commands | None = None,
) -> ToolReturn | str:
    """What loading the skill `name` (in `library`) returns: its instructions with `arguments` substituted (and its
    `` !`command` ``s rendered in `workspace`, with `commands`), its files (put in `workspace` first, with `place`,
    and what the workspace lacks for them, with `lacks`) and tools, and the record of the load; or why it cannot be
    read."""
    skill = library.skills[name]
    placed = await place(workspace, skill) if place is not None and workspace is not None else None
    lacking = await lacks(workspace, skill) if lacks is not None and workspace is not None and placed else ''
    try:
        folder = skill_dir(skill, placed, place is not None)
        instructions = await read_instructions(skill, folder, arguments, workspace=workspace, commands=commands)
        resources = await off_event_loop(skill.list_resources)
    except (SkillFormatError, OSError) as error:
        return unreadable_message(name, error)
    return ToolReturn(
        _loaded_text(skill, instructions, resources, skill.name in with_tools, placed, lacking),
        metadata=state_change(capability_id, Operation.LOAD, name),
    )


async def read_instructions(
    skill: Skill[Any],
    folder: str | None,
    arguments: str,
    *,
    append: bool = True,
    workspace: Workspace | None = None,
    commands: Commands | None = None,
) -> str:
    """A skill's instructions as the model reads them: `${SKILL_DIR}` (and `${CLAUDE_SKILL_DIR}`) become `folder` (see
    `skill_dir`); with `commands`, its `` !`command` ``s are run or refused in `workspace`, before the arguments are
    put in, so no argument is ever run; `arguments` are substituted (and, with `append`, added at the end when no
    placeholder took them).

    Raises:
        SkillFormatError: the `SKILL.md` can no longer be read.
        OSError: the folder can no longer be read.
    """
    instructions = await off_event_loop(skill.load_instructions)
    if folder is not None:
        for variable in SKILL_DIR_VARIABLES:
            instructions = instructions.replace(variable, folder)
    if commands is None:
        return substitute_arguments(instructions, arguments, append=append)
    return await commands(
        workspace, skill, instructions, lambda text: substitute_arguments(text, arguments, append=append)
    )


def _returned(reply: ToolReturn | str) -> ToolReturn[str]:
    """`reply` as the `ToolReturn[str]` the loading tools declare. pydantic-ai builds the return schema of each tool at
    construction, and that of `ToolReturn | str` (every content type `ToolReturn` can carry) took 8 ms a tool, for a
    schema that misdescribes what the model reads: the text."""
    return reply if isinstance(reply, ToolReturn) else ToolReturn(reply)


def skill_dir(skill: Skill[Any], placed: Copied | None, in_workspace: bool) -> str | None:
    """What `${CLAUDE_SKILL_DIR}` stands for: the skill's folder in the run's workspace where its files were put there
    (`placed`); with no workspace in use (`in_workspace` false: scripts and file tools off), a folder skill's folder on
    the host, where the agent's own tools find its files; else nothing (the text stays as written)."""
    if placed is not None:
        return placed.folder
    return None if in_workspace or skill.folder is None else str(skill.folder)


def forks(skill: Skill[Any]) -> bool:
    """Whether the skill runs as a sub-agent: frontmatter (or a Python skill's metadata) `context: fork`."""
    return skill.metadata.get('context') == 'fork'


def unreadable_message(name: str, error: SkillFormatError | OSError) -> str:
    """Tell the model a skill can no longer be read: the problem only, not the absolute path (the model needs no
    map of the host's file system)."""
    problem = error.problem if isinstance(error, SkillFormatError) else (error.strerror or 'unreadable')
    return f'The skill {name!r} can no longer be read ({problem}). Use another skill or carry on without it.'


def unknown_skill_message(library: SkillLibrary, name: str, search: bool = True) -> str:
    """Tell the model a skill name is unknown, with the closest names and where to find the right one: `search_skills`
    when it is offered (`search`), else the list in its instructions. A skill only the user may invoke is named as
    such (and never suggested), and a removed skill's reason is given without host paths."""
    find = 'call `search_skills`' if search else 'pick one listed in your instructions'
    skill = library.get(name)
    if skill is not None and not skill.model_invocable:
        return user_only_message(name)
    if (reason := library.refused.get(name)) is not None:
        return (
            f'The skill {name!r} is not available: it was refused because {without_paths(reason)}. Tell the user if '
            f'they asked for it; carry on without it, or {find}.'
        )
    if (reason := library.removed.get(name)) is not None:
        return f'The skill {name!r} is no longer available: {without_paths(reason)}. Carry on without it, or {find}.'
    close = [found for found in library.closest_names(name) if library.skills[found].model_invocable]
    hint = f' Did you mean {" or ".join(repr(n) for n in close)}?' if close else ''
    where = (
        'Call `search_skills` to find skills by what they do.'
        if search
        else 'The skills are listed in your instructions.'
    )
    return f'There is no skill named {shown(name)}.{hint} {where}'


def user_only_message(name: str) -> str:
    """Tell the model that `name` is a skill only the user may invoke (`disable-model-invocation`)."""
    return (
        f'The skill {name!r} is for the user to invoke (by typing /{name}), not for you to load. If it fits the task, '
        f'tell the user they can run /{name}; otherwise carry on without it.'
    )


def _match(skill: Skill[Any], score: float) -> SkillMatch:
    return SkillMatch(skill.name, one_line(skill.description, _RESULT_DESCRIPTION), score)


def _loaded_text(
    skill: Skill[Any], instructions: str, resources: list[str], has_tools: bool, placed: Copied | None, lacking: str
) -> str:
    lines = [f'Loaded skill {skill.name!r}.']
    if placed is not None:
        lines.append(
            f'Its files are in the workspace at {placed.folder} (run its scripts with `run_skill_script`; '
            'the working directory is where your files go).'
        )
        if placed.left_out:
            lines.append(f'Not copied there: {"; ".join(placed.left_out)}.')
    if lacking:
        lines.append(lacking)
    if has_tools and not skill.tools_known:  # an MCP server, say: it lists its tools once it is started
        lines.append('Its tools start now and are listed with your other tools from your next response.')
    elif has_tools and skill.tool_names:
        lines.append(f'Tools available from your next response: {", ".join(skill.tool_names)}.')
    if instructions.strip():
        lines += ['', instructions.strip()]
    if resources:  # after the instructions, which say which of them matter
        lines += ['', file_map(resources, instructions)]
    return '\n'.join(lines)


def _same_but_for_case(requested: str, listed: list[str]) -> str:
    """`requested`, or the one listed file whose name differs from it only in case (a `SKILL.md` that links
    `FORMS.md` to `forms.md` works on a case-insensitive file system)."""
    if requested in listed:
        return requested
    matches = [path for path in listed if path.lower() == requested.strip().lower()]
    return matches[0] if len(matches) == 1 else requested


def _page(text: str, offset: int, limit: int) -> str:
    """Lines `offset` to `offset + limit` of `text` (at most `MAX_PAGE_CHARACTERS`), with where to go on; a text that
    fits whole comes back as it is."""
    lines = text.splitlines(keepends=True)
    if offset == 0 and len(lines) <= limit and len(text) <= MAX_PAGE_CHARACTERS:
        return text
    if offset >= len(lines):
        return f'[the file has {len(lines):,} lines; there is no line {offset + 1:,}]'
    page: list[str] = []
    size = 0
    for line in lines[offset : offset + limit]:
        if page and size + len(line) > MAX_PAGE_CHARACTERS:
            break
        if len(line) > MAX_PAGE_CHARACTERS:  # one line longer than a page: its start only
            line = f'{line[:MAX_PAGE_CHARACTERS]}\n[this line is {len(line):,} characters; only the first are shown]\n'
        page.append(line)
        size += len(line)
    end = offset + len(page)
    more = f'; read again with offset={end} for more' if end < len(lines) else ''
    return ''.join(page) + f'\n[lines {offset + 1:,}-{end:,} of {len(lines):,}{more}]'


def with_name_choices(tool_def: ToolDefinition, names: list[str]) -> ToolDefinition:
    """`load_skill`'s definition with its `name` parameter limited to `names` (a hint: the tool still explains a
    name outside them)."""
    schema = tool_def.parameters_json_schema
    properties = {**schema['properties'], 'name': {**schema['properties']['name'], 'enum': names}}
    return replace(tool_def, parameters_json_schema={**schema, 'properties': properties})
