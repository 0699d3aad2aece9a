"""One child process, bounded: its output captured up to a cap, and it (with every process it started) killed at a
time limit, on cancellation, or when a watch says so. Runs on the event loop's subprocess support, so a run never
blocks other work."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ('Finished', 'run_process')

_CHUNK = 65536


@dataclass(frozen=True)
class Finished:
    """How a bounded process ended."""

    exit_code: int | None
    """Its exit status (`128 + N` when killed by signal N), or `None` if it was stopped (see `stopped`)."""
    stdout: bytes
    """The first bytes it wrote to stdout, at most the capture cap."""
    stderr: bytes
    """The first bytes it wrote to stderr, at most the capture cap."""
    output_bytes: int
    """All the bytes it wrote to both."""
    stopped: str | None = None
    """Why it was stopped before it ended: `'timeout'`, `'output'` (over the capture cap) or a watch's reason."""


async def run_process(
    argv: Sequence[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    max_capture: int,
    stdin: bytes | None = None,
    stop_on_overflow: bool = False,
    watch: Callable[[], Awaitable[str | None]] | None = None,
    watch_interval: float = 1.0,
    started: Callable[[int], object] | None = None,
    pass_fds: Sequence[int] = (),
) -> Finished:
    """Run `argv` in its own session (one process group to kill, whatever it starts).

    `stdin` is written to it and closed (no input: at end of file). Output past `max_capture` bytes per stream is read
    and dropped, so a chatty process is never blocked on a full pipe; with `stop_on_overflow` the process is stopped
    instead. `watch`, awaited every `watch_interval` seconds while the process runs, stops it when it returns a
    reason. `started` is told the process id (the process group's) once it runs. `pass_fds` stay open in it.
    """
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
    if started is not None:
        started(process.pid)
    captured = (bytearray(), bytearray())
    total = 0
    overflowed = asyncio.Event()

    async def drain(stream: asyncio.StreamReader | None, into: bytearray) -> None:
        nonlocal total
        assert stream is not None
        while chunk := await stream.read(_CHUNK):
            total += len(chunk)
            room = max(0, max_capture - len(into))
            into.extend(chunk[:room])
            if stop_on_overflow and len(chunk) > room:
                overflowed.set()

    async def feed() -> None:
        if stdin is not None and process.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                process.stdin.write(stdin)
                await process.stdin.drain()
            process.stdin.close()

    async def watched() -> str:
        while True:
            await asyncio.sleep(watch_interval)
            if watch is not None and (reason := await watch()) is not None:
                return reason

    async def finish() -> int:
        await asyncio.gather(feed(), drain(process.stdout, captured[0]), drain(process.stderr, captured[1]))
        return await process.wait()

    async def overflow() -> str:
        await overflowed.wait()
        return 'output'

    stopped: str | None = None
    done = asyncio.ensure_future(finish())
    guards = [asyncio.ensure_future(overflow()), *([asyncio.ensure_future(watched())] if watch else [])]
    try:
        finished, _ = await asyncio.wait({done, *guards}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if done not in finished:
            reasons = [guard.result() for guard in guards if guard in finished]
            stopped = reasons[0] if reasons else 'timeout'
        exit_code: int | None = None if stopped else done.result()
    finally:
        for task in (*guards, done):
            task.cancel()
        if process.returncode is None:
            children = _children(process.pid)  # before the kill: a sandbox's init lives on for a moment after it
            _kill_group(process.pid)
            try:
                await process.wait()
            finally:
                # Waited for without an await: a cancelled caller (anyio cancels again at every await) must still
                # return only once everything it started is gone. It takes a few milliseconds.
                _wait_until_gone(children)
    if exit_code is not None and exit_code < 0:
        exit_code = 128 - exit_code  # killed by a signal, reported as a shell would
    return Finished(exit_code, bytes(captured[0]), bytes(captured[1]), total, stopped)


def _children(pid: int) -> list[int]:
    """The process ids of `pid`'s children (Linux), to wait for after a kill; none where this cannot be read."""
    try:
        return [int(child) for child in Path(f'/proc/{pid}/task/{pid}/children').read_text().split()]
    except (OSError, ValueError):
        return []


def _wait_until_gone(pids: list[int], patience: float = 2.0) -> None:
    """Wait until each of `pids` has ended (a bubblewrap sandbox's init ends only once every process in its namespace
    has), so "every process was killed" is true when it is said."""
    deadline = time.monotonic() + patience
    while pids and time.monotonic() < deadline:
        pids = [pid for pid in pids if _alive(pid)]
        if pids:
            time.sleep(0.002)


def _alive(pid: int) -> bool:
    try:
        state = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ('Z', 'X')  # a zombie has ended; only its parent's wait is missing


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # it ended between the check and the kill
        os.killpg(pid, signal.SIGKILL)
