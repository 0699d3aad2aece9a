"""The MCP annex: skills served by MCP servers through the Skills extension, and a library served that way
(`pip install 'skillshelf[mcp]'`, which brings fastmcp).

`MCPSkillSource` reads an MCP server's skills as a skill source (`Skills(sources=[MCPSkillSource(url)])`): listed
for the catalog and search (`source`), fetched and verified against their digests when used (`content`), over a
fastmcp client session kept on an event loop of its own (`connection`). `library_server` serves a skill library as
a Skills-extension server (`server`), what `skillshelf serve-mcp` runs. The skills core never imports this package at
import time: `skillshelf.MCPSkillSource` imports it when first used.
"""

try:
    import fastmcp  # noqa: F401  # pyright: ignore[reportUnusedImport]  (said before a module here fails on it)
except ImportError as error:
    raise ImportError('skills over MCP need fastmcp: pip install "skillshelf[mcp]"') from error

from .content import MCPContent, file_digest
from .server import library_server
from .source import MCPServer, MCPSkillSource

__all__ = ('MCPContent', 'MCPServer', 'MCPSkillSource', 'file_digest', 'library_server')
