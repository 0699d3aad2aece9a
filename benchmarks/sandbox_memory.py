"""How much memory one sandboxed command can hold, with and without a memory cgroup: measured here and printed, never
asserted (the README's worst case comes from here).

    python benchmarks/sandbox_memory.py [--processes 8] [--process-mib 256] [--tmp-mib 64] [--cap-mib 512]

One command in a real `SkillSandbox` does all a command may to hold memory: it forks until the process cap refuses,
each process fills its address space (8 MiB at a time, every page touched) until it is refused, and it fills `/tmp`
and `/dev/shm` with files, then asks for memory outside any process (`memfd_create`, `shmget`), and holds it all
until it is killed. It reports what it holds; the peak fall of the host's `MemAvailable` while it runs is printed
beside (other work on the machine moves it too). It runs twice: as on a machine where the agent may make no memory
cgroup (an ordinary user; here `CommandGroup.make` is replaced to give none, the one substitute in this script), and
with a cgroup of `--cap-mib` where this machine lets the agent make one. Needs bubblewrap; a cgroup needs root.
Writes `results/sandbox_memory.json`, whose figures the README quotes (`figures.py` rewrites them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic_ai.workspaces import WorkspaceError

from skillshelf import SandboxLimits, SkillSandbox
from skillshelf.sandbox import memory

sys.path.insert(0, str(Path(__file__).parent))

from _results import machine, write_json

HOG = r"""import ctypes, json, os, sys, time
step = 8 << 20

def fill():
    held = []
    try:
        while True:
            block = bytearray(step)  # zeroed by the allocator's mmap: write each page so it is held
            for offset in range(0, step, 4096):
                block[offset] = 1
            held.append(block)
    except MemoryError:
        pass
    return held, len(held) * step

reports = []
children = []
while True:
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        break
    if pid == 0:
        held, size = fill()
        os.write(write, f'{size}\n'.encode())
        time.sleep(3600)
        os._exit(0)
    os.close(write)
    children.append(read)
files = {}
for folder in ('/tmp', '/dev/shm'):
    files[folder] = 0
    for index in range(1000):
        try:
            with open(f'{folder}/held-{index}', 'wb') as file:
                while True:
                    file.write(b'x' * (1 << 20))
                    file.flush()
                    files[folder] += 1 << 20
        except OSError:
            if os.path.getsize(f'{folder}/held-{index}') == 0:
                break
outside = {}
try:
    fd = os.memfd_create('held')
    os.write(fd, b'x' * (16 << 20))
    outside['memfd_create'] = 'held 16 MiB'
except OSError as error:
    outside['memfd_create'] = os.strerror(error.errno)
libc = ctypes.CDLL(None, use_errno=True)
outside['shmget'] = 'allowed' if libc.shmget(0, 16 << 20, 0o1600) >= 0 else os.strerror(ctypes.get_errno())
processes = [int(os.fdopen(read).readline() or 0) for read in children]
held, size = fill()
processes.append(size)
print(json.dumps({'processes': processes, 'files': files, 'outside': outside}), flush=True)
time.sleep(3600)
"""


def available_bytes() -> int:
    for line in Path('/proc/meminfo').read_text().splitlines():
        if line.startswith('MemAvailable:'):
            return int(line.split()[1]) * 1024
    return 0


async def one_command(limits: SandboxLimits, seconds: float) -> tuple[str, int]:
    """What the hog said (or how it was stopped), and the peak fall of `MemAvailable` while it ran."""
    with tempfile.TemporaryDirectory() as root:
        sandbox = SkillSandbox(Path(root) / 'ws', limits=limits)
        backend = sandbox.workspace(conversation=None)
        await backend.write_bytes('/workspace/hog.py', HOG.encode())
        before = available_bytes()
        lowest = before
        running = asyncio.ensure_future(backend.run(['python3', 'hog.py'], timeout=seconds))
        while not running.done():
            lowest = min(lowest, available_bytes())
            await asyncio.sleep(0.05)
        try:
            said = running.result().stdout
        except WorkspaceError as error:
            said = f'{type(error).__name__}: {error} | {getattr(error, "stdout", "").strip()}'
        assert backend.ref is not None
        await sandbox.delete(backend.ref)
        return said.strip(), before - lowest


def account(said: str) -> dict[str, Any] | None:
    for line in reversed(said.split('| ')[-1].splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return None


async def main() -> None:
    parser = argparse.ArgumentParser(description='How much memory one sandboxed command can hold.')
    parser.add_argument('--processes', type=int, default=8)
    parser.add_argument('--process-mib', type=int, default=256)
    parser.add_argument('--tmp-mib', type=int, default=64)
    parser.add_argument('--cap-mib', type=int, default=512)
    parser.add_argument('--seconds', type=float, default=40.0, help='how long the command holds before it is stopped')
    options = parser.parse_args()
    mib = 1 << 20
    limits = SandboxLimits(
        max_processes=options.processes,
        max_memory_bytes=options.process_mib * mib,
        max_tmp_bytes=options.tmp_mib * mib,
        max_command_memory_bytes=options.cap_mib * mib,
    )
    allowed = options.processes * options.process_mib + 2 * options.tmp_mib
    defaults = SandboxLimits()
    at_defaults = (defaults.max_processes * defaults.max_memory_bytes + 2 * defaults.max_tmp_bytes) / (1 << 30)
    make = memory.CommandGroup.make
    memory.CommandGroup.make = classmethod(lambda cls, limit: None)  # pyright: ignore[reportAttributeAccessIssue]
    try:
        said, fell = await one_command(limits, options.seconds)
    finally:
        memory.CommandGroup.make = make
    held = account(said)
    if held is None:
        raise SystemExit(f'the command without a cgroup did not say what it held: {said[:500]}')
    uncapped = {
        'held_mib': (sum(held['processes']) + sum(held['files'].values())) / mib,
        'processes': len(held['processes']),
        'process_mib': max(held['processes']) / mib,
        'files_mib': {folder: size / mib for folder, size in held['files'].items()},
        'outside': held['outside'],
        'available_fell_mib': fell / mib,
    }
    capped: dict[str, Any] | None = None
    if (reason := memory.unavailable()) is None:
        started = time.perf_counter()
        said, fell = await one_command(limits, options.seconds)
        capped = {
            'cap_mib': options.cap_mib,
            'said': said[:300],
            'seconds': time.perf_counter() - started,
            'available_fell_mib': fell / mib,
        }
    payload = {
        'machine': machine(),
        'limits_mib': {'process': options.process_mib, 'tmp': options.tmp_mib},
        'processes': options.processes,
        'allowed_mib': allowed,
        'uncapped': uncapped,
        'capped': capped,
        'no_cgroup_because': reason,
        'defaults_worst_gib': at_defaults,
    }
    print(json.dumps(payload, indent=2))
    print(f'wrote {write_json("sandbox_memory", payload)}; `python benchmarks/figures.py` quotes it in the README')


if __name__ == '__main__':
    asyncio.run(main())
