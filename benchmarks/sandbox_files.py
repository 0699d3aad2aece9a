"""The sandbox's file operations: its own (one sandboxed Python process per call, `sandbox/fileops.py`) against
pydantic-ai's shell fallback (`_ShellFilesystem`: the shell commands `Workspace` runs for a backend with commands and
no file methods), on the same `SandboxWorkspace`, measured here and printed, never asserted.

    python benchmarks/sandbox_files.py [--calls 100] [--large-mib 1]

Each operation is called `--calls` times in a row on a small file (1 KiB) or a folder of ten files, then a few times
on a `--large-mib` file; medians and totals are printed, with one `true` command for scale. Needs bubblewrap.
A call that fails is counted and printed, not fatal: run as root, a workspace's commands run as a user id that
workspaces under another root (another run's, a test's) are given too, so another sandbox's fork bomb can leave
them no process to fork (`Cannot fork`); the shell path forks more per call, so it meets this more often.
The fallback is reached as `Workspace` reaches it for a backend without file methods, through pydantic-ai's private
class, so this script may need a change when pydantic-ai moves it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic_ai.workspaces import SupportsFilesystem, WorkspaceError
from pydantic_ai.workspaces.workspace import _ShellFilesystem  # pyright: ignore[reportPrivateUsage]

from skillshelf.sandbox import SandboxWorkspace, SkillSandbox

Paths = dict[str, Any]
Times = dict[str, list[float]]
FAILED: dict[str, list[str]] = {}
"""The calls that failed, by path (their times are counted too)."""


async def timed(calls: int, operation: Callable[[SupportsFilesystem, int], Awaitable[Any]], paths: Paths) -> Times:
    """The seconds of each of `calls` calls on each path, the paths taking turns call by call (so a busy moment of
    the machine falls on both alike)."""
    seconds: Times = {label: [] for label in paths}
    for index in range(calls):
        for label, files in paths.items():
            started = time.perf_counter()
            try:
                await operation(files, index)
            except WorkspaceError as error:  # counted, not fatal: see the module docstring
                FAILED.setdefault(label, []).append(f'{type(error).__name__}: {error}')
            seconds[label].append(time.perf_counter() - started)
    return seconds


def rows(name: str, seconds: Times) -> list[str]:
    return [
        f'| {name} | {label} | {len(times)} | {statistics.median(times) * 1000:.1f} ms | {sum(times):.2f} s |'
        for label, times in seconds.items()
    ]


async def measure(paths: Paths, calls: int, large: bytes) -> list[str]:
    """The rows of each path to the files: small writes, reads, stats, listings, then the large file."""
    small = b'x' * 1024
    folders = {id(files): f'/workspace/{label}' for label, files in paths.items()}

    def at(files: SupportsFilesystem, name: str) -> str:
        return f'{folders[id(files)]}/{name}'

    for files in paths.values():
        for index in range(10):
            await files.write_bytes(at(files, f'listed/f{index}.txt'), small)
    size = f'{len(large) >> 20} MiB'
    return [
        *rows('write_bytes 1 KiB', await timed(calls, lambda f, i: f.write_bytes(at(f, f's{i}'), small), paths)),
        *rows('read_bytes 1 KiB', await timed(calls, lambda f, i: f.read_bytes(at(f, f's{i}')), paths)),
        *rows('stat', await timed(calls, lambda f, i: f.stat(at(f, f's{i}')), paths)),
        *rows('list_dir (10 files)', await timed(calls, lambda f, _: f.list_dir(at(f, 'listed')), paths)),
        *rows('exists', await timed(calls, lambda f, i: f.exists(at(f, f's{i}')), paths)),
        *rows(f'write_bytes {size}', await timed(5, lambda f, i: f.write_bytes(at(f, f'l{i}'), large), paths)),
        *rows(f'read_bytes {size}', await timed(5, lambda f, i: f.read_bytes(at(f, f'l{i}')), paths)),
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or '').split('\n\n')[0])
    parser.add_argument('--calls', type=int, default=100)
    parser.add_argument('--large-mib', type=int, default=1)
    options = parser.parse_args()
    large = bytes(range(256)) * (options.large_mib << 12)
    with tempfile.TemporaryDirectory() as root:
        sandbox = SkillSandbox(Path(root) / 'workspaces')
        backend = sandbox.workspace(conversation=None)
        paths: Paths = {'own': backend} if isinstance(backend, SupportsFilesystem) else {}
        paths['shell'] = _ShellFilesystem(backend)
        table = rows(
            'run `true`', await timed(options.calls, lambda _, __: backend.run(['true']), {'command': backend})
        )
        table += await measure(paths, options.calls, large)
        if isinstance(backend, SandboxWorkspace) and backend.ref is not None:
            await sandbox.delete(backend.ref)
    print(f'python {sys.version.split()[0]}, {options.calls} calls each (5 for the large file)\n')
    print('| operation | path | calls | median | total |\n|---|---|---|---|---|')
    print('\n'.join(table))
    for label, errors in FAILED.items():
        print(f'\n{label}: {len(errors)} calls failed, the first: {errors[0]}')


if __name__ == '__main__':
    asyncio.run(main())
