"""A git server on localhost that wants a password: `git http-backend` behind HTTP basic authentication.

A `file://` URL cannot carry credentials, so tests of secrets in `GitSource` URLs clone through this instead: a real
smart-HTTP server (git's own CGI program) on 127.0.0.1 that answers 401 to a request without the right user and
token, so a clone that succeeds proves the URL's credentials were used.
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

USER = 'deploy-bot'
TOKEN = 'ghp_S3cr3tT0kenVALUE0123456789'
"""The password the server wants; a test asserts it appears nowhere else."""


@dataclass
class GitServer:
    """A running server: repositories under `root` are served at `base/<name>`."""

    root: Path
    port: int
    requests: list[str] = field(default_factory=list[str])
    """Every request's path and query, in order, with whether it was authorised."""

    def url(self, repository: str, *, user: str = USER, token: str = TOKEN) -> str:
        """The clone URL of `repository`, with `user:token` in it (none when both are empty)."""
        credentials = f'{user}:{token}@' if user or token else ''
        return f'http://{credentials}127.0.0.1:{self.port}/{repository}'


def _handler(server: GitServer) -> type[BaseHTTPRequestHandler]:
    expected = 'Basic ' + base64.b64encode(f'{USER}:{TOKEN}'.encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            authorised = self.headers.get('Authorization') == expected
            server.requests.append(f'{self.path} {"authorised" if authorised else "refused"}')
            if not authorised:
                self.send_response(401)
                self.send_header('WWW-Authenticate', 'Basic realm="skills"')
                self.send_header('Content-Length', '0')
                self.end_headers()
                return
            parts = urlsplit(self.path)
            length = int(self.headers.get('Content-Length') or 0)
            environment = {
                'PATH': os.environ.get('PATH', ''),
                'GIT_PROJECT_ROOT': str(server.root),
                'GIT_HTTP_EXPORT_ALL': '1',
                'REQUEST_METHOD': self.command,
                'PATH_INFO': parts.path,
                'QUERY_STRING': parts.query,
                'CONTENT_TYPE': self.headers.get('Content-Type', ''),
                'CONTENT_LENGTH': str(length),
                'REMOTE_USER': USER,
                'REMOTE_ADDR': '127.0.0.1',
                'GIT_HTTP_MAX_REQUEST_BUFFER': '100M',
            }
            if self.headers.get('Git-Protocol'):
                environment['GIT_PROTOCOL'] = self.headers['Git-Protocol']
            body = self.rfile.read(length) if length else b''
            done = subprocess.run(
                ['git', 'http-backend'], input=body, capture_output=True, env=environment, check=False, timeout=60
            )
            head, _, payload = done.stdout.partition(b'\r\n\r\n')
            status = 200
            headers: list[tuple[str, str]] = []
            for line in head.decode('latin-1').split('\r\n'):
                key, _, value = line.partition(':')
                if key.lower() == 'status':
                    status = int(value.split()[0])
                elif key:
                    headers.append((key, value.strip()))
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header('Content-Length', str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@contextmanager
def git_server(root: Path) -> Iterator[GitServer]:
    """Serve the bare repositories in `root` on a free port of 127.0.0.1 until the block ends."""
    server = GitServer(root, 0)
    httpd = ThreadingHTTPServer(('127.0.0.1', 0), _handler(server))
    server.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def bare_repository(root: Path, name: str, files: dict[str, str]) -> Path:
    """A bare repository `root/name` whose one commit (on `main`) holds `files` (relative path → text)."""
    work = root / f'{name}.work'
    for relative, text in files.items():
        (work / relative).parent.mkdir(parents=True, exist_ok=True)
        (work / relative).write_text(text)
    identity = ['-c', 'user.name=t', '-c', 'user.email=t@example.com']
    bare = root / name
    for command in (
        ['init', '--quiet', '-b', 'main', str(work)],
        ['-C', str(work), 'add', '.'],
        ['-C', str(work), *identity, 'commit', '--quiet', '-m', 'skills'],
        ['clone', '--quiet', '--bare', str(work), str(bare)],
    ):
        subprocess.run(['git', *command], capture_output=True, check=True)
    return bare
