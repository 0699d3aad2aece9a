"""Serving a skill library over MCP: the Skills-extension server of `skillshelf serve-mcp`, built on fastmcp's own
(`SkillCatalogProvider`, which registers `SkillsExtension`), so any client that speaks the extension reads the
skills skillshelf reads, byte for byte.

A folder skill is served as its folder holds it: its `SKILL.md` and files exactly. A skill kept elsewhere (a
registry's rows) is served with a `SKILL.md` written from its frontmatter fields and body. The skills are snapshot
when the server starts and again when the library finds skills added, removed or renamed (its `refresh`, asked on
each request); a skill the extension cannot carry (a name with an underscore, more files than it allows) is left
out with a `SkillWarning`.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping
from typing import Any, Protocol

import anyio
from fastmcp import FastMCP
from fastmcp.skills import Skill as ServedSkill
from fastmcp.skills.provider import SkillCatalog, SkillCatalogProvider

from ..content.base import MAX_FILE_BYTES
from ..errors import SkillError, SkillWarning
from ..markdown.bounded_read import read_skill_file
from ..skill import Skill

__all__ = ('LibraryProvider', 'ServedLibrary', 'library_server')


class ServedLibrary(Protocol):
    """What the server uses of a `SkillLibrary` (a protocol, so this annex sits below the library, which can name an
    MCP source in a spec)."""

    @property
    def skills(self) -> Mapping[str, Skill[Any]]:
        """The library's skills, by name."""
        ...

    def refresh(self) -> bool:
        """Read the sources again if one changed; whether the skills changed."""
        ...


def library_server(library: ServedLibrary, name: str = 'skillshelf') -> FastMCP:
    """A FastMCP server that serves `library`'s skills through the Skills extension (`skills/list`, `skills/get`,
    and each file as a `skill://<name>/<path>` resource); run it with `.run('stdio')` or `.run('http', ...)`."""
    return FastMCP(name, providers=[LibraryProvider(library)])


class LibraryProvider(SkillCatalogProvider):
    """A skill library as fastmcp serves skills: a snapshot of every skill's files, taken again when the library's
    skills change."""

    def __init__(self, library: ServedLibrary) -> None:
        self._library = library
        self._lock = threading.Lock()
        self.left_out: dict[str, str] = {}
        """Skills the extension cannot carry, by name, with why."""
        super().__init__(self._snapshot())

    async def load_skills(self) -> SkillCatalog:
        """The snapshot, taken again first if the library's skills changed."""
        return await anyio.to_thread.run_sync(self._current)

    def _current(self) -> Mapping[str, ServedSkill]:
        with self._lock:
            if self._library.refresh():
                self._static = dict(self._snapshot())
            return self._static

    def _snapshot(self) -> dict[str, ServedSkill]:
        served: dict[str, ServedSkill] = {}
        left_out: dict[str, str] = {}
        for skill in self._library.skills.values():
            try:
                served[skill.name] = served_skill(skill)
            except (ValueError, SkillError) as error:
                left_out[skill.name] = str(error).splitlines()[0]
        for name in sorted(left_out.keys() - self.left_out.keys()):
            warnings.warn(SkillWarning(f'the skill {name!r} is not served over MCP: {left_out[name]}'), stacklevel=2)
        self.left_out = left_out
        return served


def served_skill(skill: Skill[Any]) -> ServedSkill:
    """`skill` as fastmcp's `Skill`: a folder skill's `SKILL.md` as it is, another's written from its fields.

    Raises:
        ValueError: the Skills extension cannot carry it (fastmcp's own check).
        SkillError: a file cannot be read.
    """
    files = {path: skill.content.read_bytes(path, MAX_FILE_BYTES) for path in skill.content.list_files()}
    if skill.skill_file is not None:
        return ServedSkill.from_files({'SKILL.md': read_skill_file(skill.skill_file), **files})
    fields = {key: value for key, value in skill.metadata.items() if key not in ('name', 'description')}
    return ServedSkill(
        name=skill.name,
        description=skill.description,
        instructions=skill.load_instructions(),
        files=files,
        frontmatter=fields,
    )
