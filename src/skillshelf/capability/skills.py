"""`Skills`: the pydantic-ai capability that puts a skill library on the agent's shelf."""

from __future__ import annotations

import copy
import importlib
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, cast

from pydantic_ai import RunContext, ToolReturn
from pydantic_ai.capabilities import AbstractCapability, WrapToolExecuteHandler, durable_operation
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.tools import AgentDepsT, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset

from ..errors import SkillError
from ..library import SkillLibrary
from ..ranking.semantic import DEFAULT_LEXICAL_WEIGHT, Encoder, SearchMode
from ..skill import Skill
from .catalog import DEFAULT_CATALOG_BUDGET, CatalogEntry, render_catalog
from .history import loaded_from_history, record_of, skill_tool_tag, tag_of
from .meta_tools import META_TOOL_NAMES, SkillMatch, build_meta_toolset

__all__ = ('DEFAULT_ID', 'Skills')

DEFAULT_ID = 'skillshelf'
"""The capability id unless you pass another; one `Skills` per agent merges into it."""


@dataclass
class Skills(AbstractCapability[AgentDepsT]):
    """Give an agent a library of skills it loads on demand.

    The model sees a short catalog and four meta-tools (`search_skills`, `load_skill`,
    `unload_skill`, `read_skill_resource`); a skill's instructions and tools reach it only after it
    loads the skill. Which skills are loaded is derived from the run's message history.

    ```python
    agent = Agent('openai:gpt-5.2', capabilities=[Skills(skills=[weather], directories=['skills'])])
    ```
    """

    directories: str | Path | Sequence[str | Path] = ()
    """Library directories: each holds skill folders (or is one). Earlier directories win name clashes."""
    _: KW_ONLY
    skills: Sequence[Skill[AgentDepsT]] = ()
    """Skills defined in Python."""
    id: str | None = DEFAULT_ID
    """Capability id; also tags the tools and history records this capability owns."""
    catalog_budget: int = DEFAULT_CATALOG_BUDGET
    """Characters the catalog in the instructions may use; larger libraries degrade to names, then to a pointer."""
    search_limit: int = 5
    """Default number of `search_skills` results."""
    strict: bool = False
    """Raise on any broken or shadowed skill folder instead of skipping it with a warning."""
    search: SearchMode = 'lexical'
    """How `search_skills` ranks: `'lexical'` (BM25) or `'hybrid'` (BM25 plus embeddings, see `encoder`)."""
    encoder: Encoder | None = None
    """Hybrid search's embedding model (texts → L2-normalised rows); default: the `[semantic]` extra's MiniLM."""
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    """Hybrid only: the lexical score's share (0–1); the embedding similarity gets the rest."""
    auto_reload: bool = True
    """Check the directories for added, removed or edited skills at the start of each run: one `stat` per
    skill, about 0.7 s per run at 100k skills. Turn it off for a library that does not change while the
    process runs."""

    library: SkillLibrary = field(init=False, repr=False, compare=False)
    """Every skill available to the model (built at construction)."""
    _catalog: str = field(init=False, repr=False, compare=False)
    _toolset: AbstractToolset[AgentDepsT] = field(init=False, repr=False, compare=False)
    _loaded: list[str] = field(default_factory=list[str], init=False, repr=False, compare=False)
    _refunded: set[str] = field(default_factory=set[str], init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.id = self.id or DEFAULT_ID
        if isinstance(self.directories, (str, Path)):
            self.directories = (self.directories,)
        self.library = SkillLibrary.build(
            self.skills,
            list(self.directories),
            strict=self.strict,
            reserved_tool_names=META_TOOL_NAMES,
            search=self.search,
            encoder=self.encoder,
            lexical_weight=self.lexical_weight,
        )
        self.search = self.library.search_mode
        self._catalog = self._render_catalog()
        # Built once and shared by every run's clone: durable engines require toolsets that exist at construction.
        self._toolset = CombinedToolset[AgentDepsT](
            [
                build_meta_toolset(self.library, self.id, self.search_limit),
                *(
                    skill.toolset.with_metadata(**skill_tool_tag(self.id, skill.name))
                    for skill in self.library.skills.values()
                    if skill.tool_names
                ),
            ]
        )

    @property
    def capability_id(self) -> str:
        """The id this capability tags its tools and history records with."""
        return self.id or DEFAULT_ID

    @property
    def loaded(self) -> list[str]:
        """Skills loaded in this run, in load order (empty on the agent-level instance)."""
        return list(self._loaded)

    @classmethod
    def from_spec(
        cls,
        directories: str | Sequence[str] = (),
        *,
        skills: str | Sequence[str] = (),
        id: str = DEFAULT_ID,
        catalog_budget: int = DEFAULT_CATALOG_BUDGET,
        search_limit: int = 5,
        strict: bool = False,
        search: SearchMode = 'lexical',
        encoder: str | None = None,
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
        auto_reload: bool = True,
    ) -> Skills[Any]:
        """Build from an agent spec: `directories` are paths, `skills` are import paths like `'myapp.skills:weather'`.

        An import path may name one `Skill` or a list of them. `encoder` is the import path of an embedding
        function (`'myapp.embeddings:encode'`) for hybrid search.
        """
        return cls(
            _string_list('directories', directories),
            skills=[skill for path in _string_list('skills', skills) for skill in import_skills(path)],
            id=id,
            catalog_budget=catalog_budget,
            search_limit=search_limit,
            strict=strict,
            search=search,
            encoder=None if encoder is None else _import_encoder(encoder),
            lexical_weight=lexical_weight,
            auto_reload=auto_reload,
        )

    @classmethod
    def combine(cls, capabilities: Sequence[AbstractCapability[AgentDepsT]]) -> AbstractCapability[AgentDepsT]:
        """Merge several `Skills` with one id into one library: directories and skills in order, options from the last."""
        parts = cast('Sequence[Skills[AgentDepsT]]', capabilities)
        last = parts[-1]
        return cls(
            [directory for part in parts for directory in cast('Sequence[str | Path]', part.directories)],
            skills=[skill for part in parts for skill in part.skills],
            id=last.id,
            catalog_budget=last.catalog_budget,
            search_limit=last.search_limit,
            strict=last.strict,
            search=last.search,
            encoder=last.encoder,
            lexical_weight=last.lexical_weight,
            auto_reload=last.auto_reload,
        )

    def get_instructions(self) -> str:
        """The catalog: identical on every request, so it never breaks a prompt cache."""
        return self._catalog

    def get_toolset(self) -> AbstractToolset[AgentDepsT]:
        """The meta-tools and every skill's tools; `prepare_tools` hides the tools of unloaded skills."""
        return self._toolset

    def _render_catalog(self) -> str:
        entries = [CatalogEntry(skill.name, skill.description) for skill in self.library.skills.values()]
        return render_catalog(entries, self.catalog_budget)

    @durable_operation(name='refresh_library')
    async def _refresh_library(self, ctx: RunContext[AgentDepsT]) -> str | None:
        """Re-read the skill directories if they changed; returns the new catalog, or `None` if it is unchanged.

        This reads the file system, so under a durable engine it runs as a recorded operation (an
        activity) and the workflow replays its result instead of touching files.
        """
        return self._render_catalog() if self.library.refresh() else None

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> Skills[AgentDepsT]:
        """A per-run copy whose loaded skills are replayed from the run's message history.

        Skill folders added, removed or edited since the last run are picked up first (a few `stat`
        calls per skill tell whether anything changed; see `auto_reload`), so the catalog stays fixed within a run.
        """
        catalog = await self._refresh_library(ctx) if self.auto_reload else None
        if catalog is not None:
            self._catalog = catalog
        clone = copy.copy(self)  # not dataclasses.replace(): that would rebuild the library and toolsets
        known = self.library.skills
        clone._loaded = [name for name in loaded_from_history(ctx.messages, self.capability_id) if name in known]
        clone._refunded = set()
        return clone

    async def prepare_tools(self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        """Hide the tools of skills that are not loaded; every other tool passes untouched."""
        self._refund_early_calls(ctx, tool_defs)
        return [tool_def for tool_def in tool_defs if self._is_visible(tool_def)]

    def _refund_early_calls(self, ctx: RunContext[AgentDepsT], tool_defs: list[ToolDefinition]) -> None:
        """Give back, once per tool and run, the retry a loaded skill's tool was charged while it was hidden.

        A tool called in the same response as its `load_skill` (or before it) is refused by pydantic-ai as
        an unknown tool, and the refusal is charged to that tool's retry budget (1 by default) until the
        tool succeeds. Without the refund, one honest argument mistake on the tool afterwards would end
        the run. A model that keeps calling a tool without loading its skill is never refunded.
        """
        for tool_def in tool_defs:
            tag = tag_of(tool_def, self.capability_id)
            name = tool_def.name
            if tag is None or tag.get('skill') not in self._loaded or name in self._refunded:
                continue
            charged = ctx.retries.get(name, 0)
            if charged > 0 and _refused_as_unknown(ctx.messages, name):
                ctx.retries[name] = charged - 1
                self._refunded.add(name)

    def _is_visible(self, tool_def: ToolDefinition) -> bool:
        tag = tag_of(tool_def, self.capability_id)
        return tag is None or 'skill' not in tag or tag['skill'] in self._loaded

    async def wrap_tool_execute(
        self,
        ctx: RunContext[AgentDepsT],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: WrapToolExecuteHandler,
    ) -> Any:
        """Apply and record load state around the meta-tools; other tools run as they are."""
        tag = tag_of(tool_def, self.capability_id)
        operation = tag.get('meta') if tag else None
        if operation is None:
            return await handler(args)
        name = args.get('name')
        if operation == 'search':
            return self._mark_loaded(await handler(args))
        if not isinstance(name, str) or name not in self.library.skills:
            return await handler(args)  # the tool explains the unknown name
        if operation == 'load':
            return await self._load(name, args, handler)
        if operation == 'unload':
            return await self._unload(name, args, handler)
        if name not in self._loaded:
            return f'The skill {name!r} is not loaded: call `load_skill` with {name!r} first, then read its files.'
        return await handler(args)

    async def _load(self, name: str, args: dict[str, Any], handler: WrapToolExecuteHandler) -> Any:
        if name in self._loaded:
            return f'The skill {name!r} is already loaded; its instructions are above and its tools are available.'
        # Marked before awaiting, so a second `load_skill` for it in the same response sees it as loaded.
        self._loaded.append(name)
        result = await handler(args)
        if not self._records(result, 'load'):
            self._loaded.remove(name)
        return result

    async def _unload(self, name: str, args: dict[str, Any], handler: WrapToolExecuteHandler) -> Any:
        if name not in self._loaded:
            loaded = ', '.join(self._loaded) or 'none'
            return f'The skill {name!r} is not loaded, so there is nothing to unload. Loaded skills: {loaded}.'
        result = await handler(args)
        if self._records(result, 'unload') and name in self._loaded:
            self._loaded.remove(name)
        return result

    def _mark_loaded(self, result: object) -> object:
        if isinstance(result, list):
            for match in cast('list[object]', result):
                if isinstance(match, SkillMatch):
                    match.loaded = match.name in self._loaded
        return result  # pyright: ignore[reportUnknownVariableType]

    def _records(self, result: object, operation: str) -> bool:
        """Whether a meta-tool result records a load or unload (a plain string means it explained a problem)."""
        if not isinstance(result, ToolReturn):
            return False
        record = record_of(cast('ToolReturn[Any]', result).metadata, self.capability_id)
        return record is not None and record.get('op') == operation


def _refused_as_unknown(messages: Sequence[ModelMessage], tool_name: str) -> bool:
    """Whether this run (since its user prompt) answered a call of `tool_name` with the unknown-tool refusal."""
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if (
                isinstance(part, ToolReturnPart)
                and part.tool_name == tool_name
                and part.retry is not None
                and part.retry.cause == 'unknown_tool'
            ):
                return True
        if any(isinstance(part, UserPromptPart) for part in message.parts):
            return False
    return False


def import_skills(path: str) -> list[Skill[Any]]:
    """Import the `Skill` (or list of skills) named by `'package.module:attribute'`.

    Raises:
        SkillError: the path is malformed, cannot be imported, or does not name skills.
    """
    module_name, _, attribute = path.partition(':')
    if not module_name or not attribute:
        raise SkillError(f'skill import path {path!r} must look like "package.module:attribute"')
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise SkillError(f'cannot import {module_name!r} for skill {path!r}: {error}') from error
    target: Any = module
    for part in attribute.split('.'):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise SkillError(f'module {module_name!r} has no attribute {attribute!r} (from {path!r})') from None
    kind = type(target).__name__
    if isinstance(target, Skill):
        return [cast('Skill[Any]', target)]
    if isinstance(target, (list, tuple)):
        items = cast('Sequence[object]', target)  # pyright: ignore[reportUnknownArgumentType]
        if all(isinstance(item, Skill) for item in items):
            return cast('list[Skill[Any]]', list(items))
    raise SkillError(f'{path!r} is a {kind}, not a Skill or a list of skills')


def _import_encoder(path: object) -> Encoder:
    """The embedding function named by `'package.module:attribute'` in an agent spec."""
    module_name, _, attribute = path.partition(':') if isinstance(path, str) else ('', '', '')
    if not module_name or not attribute:
        raise SkillError(f'the `encoder` option of Skills must look like "package.module:function", not {path!r}')
    try:
        target: Any = importlib.import_module(module_name)
        for part in attribute.split('.'):
            target = getattr(target, part)
    except (ImportError, AttributeError) as error:
        raise SkillError(f'cannot import the encoder {path!r}: {error}') from error
    return cast('Encoder', target)  # checked for being callable when the library is built


def _string_list(option: str, value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in cast('Sequence[Any]', value)):
        return list(cast('Sequence[str]', value))
    raise SkillError(f'the `{option}` option of Skills must be a string or a list of strings, not {value!r}')
