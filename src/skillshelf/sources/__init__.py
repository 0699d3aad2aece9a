"""Where skills come from besides library directories: the `SkillSource` protocol and the built-in sources.

`PackageSource` and `EntryPointSource` (skills shipped in Python packages) and `GitSource` (a pinned git ref) need
nothing beyond skillshelf; `skillshelf.registry` (a SQL registry) needs the `registry` extra, and
`skillshelf.mcp` (`MCPSkillSource`, skills served by MCP servers) the `mcp` extra.
"""

from __future__ import annotations

from .base import SkillSource, SkippedSkill, SourceSkills
from .commands import CommandDirectorySource
from .directory import DirectorySource
from .git import GitSource
from .packages import EntryPointSource, PackageSource

__all__ = (
    'CommandDirectorySource',
    'DirectorySource',
    'EntryPointSource',
    'GitSource',
    'PackageSource',
    'SkillSource',
    'SkippedSkill',
    'SourceSkills',
)
