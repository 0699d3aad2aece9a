"""`Skill`: a named bundle of instructions, tools and resources that the model loads on demand."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, cast

from pydantic_ai import Tool
from pydantic_ai.tools import AgentDepsT, ToolFuncEither
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset

from ._text import shown
from .content import FolderContent, SkillContent, TextContent, read_text, safe_relative_path
from .content.base import text_bytes
from .content.folder import hold_skill_folder
from .errors import ResourceError, SkillError, SkillFormatError, SkillFormatWarning, SkillWarning
from .files import DEFAULT_READ_POLICY, ReadPolicy, takes_the_old_flag
from .markdown.flags import invocation_flag
from .markdown.frontmatter import FormatDeviation, SkillFile, read_frontmatter, read_markdown
from .markdown.names import qualified_name_problem
from .markdown.schema import Frontmatter, split_tool_patterns, unencodable
from .toolset_names import known_tool_names

__all__ = ('Skill',)


@dataclass(init=False)
class Skill(Generic[AgentDepsT]):
    """A skill: instructions and tools the model sees only after it loads the skill.

    Define one in Python and attach tools with the [`tool`][skillshelf.Skill.tool] and
    [`tool_plain`][skillshelf.Skill.tool_plain] decorators, read one from a `SKILL.md` folder with
    [`from_folder`][skillshelf.Skill.from_folder], from `SKILL.md` text with
    [`from_markdown`][skillshelf.Skill.from_markdown], or over content kept elsewhere with
    [`from_content`][skillshelf.Skill.from_content].
    """

    name: str
    """Unique name the model loads the skill by: lower-case letters and digits joined by single hyphens or
    underscores (`pdf-forms`, `data_analysis`); names that differ only in `-` and `_` count as the same name."""
    description: str
    """What the skill does and when to use it. The catalog and `search_skills` show it."""
    metadata: Mapping[str, Any]
    """Free-form metadata: the frontmatter `metadata` and unknown fields (`when_to_use`, `tags`, ...)."""
    content: SkillContent
    """Its instructions and files, wherever they are kept (memory, a folder, a registry)."""
    trusted: bool
    """Whether the application vouches for it: defined in Python, or found in one of `trusted_directories`. Only a
    trusted skill's `allowed-tools` may pre-approve the agent's other tools and shell commands; any other skill's
    pre-approve only its own scripts and tools."""
    _toolset: AbstractToolset[AgentDepsT] | None
    """The toolset given, or a function toolset made on first use: most folder skills have no tools, and a large
    library would make one for each."""

    def __init__(
        self,
        name: str,
        description: str,
        instructions: str = '',
        *,
        tools: Sequence[Tool[AgentDepsT] | ToolFuncEither[AgentDepsT, ...]] = (),
        toolset: AbstractToolset[AgentDepsT] | None = None,
        resources: Mapping[str, str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Define a skill in Python.

        Args:
            name: Unique name: lower-case letters and digits joined by single hyphens or underscores (`'weather'`,
                `'pdf-forms'`, `'data_analysis'`). A `SKILL.md` name may use hyphens only (the Agent Skills
                format); one with an underscore loads with a `SkillFormatWarning`.
            description: What the skill does and when to use it, in one or two sentences.
            instructions: What the model reads when it loads the skill.
            tools: Tools to add to the skill's toolset.
            toolset: An existing toolset to use for the skill's tools: function tools, an MCP server
                (`pydantic_ai.mcp.MCPToolset`), or a prefixed, filtered, renamed or combined toolset. A toolset
                that lists its tools only when it runs (an MCP server, a filtered or dynamic toolset) is
                started only in runs that load the skill. Give it a stable `id` if you use durable
                execution; a toolset created here gets the id `skillshelf.<name>`.
            resources: Extra text the model can read after loading, by relative path.
            metadata: Free-form metadata; `keywords` (a string or list) is searched too.

        Raises:
            SkillFormatError: the name breaks the naming rules, the description is empty, or a text holds a
                lone surrogate (which UTF-8, and so every model API, refuses).
            SkillError: both `tools` and a `toolset` that is not a `FunctionToolset` are given.
        """
        texts = {'the name': name, 'the description': description, 'the instructions': instructions}
        for what, value in {**texts, 'a resource': resources or {}, 'the metadata': metadata or {}}.items():
            if (where := unencodable(value)) is not None:
                place = what if where == 'the text' else f'{what} ({where})'
                raise SkillFormatError(None, f'skill {name!r}: {place} cannot be encoded as UTF-8 (a lone surrogate)')
        if problem := qualified_name_problem(name):
            raise SkillFormatError(None, f'skill {name!r}: {problem}')
        if not description.strip():
            raise SkillFormatError(None, f'skill {name!r}: the description is empty; say what it does and when')
        self.name = name
        self.description = description.strip()
        self.metadata = dict(metadata or {})
        self.content = TextContent(instructions, _text_files(name, resources or {}))
        self.trusted = True  # defined in the application's own code
        self._toolset = toolset
        for tool in tools:
            if isinstance(tool, Tool):
                self._function_toolset().add_tool(cast('Tool[AgentDepsT]', tool))
            else:
                self._function_toolset().add_function(tool)

    @classmethod
    @takes_the_old_flag
    def from_folder(cls, folder: str | Path, *, policy: ReadPolicy = DEFAULT_READ_POLICY) -> Skill[Any]:
        """Read a skill from a folder holding a `SKILL.md`; its body is read only when the skill is loaded.

        Every later read of the skill's files stays beneath this folder as it is now (see `SkillFile`), as
        `policy` says (see `ReadPolicy`: by default, files with other hard links are refused).

        Raises:
            SkillFormatError: the folder or its `SKILL.md` is missing, or breaks the Agent Skills format.
        """
        try:
            held = hold_skill_folder(folder, check_containment=False, policy=policy)
        except ResourceError as error:
            raise SkillFormatError(Path(folder), str(error)) from None
        skill_file = SkillFile(held)
        return cls.from_frontmatter(skill_file, read_frontmatter(skill_file))

    @classmethod
    def from_frontmatter(
        cls, skill_file: SkillFile, front: Frontmatter, *, trusted: bool = False, plugin: str = ''
    ) -> Skill[Any]:
        """The skill of `skill_file`, whose frontmatter is `front` (read with `read_frontmatter`); its body is
        read when it is loaded. `trusted`: its folder is one the application vouches for. `plugin`: the Claude Code
        plugin it belongs to, which names it `plugin:name`."""
        content = FolderContent(skill_file)
        name = f'{plugin}:{front.name}' if plugin else front.name
        return cls.from_content(name, front.description, content, metadata=frontmatter_metadata(front), trusted=trusted)

    @classmethod
    def from_content(
        cls,
        name: str,
        description: str,
        content: SkillContent,
        *,
        metadata: Mapping[str, Any] | None = None,
        trusted: bool = False,
    ) -> Skill[Any]:
        """A skill whose instructions and files `content` holds (a folder, a registry's rows, your own store);
        `trusted` if the application vouches for it (see `Skill.trusted`).

        Raises:
            SkillFormatError: the name breaks the naming rules, the description is empty, or a text holds a
                lone surrogate.
        """
        skill: Skill[Any] = cls(name, description, metadata=metadata)
        skill.content = content
        skill.trusted = trusted
        return skill

    @classmethod
    def from_markdown(
        cls,
        text: str,
        resources: Mapping[str, str | bytes] | None = None,
        *,
        origin: str | None = None,
        folder: str | None = None,
    ) -> Skill[Any]:
        """Read a skill from `SKILL.md` text, with its files in memory by relative path (`'reference/api.md'`).

        The text is checked like a folder's `SKILL.md` (same reader, same errors, the same deviations from the format
        tolerated with a `SkillFormatWarning`); its name is checked against `folder`, the name of the folder the text
        was kept in, if it had one. Files are served like a folder's: at most 256 KiB per read, text only. `origin`
        says where the text came from (a package, a registry) in errors, warnings and `Skill.origin`. The
        `python-tools:` it declares are not imported (that needs a trusted directory); the skill loads without them.

        Raises:
            SkillFormatError: the text breaks the Agent Skills format beyond what Claude Code or Codex load, or a
                file's path is not a plain relative path inside the skill (absolute, `..`, hidden) or is given twice.
        """
        deviations: list[FormatDeviation] = []
        skill = markdown_skill(text, resources, origin=origin, folder=folder, deviations=deviations)
        for deviation in deviations:
            warnings.warn(SkillFormatWarning(str(deviation)), stacklevel=2)
        return skill

    @property
    def folder(self) -> Path | None:
        """The skill's folder for a folder skill; `None` for other skills."""
        return Path(self.content.origin) if isinstance(self.content, FolderContent) else None

    @property
    def origin(self) -> str | None:
        """Where the skill was read from: its folder, a file, a package, a registry; `None` for a skill defined in
        Python."""
        return self.content.origin

    @property
    def skill_file(self) -> SkillFile | None:
        """The `SKILL.md` and the folder it is read beneath (as discovery accepted it); `None` for other skills."""
        return self.content.skill_file if isinstance(self.content, FolderContent) else None

    @property
    def toolset(self) -> AbstractToolset[AgentDepsT]:
        """The skill's tools, hidden from the model until the skill is loaded."""
        if self._toolset is None:
            self._toolset = FunctionToolset[AgentDepsT](id=f'skillshelf.{self.name}')
        return self._toolset

    @property
    def tool(self):  # returns the toolset's overloaded decorator unchanged
        """Decorator registering a tool that takes `RunContext` as its first argument.

        Raises:
            SkillError: the skill was given a `toolset` that is not a `FunctionToolset`.
        """
        return self._function_toolset().tool

    @property
    def tool_plain(self):  # returns the toolset's overloaded decorator unchanged
        """Decorator registering a tool that does not take `RunContext`.

        Raises:
            SkillError: the skill was given a `toolset` that is not a `FunctionToolset`.
        """
        return self._function_toolset().tool_plain

    @property
    def tool_names(self) -> list[str]:
        """Names of the skill's tools, in registration order, as far as they are known without running its toolset
        (see `tools_known`)."""
        return [] if self._toolset is None else known_tool_names(self._toolset) or []

    @property
    def tools_known(self) -> bool:
        """Whether `tool_names` lists every tool. Not for a toolset that lists its tools only when it runs (an MCP
        server, a filtered or dynamic toolset): the model sees those once it loads the skill."""
        return self._toolset is None or known_tool_names(self._toolset) is not None

    def _function_toolset(self) -> FunctionToolset[AgentDepsT]:
        toolset = self.toolset
        if not isinstance(toolset, FunctionToolset):
            raise SkillError(
                f'skill {self.name!r} takes its tools from the toolset it was given ({type(toolset).__name__}): '
                'add tools to a FunctionToolset and give the skill `CombinedToolset([that, ...])` as its `toolset`'
            )
        return toolset

    @property
    def allowed_tools(self) -> tuple[str, ...]:
        """The tools and script runs the skill pre-approves while it is loaded: its `allowed-tools` (a Python skill
        declares them in its metadata, e.g. `metadata={'allowed-tools': 'Bash(python:*) get_forecast'}`)."""
        value = self.metadata.get('allowed-tools')
        if isinstance(value, str):
            return split_tool_patterns(value)
        if isinstance(value, (list, tuple)):
            items = cast('Sequence[object]', value)
            return tuple(pattern for item in items if isinstance(item, str) for pattern in split_tool_patterns(item))
        return ()

    @property
    def user_invocable(self) -> bool:
        """Whether a user may invoke the skill with `/name` (frontmatter `user-invocable`, default true). Read to
        fail closed (see `markdown.flags`): `"no"` and `0` are false, and so is a value that spells neither."""
        return invocation_flag(self.metadata, 'user-invocable')

    @property
    def model_invocable(self) -> bool:
        """Whether the model may find and load the skill; `disable-model-invocation: true` keeps it out of the
        catalog, search and `load_skill`, for a user to invoke only. Read to fail closed (see `markdown.flags`):
        `"true"`, `"yes"`, `1` and `"on"` disable it, and so does a value that spells neither true nor false."""
        return not invocation_flag(self.metadata, 'disable-model-invocation')

    @property
    def argument_hint(self) -> str | None:
        """What the skill expects as arguments, for a UI (frontmatter `argument-hint`, e.g. `'[version]'`)."""
        hint = self.metadata.get('argument-hint')
        return hint if isinstance(hint, str) else None

    @property
    def keywords(self) -> str:
        """Extra search text an author declared: `keywords`, `tags`, `triggers` and `when_to_use`."""
        parts: list[str] = []
        for key in ('keywords', 'tags', 'triggers', 'when_to_use', 'when-to-use'):
            value = self.metadata.get(key)
            if isinstance(value, str):
                parts.append(value)
            elif isinstance(value, list):
                parts.extend(str(item) for item in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        return ' '.join(parts)

    def load_instructions(self, max_chars: int | None = None) -> str:
        """The instructions the model receives on load; a folder skill's `SKILL.md` body is read now.

        With `max_chars`, only their first `max_chars` characters.

        Raises:
            SkillFormatError: the `SKILL.md` can no longer be read.
        """
        return self.content.instructions(max_chars)

    def list_resources(self) -> list[str]:
        """Relative paths of the resources the model can read after loading the skill."""
        return self.content.list_files()

    def read_resource(self, path: str) -> str:
        """Read one resource by its relative path, as text.

        Raises:
            ResourceError: the path is unsafe, missing, binary or too large.
        """
        return read_text(self.content, path)

    def __repr__(self) -> str:
        source = f', folder={str(self.folder)!r}' if self.folder is not None else ''
        return f'Skill(name={self.name!r}, tools={self.tool_names!r}{source})'


def _text_files(name: str, resources: Mapping[str, str]) -> dict[str, bytes]:
    """A Python skill's text resources as the files of its content, by normalised relative path.

    Raises:
        SkillFormatError: a path is not a plain relative path inside the skill, or is given twice.
    """
    files: dict[str, bytes] = {}
    for path, text in resources.items():
        try:
            relative = safe_relative_path(path).as_posix()
        except ResourceError as error:
            raise SkillFormatError(
                None, f'skill {name!r}: the resource {shown(path)} cannot be a skill file: {error}'
            ) from None
        if relative in files:
            raise SkillFormatError(None, f'skill {name!r}: the resource {relative!r} is given twice')
        files[relative] = text.encode('utf-8')
    return files


def markdown_skill(
    text: str,
    resources: Mapping[str, str | bytes] | None,
    *,
    origin: str | None,
    folder: str | None,
    deviations: list[FormatDeviation],
) -> Skill[Any]:
    """`Skill.from_markdown`, with the deviations from the format added to `deviations` rather than warned about (for
    a source, which hands them to its library).

    Raises:
        SkillFormatError: as `Skill.from_markdown`.
    """
    where = origin or '<SKILL.md text>'
    front, body = read_markdown(where, text, deviations, folder=folder)
    files: dict[str, bytes] = {}
    for path, content in (resources or {}).items():
        try:
            relative = safe_relative_path(path).as_posix()
        except ResourceError as error:
            raise SkillFormatError(where, f'the file {shown(path)} cannot be a skill file: {error}') from None
        if relative in files:
            raise SkillFormatError(where, f'the file {relative!r} is given twice')
        files[relative] = content.encode('utf-8', 'surrogatepass') if isinstance(content, str) else content
    if front.python_tools:
        warnings.warn(
            SkillWarning(f'{where}: its `python-tools` are imported only from trusted directories; loaded without'),
            stacklevel=3,
        )
    return Skill.from_content(
        front.name,
        front.description,
        TextContent(body, files, origin, source=text_bytes(text)),
        metadata=frontmatter_metadata(front),
    )


def frontmatter_metadata(front: Frontmatter) -> dict[str, Any]:
    """A skill's metadata from its frontmatter: unknown fields, `metadata`, and the known optional fields given."""
    known = {'license': front.license, 'compatibility': front.compatibility, 'allowed-tools': list(front.allowed_tools)}
    return {**(front.model_extra or {}), **front.metadata, **{key: value for key, value in known.items() if value}}
