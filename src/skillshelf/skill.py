"""`Skill`: a named bundle of instructions, tools and resources that the model loads on demand."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, cast

from pydantic_ai import Tool
from pydantic_ai.tools import AgentDepsT, ToolFuncEither
from pydantic_ai.toolsets import FunctionToolset

from .errors import SkillFormatError
from .markdown.frontmatter import SKILL_FILE, BodyStart, Frontmatter, name_problem, read_body, read_frontmatter
from .resources import ResourceError, list_folder_resources, read_folder_resource, safe_relative_path

__all__ = ('FileStamp', 'Skill', 'file_stamp', 'folder_of', 'folder_skill')

FileStamp = tuple[str, int, int]
"""A `SKILL.md`'s absolute path, size and modification time in nanoseconds (see `file_stamp`)."""

_TOOLSET_LOCK = threading.Lock()


@dataclass(init=False)
class Skill(Generic[AgentDepsT]):
    """A skill: instructions and tools the model sees only after it loads the skill.

    Define one in Python and attach tools with the [`tool`][skillshelf.Skill.tool] and
    [`tool_plain`][skillshelf.Skill.tool_plain] decorators, or read one from a `SKILL.md` folder with
    [`from_folder`][skillshelf.Skill.from_folder].
    """

    name: str
    """Unique name the model loads the skill by: lower-case letters, digits and single hyphens."""
    description: str
    """What the skill does and when to use it. The catalog and `search_skills` show it."""
    resources: Mapping[str, str]
    """In-memory text resources by relative path (Python skills); folder skills read theirs from disk."""
    metadata: Mapping[str, Any]
    """Free-form metadata: the frontmatter `metadata` and unknown fields (`when_to_use`, `tags`, ...)."""
    _folder: str | None
    """The folder as a string: a 100k-skill library keeps no `Path` objects (and their part lists) alive, which
    Python's cycle collector would walk again and again during every run."""
    _instructions: str | None
    _toolset: FunctionToolset[AgentDepsT] | None
    _stamp: FileStamp | None
    """Where discovery found the `SKILL.md`, with its size and mtime then (keys the search-index cache)."""
    _body_start: BodyStart | None
    """The start of the body from discovery's read of the `SKILL.md`, until the search index is built."""

    def __init__(
        self,
        name: str,
        description: str,
        instructions: str = '',
        *,
        tools: Sequence[Tool[AgentDepsT] | ToolFuncEither[AgentDepsT, ...]] = (),
        toolset: FunctionToolset[AgentDepsT] | None = None,
        resources: Mapping[str, str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Define a skill in Python.

        Args:
            name: Unique name, following the Agent Skills rules (e.g. `'weather'`, `'pdf-forms'`).
            description: What the skill does and when to use it, in one or two sentences.
            instructions: What the model reads when it loads the skill.
            tools: Tools to add to the skill's toolset.
            toolset: An existing toolset to use for the skill's tools. Give it a stable `id` if you
                use durable execution; a toolset created here gets the id `skillshelf.<name>`.
            resources: Extra text the model can read after loading, by relative path.
            metadata: Free-form metadata; `keywords` (a string or list) is searched too.
        """
        if problem := name_problem(name):
            raise SkillFormatError(None, f'skill {name!r}: {problem}')
        if not description.strip():
            raise SkillFormatError(None, f'skill {name!r}: the description is empty; say what it does and when')
        self._set_fields(name, description.strip(), instructions, toolset, dict(resources or {}), dict(metadata or {}))
        for tool in tools:
            if isinstance(tool, Tool):
                self.toolset.add_tool(cast('Tool[AgentDepsT]', tool))
            else:
                self.toolset.add_function(tool)

    def _set_fields(
        self,
        name: str,
        description: str,
        instructions: str | None,
        toolset: FunctionToolset[AgentDepsT] | None,
        resources: dict[str, str],
        metadata: dict[str, Any],
        folder: str | None = None,
        stamp: FileStamp | None = None,
        body_start: BodyStart | None = None,
    ) -> None:
        """Every field, in one place for both ways a skill is made: `__init__` checks its arguments first;
        `folder_skill` gets a frontmatter that was checked when it was read."""
        self.name = name
        self.description = description
        self._instructions = instructions
        self._toolset = toolset
        self.resources = resources
        self.metadata = metadata
        self._folder = folder
        self._stamp = stamp
        self._body_start = body_start

    @classmethod
    def from_folder(cls, folder: str | Path) -> Skill[Any]:
        """Read a skill from a folder holding a `SKILL.md`; its body is read only when the skill is loaded.

        Raises:
            SkillFormatError: the `SKILL.md` is missing or breaks the Agent Skills format.
        """
        folder = Path(folder)
        return folder_skill(folder, read_frontmatter(folder / SKILL_FILE))

    @property
    def folder(self) -> Path | None:
        """The skill's folder for `SKILL.md` skills; `None` for skills defined in Python."""
        return None if self._folder is None else Path(self._folder)

    @property
    def toolset(self) -> FunctionToolset[AgentDepsT]:
        """The skill's tools, hidden from the model until the skill is loaded."""
        if self._toolset is None:
            # Created on first use: most folder skills never have tools, and a 100k-skill library would
            # otherwise build 100k empty toolsets at start-up. The lock keeps two threads from making two.
            with _TOOLSET_LOCK:
                if self._toolset is None:
                    self._toolset = FunctionToolset[AgentDepsT](id=f'skillshelf.{self.name}')
        return self._toolset

    @property
    def tool(self):  # returns the toolset's overloaded decorator unchanged
        """Decorator registering a tool that takes `RunContext` as its first argument."""
        return self.toolset.tool

    @property
    def tool_plain(self):  # returns the toolset's overloaded decorator unchanged
        """Decorator registering a tool that does not take `RunContext`."""
        return self.toolset.tool_plain

    @property
    def tool_names(self) -> list[str]:
        """Names of the skill's tools, in registration order."""
        return [] if self._toolset is None else list(self._toolset.tools)

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

        With `max_chars`, only their first `max_chars` characters (a folder skill's file is read only so far).

        Raises:
            SkillFormatError: the `SKILL.md` can no longer be read.
        """
        if self._instructions is not None:
            return self._instructions[:max_chars]
        assert self._folder is not None
        return read_body(os.path.join(self._folder, SKILL_FILE), max_chars)

    def list_resources(self) -> list[str]:
        """Relative paths of the resources the model can read after loading the skill."""
        paths = sorted(self.resources)
        if (folder := self.folder) is not None:
            paths += list_folder_resources(folder)
        return paths

    def read_resource(self, path: str) -> str:
        """Read one resource by its relative path.

        Raises:
            ResourceError: the path is unsafe, missing, binary or too large.
        """
        relative = safe_relative_path(path).as_posix()
        if relative in self.resources:
            return self.resources[relative]
        if (folder := self.folder) is None:
            raise ResourceError(f'no resource {path!r}')
        return read_folder_resource(folder, relative)

    def __repr__(self) -> str:
        source = f', folder={str(self.folder)!r}' if self._folder is not None else ''
        return f'Skill(name={self.name!r}, tools={self.tool_names!r}{source})'


def folder_skill(
    folder: str | Path, front: Frontmatter, stamp: FileStamp | None = None, body_start: BodyStart | None = None
) -> Skill[Any]:
    """The skill in `folder`, whose `SKILL.md` frontmatter is `front` (already checked against the format,
    see `Frontmatter`); its body is read when it is loaded.

    `stamp` is the file's signature when discovery read it, if known, and `body_start` what it read of the body.
    """
    skill: Skill[Any] = Skill.__new__(Skill)
    metadata = _folder_metadata(front)
    skill._set_fields(front.name, front.description, None, None, {}, metadata, os.fspath(folder), stamp, body_start)  # pyright: ignore[reportPrivateUsage]
    return skill


def folder_of(skill: Skill[Any]) -> str | None:
    """`skill.folder` as the string it is kept as, for loops over a whole library that would otherwise make a
    `Path` per skill."""
    return skill._folder  # pyright: ignore[reportPrivateUsage]


def _folder_metadata(front: Frontmatter) -> dict[str, Any]:
    known = {'license': front.license, 'compatibility': front.compatibility, 'allowed-tools': list(front.allowed_tools)}
    return {**front.metadata, **{key: value for key, value in known.items() if value}}


def file_stamp(absolute_file: str, info: os.stat_result) -> FileStamp:
    """The stamp of the `SKILL.md` at `absolute_file` (absolute and normalised, as `os.path.abspath` gives it),
    whose `stat` is `info`."""
    return (absolute_file, info.st_size, info.st_mtime_ns)
