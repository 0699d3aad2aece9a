"""MCP skill servers for the tests, started as real processes on this machine: `mcp_skills_server.py` (FastMCP's own
Skills-extension providers) over stdio or streamable HTTP on 127.0.0.1, and the skills the tests serve."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fastmcp.client.transports import StdioTransport

from skill_files import write_skill

SERVER = Path(__file__).with_name('mcp_skills_server.py')

HELLO_SCRIPT = 'import sys\nprint("hello from", sys.argv[1] if len(sys.argv) > 1 else "mcp")\n'
CHECKLIST = '# Checklist\n\n- Tests pass.\n- Names explain themselves.\n'


def write_served_skills(root: Path) -> Path:
    """The skills the servers serve: `greet` (a script and a reference), `review` (a checklist) and `deploy`."""
    write_skill(
        root,
        'greet',
        'Greet the user by name. Run `scripts/hello.py NAME`; phrases are in `reference/phrases.md`.',
        description='Greet someone warmly. Use when the user asks for a hello or a welcome message.',
        files={'scripts/hello.py': HELLO_SCRIPT, 'reference/phrases.md': 'Hello!\nWelcome aboard!\n'},
    )
    write_skill(
        root,
        'review',
        'Review the change against `checklist.md`, one item at a time.',
        description='Review a code change for correctness and style. Use for pull request reviews.',
        files={'checklist.md': CHECKLIST},
    )
    write_skill(root, 'deploy', 'Deploy with care.', description='Deploy the service to production.')
    return root


def stdio_server(skills: Path, *arguments: str) -> StdioTransport:
    """A transport that starts the server over stdio (again, after it was killed)."""
    return StdioTransport(sys.executable, [str(SERVER), str(skills), *arguments], keep_alive=False)


@dataclass
class HttpServer:
    """A server process on 127.0.0.1."""

    process: subprocess.Popen[str]
    port: int

    @property
    def url(self) -> str:
        return f'http://127.0.0.1:{self.port}/mcp'

    def kill(self) -> None:
        """Kill it and wait until it is gone."""
        self.process.kill()
        self.process.wait()


@contextmanager
def http_server(skills: Path, *arguments: str) -> Iterator[HttpServer]:
    """The server over streamable HTTP, listening before it is handed over (it prints its port once it is)."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(skills), '--http', *arguments],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.strip().isdigit(), f'the server did not start (it printed {line!r})'
        yield HttpServer(process, int(line))
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def kill_pid_in(path: Path) -> None:
    """Kill the process whose id `path` holds (a stdio server, the transport's child), and wait until it has ended
    (a pidfd turns readable then; the transport reaps it)."""
    pid = int(path.read_text(encoding='utf-8'))
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        os.kill(pid, signal.SIGKILL)
        select.select([handle], [], [])
    finally:
        os.close(handle)
