"""`MCPContent`: an MCP-served skill's instructions and files, fetched from its server when the skill is loaded or a
file of it is read, and verified against the digests the server listed.

The listing (`skills/list`) gives each file's path, size and SHA-256 digest; nothing is fetched to build the catalog
or the search index. The first read of the body or of a file fetches the whole skill with fastmcp's
`Client.read_skill`, which checks every file against the digest and size the server gives for it now, and the
frontmatter against its entry; skillshelf then checks those digests against the ones it listed, so what the model
reads is what the catalog was built from (and what a lock records, `digests`). A skill whose files do not match is
refused for the rest of the process, with a `SkillWarning` for the developer; the other skills go on.
"""

from __future__ import annotations

import hashlib
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fastmcp import Client

from .._text import shown
from ..content import safe_relative_path
from ..content.base import MAX_LISTED_RESOURCES, too_large
from ..errors import ResourceError, SkillFormatError, SkillWarning
from ..markdown.frontmatter import read_markdown
from .connection import ServerConnection, ServerDown, ServerRefused

__all__ = ('SKILL_FILE_NAME', 'MCPContent', 'Unavailable', 'file_digest')

SKILL_FILE_NAME = 'SKILL.md'


class Unavailable(SkillFormatError, ResourceError):
    """An MCP skill cannot be used just now, or at all: the message is for the model and names no server address
    (a load answers it as an unreadable skill, a file read as an unreadable file)."""

    def __init__(self, problem: str) -> None:
        super().__init__(None, problem)


@dataclass
class MCPContent:
    """One listed skill of an MCP server: its files as listed, and as fetched once it is used."""

    connection: ServerConnection
    """The server's sessions."""
    uri: str
    """The skill's `SKILL.md` resource URI, as listed (`skill://review/SKILL.md`)."""
    name: str
    """The skill's name in its frontmatter (a namespaced skill is offered under another)."""
    digests: Mapping[str, str]
    """Each file's SHA-256 digest as the server listed it (`'sha256:<hex>'`), by path relative to the skill,
    `SKILL.md` included: what every fetch is verified against, and what a lockfile records."""
    sizes: Mapping[str, int]
    """Each file's size in bytes, as listed."""
    origin: str
    """The server and the skill's URI, for messages."""
    namespaced_name: str | None = None
    """The name the skill is offered under when another source already has its name (`<namespace>-<name>`)."""
    _fetched: tuple[str, dict[str, bytes]] | None = field(default=None, repr=False)
    _refusal: str | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def instructions(self, max_chars: int | None = None) -> str:
        """The body of the skill's `SKILL.md`, fetched and verified on the first read. A read of its start
        (`max_chars`, what search indexes ask for) is answered from a body already fetched, else with nothing:
        MCP skills are searched by their metadata, and the catalog never costs a fetch.

        Raises:
            Unavailable: the server cannot be reached, no longer serves the skill, or sent files that do not match
                their digests.
        """
        if max_chars is not None and self._fetched is None:
            return ''
        return self._fetch()[0][:max_chars]

    def file_digests(self) -> dict[str, str]:
        """Each file's SHA-256 in lower-case hex, by path, as listed (`lock.DigestedContent`): a lock checks an MCP
        skill without fetching it, and every fetch is verified against the same digests."""
        return {path: digest.removeprefix('sha256:') for path, digest in self.digests.items()}

    def list_files(self) -> list[str]:
        """The skill's files as listed (its `SKILL.md` left out), sorted."""
        return sorted(path for path in self.digests if path != SKILL_FILE_NAME)[:MAX_LISTED_RESOURCES]

    def has_files(self) -> bool:
        """Whether the listing names any file besides `SKILL.md`."""
        return len(self.digests) > (SKILL_FILE_NAME in self.digests)

    def read_bytes(self, path: str, max_bytes: int) -> bytes:
        """One file, byte for byte, once the skill is fetched and verified; refused past `max_bytes` (by its listed
        size, before anything is fetched)."""
        relative = safe_relative_path(path).as_posix()
        if relative not in self.digests or relative == SKILL_FILE_NAME:
            raise ResourceError(f'no resource {shown(path)}')
        if self.sizes[relative] > max_bytes:
            raise too_large(path, self.sizes[relative], max_bytes)
        return self._fetch()[1][relative]

    def _fetch(self) -> tuple[str, dict[str, bytes]]:
        with self._lock:
            if self._refusal is not None:
                raise Unavailable(self._refusal)
            if self._fetched is None:
                self._fetched = self._fetch_now()
            return self._fetched

    def _fetch_now(self) -> tuple[str, dict[str, bytes]]:
        try:
            files = self.connection.call(self._read)
        except ServerDown:
            raise Unavailable('its MCP server cannot be reached just now; try again later') from None
        except ServerRefused:
            raise Unavailable('its MCP server no longer serves it; use another skill') from None
        except ValueError as error:  # fastmcp's verdict: a file that does not match its digest or size, and the like
            raise self._refuse(f'its MCP server sent files that do not match their digests ({error})') from None
        fetched = {path: file_digest(data) for path, data in files.items()}
        if fetched != dict(self.digests):
            self.connection.changes += 1  # the library lists the server again at its next run
            changed = sorted(
                path for path in fetched.keys() | self.digests.keys() if fetched.get(path) != self.digests.get(path)
            )
            raise Unavailable(
                f'it changed on its MCP server since it was listed ({", ".join(changed)}); it is listed again for '
                'the next turn'
            )
        try:
            front, body = read_markdown(self.origin, files[SKILL_FILE_NAME].decode('utf-8-sig'), [])
        except (SkillFormatError, UnicodeDecodeError) as error:
            raise self._refuse(f'its SKILL.md cannot be read ({error})') from None
        if front.name != self.name:
            raise self._refuse(f'its SKILL.md is named {front.name!r}, not {self.name!r} as listed')
        others = {path: data for path, data in files.items() if path != SKILL_FILE_NAME}
        return body, others

    async def _read(self, client: Client[Any]) -> dict[str, bytes]:
        skill = await client.read_skill(self.uri, cache_mode='bypass')
        return dict(skill.files)

    def _refuse(self, problem: str) -> Unavailable:
        """Refuse the skill from now on, and tell the developer why (the model is told it cannot be used)."""
        self._refusal = 'it is refused: its files from its MCP server do not match what the server listed'
        warnings.warn(SkillWarning(f'the MCP skill {self.origin} is refused: {problem}'), stacklevel=2)
        return Unavailable(self._refusal)


def file_digest(data: bytes) -> str:
    """A file's digest as the Skills extension writes it: `'sha256:<hex>'`."""
    return f'sha256:{hashlib.sha256(data).hexdigest()}'
