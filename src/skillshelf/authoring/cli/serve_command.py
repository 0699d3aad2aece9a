"""The `serve-mcp` command: a skill library served to any MCP client through the Skills extension, over stdio or
streamable HTTP (the `mcp` extra)."""

from __future__ import annotations

import socket
from typing import Annotated

import typer

from .options import Directories, build_library, require_skills
from .registry_commands import Registry, open_registry
from .render import err, fail

__all__ = ('serve_mcp',)

Http = Annotated[
    str | None,
    typer.Option(
        '--http',
        help='Serve streamable HTTP at HOST:PORT (path /mcp) instead of stdio; port 0 picks a free port, '
        'printed on stderr.',
        show_default=False,
    ),
]
Name = Annotated[str, typer.Option('--name', help='The server name clients see (and namespace its skills by).')]


def serve_mcp(
    directories: Directories = None, registry: Registry = None, http: Http = None, name: Name = 'skillshelf'
) -> None:
    """Serve the library's skills over MCP (skills/list, skills/get, each file a skill:// resource, with its
    digest), as fastmcp's Skills extension does: on stdin and stdout, or with `--http`, on a local address. Every
    agent that reads MCP skills (skillshelf's MCPSkillSource, fastmcp's Client) can then use them. Exits 1 when the
    library is empty or the address cannot be used."""
    try:
        from ...mcp.server import library_server
    except ImportError:
        fail('serving skills over MCP needs fastmcp: pip install "skillshelf[mcp]"')
    listener = _listen(http) if http is not None else None
    source = open_registry(registry) if registry else None
    library = build_library(directories, None, registry=source)
    require_skills(library, directories)
    server = library_server(library, name)
    if listener is None:
        server.run('stdio', show_banner=False)
        return
    host, port = listener.getsockname()[:2]
    shown_host = f'[{host}]' if ':' in host else host
    err().print(f'serving {len(library.skills)} skills at http://{shown_host}:{port}/mcp', markup=False)
    server.run('http', show_banner=False, host=host, port=port, sockets=[listener], log_level='warning')


def _listen(address: str) -> socket.socket:
    """A socket listening on `HOST:PORT`, bound before the server starts, so the port is known (and taken) at once."""
    host, separator, port = address.rpartition(':')
    host = host.strip('[]')
    if not separator or not host or not port.isdigit() or int(port) > 65535:
        fail(f'--http takes HOST:PORT, such as 127.0.0.1:8000 (port 0 picks a free one), not {address!r}')
    try:
        family = socket.AF_INET6 if ':' in host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, int(port)))
        listener.listen(128)
    except OSError as error:
        fail(f'cannot serve at {address}: {error.strerror or error}')
    return listener
