"""`MCPSkillSource`: the skills an MCP server serves through the Skills extension (SEP-2640), as a skill source.

The listing (`skills/list`, through fastmcp's `Client.list_skills`) gives each skill's frontmatter and its files'
digests: enough for the catalog and search, checked against the same schema as a `SKILL.md`. Bodies and files are
fetched when a skill is loaded or read (`content.MCPContent`), and verified. Two skills of one server with one name
(servers may nest them: `skill://billing/refunds/SKILL.md`, `skill://support/refunds/SKILL.md`) are named by their
paths (`billing-refunds`); a skill whose name another source already has is offered as `<namespace>-<name>` (the
namespace defaults to the server's name), so two servers' `review` skills are both loadable.

A server that is down never fails a run: its skills stay listed as they were and answer with a message; one that
was down when the library was built is read once it answers (the library's per-run version check connects again
after `retry_after` seconds). The version changes when the server sends a resource list-change notification, and on
`refresh()`, which lists the skills again.
"""

from __future__ import annotations

import re
import weakref
from collections import Counter
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlsplit

from fastmcp import Client, FastMCP
from fastmcp.client.transports import ClientTransport
from fastmcp.skills import MCPSkill, SkillsClientExtension
from pydantic import ValidationError

from .._text import hide_passwords
from ..errors import SkillError
from ..markdown.names import MAX_NAME_LENGTH, name_problem
from ..markdown.schema import Frontmatter
from ..skill import Skill, frontmatter_metadata
from ..sources.base import SkippedSkill, SourceSkills, skipped
from .connection import ServerConnection, ServerDown, ServerRefused
from .content import SKILL_FILE_NAME, MCPContent

__all__ = ('MCPServer', 'MCPSkillSource')

MCPServer = ClientTransport | Client[Any] | FastMCP | str | Path
"""What an `MCPSkillSource` connects to, as `MCPToolset` takes it: a fastmcp client transport
(`StdioTransport(...)`, `StreamableHttpTransport(url)`), a URL, a server script's path, an in-process `FastMCP`
server, or a `fastmcp.Client` built with `extensions=[SkillsClientExtension()]`."""


class MCPSkillSource:
    """The skills an MCP server serves through the Skills extension: `Skills(sources=[MCPSkillSource(url)])`.

    ```python
    from fastmcp.client.transports import StdioTransport

    Skills(sources=[MCPSkillSource('http://127.0.0.1:8000/mcp'), MCPSkillSource(StdioTransport('team-skills', []))])
    ```
    """

    reports_version = True
    """Each read carries the version it began at (see `SkillSource.version`)."""

    def __init__(
        self,
        server: MCPServer,
        *,
        namespace: str | None = None,
        timeout: float = 30.0,
        retry_after: float = 30.0,
    ) -> None:
        """Connect (lazily) to `server`.

        Args:
            server: The server (see `MCPServer`).
            namespace: Prefix of the names of skills whose own name another source already has (`team` offers
                `team-review`); default: the server's name.
            timeout: Seconds one request (and connecting) may take before the server counts as down.
            retry_after: Seconds before a server that failed is tried again.

        Raises:
            SkillError: `namespace` cannot start a skill name, or a timeout is not positive.
        """
        if namespace is not None and (problem := name_problem(namespace)):
            raise SkillError(f'MCPSkillSource: the namespace {namespace!r} cannot start skill names: {problem}')
        if timeout <= 0 or retry_after < 0:
            raise SkillError('MCPSkillSource: `timeout` must be positive and `retry_after` not negative')
        self.namespace = namespace
        """The prefix of namespaced names (`None`: the server's name)."""
        self.label = _label(server)
        """The server in messages (a URL without its password)."""
        connection: list[ServerConnection] = []  # the client's handler reaches the connection, never the source
        client = server if isinstance(server, Client) else _client(server, timeout, connection)
        self._connection = ServerConnection(client, timeout=timeout, retry_after=retry_after, label=self.label)
        connection.append(self._connection)
        self._skills: dict[tuple[str, bool, tuple[tuple[str, str], ...]], Skill[Any]] = {}
        self._listed: SourceSkills | None = None
        # A source dropped without `close()` ends its session when it is collected (not at exit: the process ends it).
        weakref.finalize(self, self._connection.close).atexit = False

    def __repr__(self) -> str:
        return f'MCPSkillSource({self.label!r})'

    def version(self) -> Hashable:
        """The sessions opened and the changes seen: a server that answers again after it was down (tried at most
        every `retry_after` seconds), a list-change notification and a `refresh` that found a change all move it."""
        if self._connection.down:
            self._connection.connect()
        return (self._connection.sessions, self._connection.changes)

    def read_skills(self) -> SourceSkills:
        """The server's skills now, in its order; while it cannot be reached, those of the last read (before any
        read, none, and a skipped entry that says why).

                Raises:
                    SkillError: the server answers but does not serve skills (the Skills extension).
        """
        self._connection.connect()
        version = (self._connection.sessions, self._connection.changes)
        try:
            entries = self._connection.call(_list)
        except ServerRefused as error:
            raise SkillError(f'the MCP server {self.label} cannot be read: {error}') from None
        except ServerDown as error:
            if self._listed is not None:
                return SourceSkills(list(self._listed.skills), list(self._listed.skipped), version=version)
            problem = f'its MCP server cannot be reached ({error}); its skills are read once it answers'
            return SourceSkills(skipped=[skipped(self.label, problem)], version=version)
        self._listed = self._read(entries)
        return SourceSkills(list(self._listed.skills), list(self._listed.skipped), version=version)

    def refresh(self) -> bool:
        """List the server's skills again now (for servers that send no list-change notification); the library
        reads them at its next run. Returns whether they changed.

        Raises:
            SkillError: the server cannot be reached or does not serve skills.
        """
        try:
            entries = self._connection.call(_list)
        except (ServerDown, ServerRefused) as error:
            raise SkillError(f'the MCP server {self.label} cannot be listed: {error}') from None
        before = None if self._listed is None else _listing(self._listed)
        self._listed = self._read(entries)
        if before == _listing(self._listed):
            return False
        self._connection.changes += 1
        return True

    def digests(self) -> dict[str, dict[str, str]]:
        """Each skill of the last read, by its name in this source (the library offers one whose name another source
        has as `<namespace>-<name>`), with its files' digests as the server listed them (`{'SKILL.md': 'sha256:…',
        'scripts/run.py': 'sha256:…'}`): what every fetch is verified against."""
        if self._listed is None:
            return {}
        return {skill.name: dict(cast(MCPContent, skill.content).digests) for skill in self._listed.skills}

    def close(self) -> None:
        """End the session with the server (a stdio server's process stops) and the thread that keeps it."""
        self._connection.close()

    def _read(self, entries: list[MCPSkill]) -> SourceSkills:
        namespace = self.namespace or _as_name(self._connection.server_name) or 'mcp'
        names = Counter(entry.frontmatter.name for entry in entries)
        found = SourceSkills()
        kept: dict[tuple[str, bool, tuple[tuple[str, str], ...]], Skill[Any]] = {}
        for entry in entries:
            origin = f'{self.label} {entry.uri}'
            files = _files(entry)
            if isinstance(files, SkippedSkill):
                found.skipped.append(skipped(origin, files.problem))
                continue
            alone = names[entry.frontmatter.name] == 1  # else named by its path
            key = (entry.uri, alone, tuple(sorted((path, digest) for path, (digest, _) in files.items())))
            skill = self._skills.get(key) or _skill(entry, files, origin, names, namespace, self._connection)
            if isinstance(skill, str):
                found.skipped.append(skipped(origin, skill))
                continue
            kept[key] = skill
            found.skills.append(skill)
        self._skills = kept  # a skill whose files did not change keeps what it fetched
        return found


