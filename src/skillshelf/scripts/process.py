"""One child process, bounded: its output captured up to a limit, and it (with every process it started) killed
at a time limit. Runs on the event loop's subprocess support, so a run never blocks other work."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

_CHUNK = 65536


@dataclass(frozen=True)
class Finished:
    """How a bounded process ended."""

    exit_code: int | None
    """Its exit status, or `None` if it was killed at the time limit."""
    output: bytes
    """The first bytes it wrote to stdout and stderr."""
    output_bytes: int
    """All the bytes it wrote."""


async def run_bounded(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str] | None,
    timeout: float,
    max_output_bytes: int,
    pass_fds: Sequence[int] = (),
) -> Finished:
    """Run `argv` in its own session with no input; output past `max_output_bytes` is read and dropped, so a chatty
    process is never blocked on a full pipe."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=cwd,
        env=env,
        pass_fds=tuple(pass_fds),
        start_new_session=True,  # one process group to kill, whatever the script started
    )
    captured = bytearray()
    total = 0

    async def drain() -> int:
        nonlocal total
        assert process.stdout is not None
        while chunk := await process.stdout.read(_CHUNK):
            total += len(chunk)
            captured.extend(chunk[: max(0, max_output_bytes - len(captured))])
        return await process.wait()

    try:
        exit_code: int | None = await asyncio.wait_for(drain(), timeout)
    except TimeoutError:
        exit_code = None
    finally:
        if process.returncode is None:
            _kill_group(process.pid)
            await process.wait()
    return Finished(exit_code, bytes(captured), total)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it ended between the check and the kill
        os.killpg(pid, signal.SIGKILL)
