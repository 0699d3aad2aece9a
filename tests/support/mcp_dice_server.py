"""A tiny MCP server over stdio for the tests. It appends `started` to the file named by its first argument when it
starts and `stopped` when its client disconnects, so a test can tell whether, and how long, it ran. It writes its
process id beside that file (`.pid`), so a test can kill it, and exits at once, without serving, while a `.down`
file is there: a server that fails to start."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer('dice')


@server.tool()
def roll_die(sides: int) -> int:
    """Roll a die with `sides` sides; this one always lands on its highest face."""
    return sides


@server.tool()
def flip_coin() -> str:
    """Flip a coin; this one always lands heads."""
    return 'heads'


def note(marker: Path, event: str) -> None:
    with marker.open('a', encoding='utf-8') as file:
        file.write(f'{event}\n')


if __name__ == '__main__':
    marker = Path(sys.argv[1])
    if marker.with_suffix('.down').exists():
        sys.exit(1)
    marker.with_suffix('.pid').write_text(str(os.getpid()), encoding='utf-8')
    note(marker, 'started')
    try:
        server.run('stdio')
    finally:
        note(marker, 'stopped')