def _client(
    server: ClientTransport | FastMCP | str | Path, timeout: float, connection: list[ServerConnection]
) -> Client[Any]:
    """A fastmcp client for `server` that speaks the Skills extension and counts list-change notifications."""

    async def notified(message: object) -> None:
        connection[0].notified(message)

    target = cast(Any, server)  # fastmcp infers the transport, as `MCPToolset` lets it
    return Client(
        target, extensions=[SkillsClientExtension()], message_handler=notified, timeout=timeout, init_timeout=timeout
    )


async def _list(client: Client[Any]) -> list[MCPSkill]:
    return await client.list_skills(cache_mode='bypass')


def _files(entry: MCPSkill) -> dict[str, tuple[str, int]] | SkippedSkill:
    """Each file of a listed skill, by path relative to the skill, with its digest and size."""
    if entry.resources == 'dynamic':
        return skipped(entry.uri, 'its server lists its files as dynamic, so they cannot be verified against digests')
    root = entry.uri[: -len(SKILL_FILE_NAME)]
    return {unquote(resource.uri[len(root) :]): (resource.digest, resource.size) for resource in entry.resources}


def _skill(
    entry: MCPSkill,
    files: Mapping[str, tuple[str, int]],
    origin: str,
    names: Counter[str],
    namespace: str,
    connection: ServerConnection,
) -> Skill[Any] | str:
    """A listed skill, or why it cannot be one."""
    try:
        front = Frontmatter.model_validate(entry.frontmatter.root)
    except ValidationError as error:
        return f'its frontmatter breaks the format ({error.errors()[0]["msg"]})'
    name = front.name if names[front.name] == 1 else _as_name(_path_name(entry.uri))
    if not name or name_problem(name):
        return f'it shares its name {front.name!r} with another skill of its server, and its path cannot name it'
    content = MCPContent(
        connection,
        entry.uri,
        front.name,
        digests={path: digest for path, (digest, _) in files.items()},
        sizes={path: size for path, (_, size) in files.items()},
        origin=origin,
        namespaced_name=_as_name(f'{namespace}-{name}') or None,
    )
    return Skill.from_content(name, front.description, content, metadata=frontmatter_metadata(front))


def _path_name(uri: str) -> str:
    """The folders of a skill URI, joined (`skill://billing/refunds/SKILL.md` → `billing-refunds`)."""
    parts = urlsplit(uri)
    return '-'.join(unquote(part) for part in [parts.netloc, *parts.path.split('/')[:-1]] if part)


def _as_name(text: str) -> str:
    """`text` as a skill name: lower-case letters and digits joined by single hyphens, at most 64 characters."""
    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')[:MAX_NAME_LENGTH].rstrip('-')


def _listing(read: SourceSkills) -> list[tuple[str, str, tuple[tuple[str, str], ...]]]:
    """What a read lists, to compare two: each skill's name, description and digests, and each skipped entry."""
    listed = [
        (skill.name, skill.description, tuple(sorted(cast(MCPContent, skill.content).digests.items())))
        for skill in read.skills
    ]
    return listed + [(str(problem.path), problem.problem, ()) for problem in read.skipped]


def _label(server: MCPServer) -> str:
    """How a server is named in messages."""
    if isinstance(server, str):
        return hide_passwords(server)
    if isinstance(server, Path):
        return str(server)
    if isinstance(server, FastMCP):
        return f'FastMCP({server.name!r})'
    if isinstance(server, Client):
        return f'Client({_label(server.transport)})'
    url = getattr(server, 'url', None)
    return hide_passwords(url) if isinstance(url, str) else repr(server)
