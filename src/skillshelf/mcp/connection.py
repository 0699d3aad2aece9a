"""One MCP server as a skill source asks it: a fastmcp `Client` session kept open on an event loop of its own, so the
synchronous source and content protocols (called from worker threads and from the agent's loop alike) can wait for
an answer; a server that fails is marked down, and connected again on the first use after `retry_after` seconds.

Every session is a fresh copy of the client it was given (`Client.new()`), held by one task from entering to leaving
(fastmcp ties a session to the task that entered it). A call that fails for any reason but an answer from the server
(an MCP error it sent, or content fastmcp refused) drops the session, so a killed stdio server is started again and
a restarted HTTP server is reached again, but only once the retry delay has passed: a dead server costs a run one
failed call, not one per skill.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any, TypeVar

import mcp_types
from fastmcp import Client
from fastmcp.skills import SkillsClientExtension
from mcp.shared.exceptions import MCPError

__all__ = ('ServerConnection', 'ServerDown', 'ServerRefused')

T = TypeVar('T')

_GONE = frozenset({mcp_types.CONNECTION_CLOSED, mcp_types.REQUEST_TIMEOUT})
"""MCP error codes that say the server is gone or stopped answering; any other is its answer to the request (an
unknown skill, a resource it no longer has)."""


class ServerDown(Exception):
    """The server could not be reached, or stopped answering; its message says why, for the developer."""


class ServerRefused(Exception):
    """The server answered, but not with skills: it does not serve the Skills extension, or refused a request."""


class ServerConnection:
    """A fastmcp client's sessions with one server, on a daemon thread of their own.

    `changes` counts the list-change notifications the server sent and `sessions` the sessions opened; a source's
    version is made of both, so a notification, or a server that answers again after it was down, makes the library
    read the source again.
    """

    def __init__(self, client: Client[Any], *, timeout: float, retry_after: float, label: str) -> None:
        self._template = client
        self._timeout = timeout
        self._retry_after = retry_after
        self.sessions = 0
        """Sessions opened so far."""
        self.changes = 0
        """List-change notifications received so far (and changes the source noticed itself)."""
        self.server_name = ''
        """The name the server gave in its last session (`''` before one)."""
        self._client: Client[Any] | None = None
        self._stop: asyncio.Event | None = None
        self._down_since: float | None = None
        self._problem = ''
        self._loop = asyncio.new_event_loop()
        self._opening = asyncio.Lock()
        self._closing: asyncio.Future[None] | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name=f'skillshelf-mcp {label}', daemon=True)
        self._thread.start()

    @property
    def down(self) -> bool:
        """Whether the last attempt to reach the server failed (and nothing has reached it since)."""
        return self._down_since is not None

    @property
    def retry_due(self) -> bool:
        """Whether a down server may be tried again now."""
        return self._down_since is None or time.monotonic() - self._down_since >= self._retry_after

    def call(self, operation: Callable[[Client[Any]], Awaitable[T]]) -> T:
        """`operation(client)` on a connected session, waited for (at most `timeout` seconds, and as long again to
        connect).

        Raises:
            ServerDown: the server cannot be reached now, or stopped answering (its session is dropped).
            ServerRefused: it does not serve the Skills extension, or sent an MCP error for the request.
            ValueError: fastmcp refused what it sent (a file that does not match its digest, a malformed entry).
        """
        if threading.current_thread() is self._thread:
            raise RuntimeError('an MCP skill source was asked from its own event loop')
        future: Future[T] = asyncio.run_coroutine_threadsafe(self._call(operation), self._loop)
        return future.result()

    def connect(self) -> bool:
        """Open a session now if there is none and a retry is due; whether one is open afterwards."""
        if self._client is not None:
            return True
        if not self.retry_due:
            return False
        try:
            self.call(_nothing)
        except (ServerDown, ServerRefused):
            return False
        return True

    def close(self) -> None:
        """End the session and stop the thread (the source is not used again); waited for, unless it is called on
        the thread itself (a source collected there), which then stops once the session has ended."""
        if not self._loop.is_running():
            return
        if threading.current_thread() is self._thread:
            self._closing = asyncio.ensure_future(self._close(), loop=self._loop)
            return
        asyncio.run_coroutine_threadsafe(self._close(), self._loop)
        self._thread.join(self._timeout * 2)

    def notified(self, message: object) -> None:
        """The client's message handler: a changed resource list (skills are resources) is a change of skills."""
        if isinstance(message, mcp_types.ResourceListChangedNotification):
            self.changes += 1

    async def _call(self, operation: Callable[[Client[Any]], Awaitable[T]]) -> T:
        client = await asyncio.wait_for(self._session(), self._timeout * 2)
        try:
            return await asyncio.wait_for(operation(client), self._timeout)
        except (ValueError, ServerRefused):
            raise
        except MCPError as error:
            if error.error.code not in _GONE:
                raise ServerRefused(error.error.message) from error
            self._drop(client, str(error) or type(error).__name__)
            raise ServerDown(self._problem) from error
        except Exception as error:  # a transport error of any kind, a timeout: the server is gone for now
            self._drop(client, _said(error))
            raise ServerDown(self._problem) from error

    async def _session(self) -> Client[Any]:
        async with self._opening:  # calls that find no session wait for one attempt, not one each
            return self._client if self._client is not None else await self._open()

    async def _open(self) -> Client[Any]:
        if not self.retry_due:
            raise ServerDown(f'{self._problem}; tried again {self._retry_after:g} s after it failed')
        client = self._template.new()
        ready: asyncio.Future[None] = self._loop.create_future()
        stop = asyncio.Event()
        holder = asyncio.ensure_future(_hold(client, ready, stop))
        try:
            await asyncio.wait_for(asyncio.shield(ready), self._timeout)
        except Exception as error:
            stop.set()
            holder.cancel()
            self._down_since, self._problem = time.monotonic(), f'it cannot be reached ({_said(error)})'
            raise ServerDown(self._problem) from error
        capabilities = client.server_capabilities
        if capabilities is None or SkillsClientExtension.identifier not in (capabilities.extensions or {}):
            stop.set()
            raise ServerRefused('it does not serve skills (the MCP Skills extension, io.modelcontextprotocol/skills)')
        self._client, self._stop, self._down_since = client, stop, None
        self.server_name = client.server_info.name if client.server_info is not None else ''
        self.sessions += 1
        return client

    def _drop(self, client: Client[Any], problem: str) -> None:
        if self._client is client:
            self._client = None
            if self._stop is not None:
                self._stop.set()
        self._down_since, self._problem = time.monotonic(), f'it stopped answering ({problem})'

    async def _close(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self._client = None
        pending = [task for task in asyncio.all_tasks(self._loop) if task is not asyncio.current_task()]
        if pending:
            await asyncio.wait(pending, timeout=self._timeout)
        self._loop.stop()


async def _hold(client: Client[Any], ready: asyncio.Future[None], stop: asyncio.Event) -> None:
    """Keep `client`'s session open until `stop` is set; `ready` says when it is open, or why it could not be."""
    try:
        async with client:
            ready.set_result(None)
            await stop.wait()
    except BaseException as error:
        if not ready.done():
            ready.set_exception(error if isinstance(error, Exception) else ServerDown('the session was cancelled'))
        if not isinstance(error, Exception):
            raise


async def _nothing(client: Client[Any]) -> None:
    """An operation that only needs the session open."""


def _said(error: BaseException) -> str:
    """An error in a few words: its message, or its kind when it has none."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ''
    return text or type(error).__name__
