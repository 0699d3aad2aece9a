"""The memory cap of one sandboxed command (`SandboxLimits.max_command_memory_bytes`): a memory cgroup of its own.

A per-process limit (`max_memory_bytes`, address space) leaves a command's total open: 64 processes of 2 GiB each,
plus its `/tmp` and `/dev/shm`, which are memory, plus `memfd` files, which are in no folder at all. A cgroup counts
all of these for the command's processes together (the pages of a `tmpfs` or `memfd` count against the group that
wrote them), and the kernel kills a process of a group over its limit; the sandbox then stops the command and says
so (`MemoryLimitError`).

The group is made under the one this process is in: with cgroup v1, in the hierarchy the `memory` controller is
mounted on; with cgroup v2, where this process's group hands the `memory` controller down (`cgroup.subtree_control`,
as a group systemd delegates does). The command joins its group before bubblewrap starts (`enter`), so all it starts
is in it. Whether one can be made is found once, by making and removing a probe group: a user who is not root and
has no delegated group, a container whose `/sys/fs/cgroup` is read-only, or a kernel without the controller cannot;
then `unavailable()` says why and only the per-process and `/tmp` limits hold (the README gives the measured worst
case).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import shlex
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ('LOOK_EVERY', 'CommandGroup', 'unavailable')

LOOK_EVERY = 0.1
"""Seconds between two looks at whether the kernel killed a process of a running command's group."""
Watch = Callable[[], Awaitable[str | None]]
_PREFIX = 'skillshelf-'
"""How the groups made here are named: `skillshelf-<agent pid>-<n>`."""
_COUNTER = itertools.count()
_LEFT: set[Path] = set()
"""Groups whose processes had not all gone when their command ended: removed at a later command."""


@dataclass(frozen=True)
class _Hierarchy:
    """Where command groups are made."""

    parent: Path
    """The group they are made in (this process's own)."""
    version: int
    """1 or 2: the names of the control files differ."""


class CommandGroup:
    """One command's memory cgroup: `make` it before the command starts, start the command through `enter`, ask
    `exceeded` while it runs and after, and `remove` it once the command has ended."""

    def __init__(self, path: Path, version: int, limit: int) -> None:
        self.path = path
        """The group's folder."""
        self.limit = limit
        """The bytes its processes may use together."""
        self._events = path / ('memory.oom_control' if version == 1 else 'memory.events')

    @classmethod
    def make(cls, limit: int) -> CommandGroup | None:
        """A new group whose processes may use `limit` bytes together; `None` where none can be made (see
        `unavailable`)."""
        hierarchy = _hierarchy()
        if isinstance(hierarchy, str):
            return None
        for left in list(_LEFT):
            _remove(left)
        try:
            return _make(hierarchy, f'{_PREFIX}{os.getpid()}-{next(_COUNTER)}', limit)
        except OSError:
            return None  # the hierarchy was there at the probe: a group cannot be made now (too many groups)

    def enter(self, argv: list[str]) -> list[str]:
        """`argv` started in this group: a shell joins it, then becomes the command, so every process it starts is
        in it from the first. A shell that cannot join fails as bubblewrap fails (`SandboxBrokenError`), and the
        command does not run uncapped."""
        procs = shlex.quote(str(self.path / 'cgroup.procs'))
        failed = "{ echo 'bwrap: cannot join the memory cgroup of the command' >&2; exit 1; }"  # said as bubblewrap's
        return ['/bin/sh', '-c', f'echo $$ 2>/dev/null > {procs} || {failed}; exec "$@"', 'sh', *argv]

    def exceeded(self) -> bool:
        """Whether the kernel has killed a process of this group for passing its limit."""
        try:
            events = self._events.read_text()
        except OSError:
            return False
        return any(int(line.split()[1]) > 0 for line in events.splitlines() if line.startswith('oom_kill '))

    def watching(self, watch: Watch | None) -> Watch:
        """`watch` (for `run_process`) that also says `'memory'` once the kernel has killed a process of this group
        (the rest are stopped with it), looking every `LOOK_EVERY` seconds: the read is on the event loop, and two
        hundred commands at once would otherwise read ten thousand files a second."""
        next_look = 0.0

        async def either() -> str | None:
            nonlocal next_look
            if watch is not None and (reason := await watch()) is not None:
                return reason
            if time.monotonic() < next_look:
                return None
            next_look = time.monotonic() + LOOK_EVERY
            return 'memory' if self.exceeded() else None

        return either

    def remove(self, patience: float = 0.5) -> None:
        """Remove the group once its processes have gone: the command has ended, but bubblewrap's own init may still
        be exiting for some milliseconds after it (waited for without an await, like `process.run_process`'s kill).
        One not gone within `patience` seconds leaves the group for a later command to remove."""
        deadline = time.monotonic() + patience
        while _read(self.path / 'cgroup.procs').strip() and time.monotonic() < deadline:
            time.sleep(0.002)
        _remove(self.path)


def unavailable() -> str | None:
    """Why no command can have a memory cgroup here, or `None` if one can."""
    hierarchy = _hierarchy()
    return hierarchy if isinstance(hierarchy, str) else None


@functools.cache
def _hierarchy() -> _Hierarchy | str:
    """Where this process can make memory groups, found once by making a probe group; or why nowhere."""
    mounts = _mounts()
    groups = _own_groups()
    candidates: list[_Hierarchy] = []
    if (v1 := mounts.get('memory')) is not None and 'memory' in groups:
        candidates.append(_Hierarchy(_within(v1, groups['memory']), 1))
    if (v2 := mounts.get('')) is not None and '' in groups:
        candidates.append(_Hierarchy(_within(v2, groups['']), 2))
    if not candidates:
        return 'no memory cgroup controller is mounted'
    problems: list[str] = []
    for hierarchy in candidates:
        if hierarchy.version == 2 and 'memory' not in _read(hierarchy.parent / 'cgroup.subtree_control').split():
            problems.append(f'cgroup v2: {hierarchy.parent} does not hand down the memory controller')
            continue
        _remove_abandoned(hierarchy.parent)
        try:
            probe = _make(hierarchy, f'{_PREFIX}{os.getpid()}-probe', 64 << 20)
        except OSError as error:
            problems.append(
                f'cgroup v{hierarchy.version}: cannot make a group in {hierarchy.parent} ({error.strerror})'
            )
            continue
        _remove(probe.path)
        return hierarchy
    return '; '.join(problems)


def _make(hierarchy: _Hierarchy, name: str, limit: int) -> CommandGroup:
    """Make group `name` in `hierarchy` with `limit` bytes for its processes and none of swap."""
    path = hierarchy.parent / name
    path.mkdir()
    try:
        if hierarchy.version == 1:
            (path / 'memory.limit_in_bytes').write_text(str(limit))
            with contextlib.suppress(FileNotFoundError):  # swap accounting off: no swap to count
                (path / 'memory.memsw.limit_in_bytes').write_text(str(limit))
        else:
            (path / 'memory.max').write_text(str(limit))
            with contextlib.suppress(FileNotFoundError):
                (path / 'memory.swap.max').write_text('0')
    except OSError:
        _remove(path)
        raise
    return CommandGroup(path, hierarchy.version, limit)


def _remove(path: Path) -> None:
    try:
        path.rmdir()
    except FileNotFoundError:
        _LEFT.discard(path)
    except OSError:
        _LEFT.add(path)
    else:
        _LEFT.discard(path)


def _remove_abandoned(parent: Path) -> None:
    """Remove the empty groups an agent that has ended left behind (it was killed before it could)."""
    with contextlib.suppress(OSError):
        for path in parent.iterdir():
            owner = path.name.removeprefix(_PREFIX).split('-')[0]
            if path.name.startswith(_PREFIX) and owner.isdigit() and not os.path.exists(f'/proc/{owner}'):
                with contextlib.suppress(OSError):
                    path.rmdir()


def _mounts() -> dict[str, tuple[Path, str]]:
    """Where the v1 `memory` hierarchy (key `'memory'`) and the v2 one (key `''`) are mounted, each with the group
    its mount shows at the mount point (`/proc/self/mountinfo`'s root: not `/` in some containers)."""
    found: dict[str, tuple[Path, str]] = {}
    for line in _read(Path('/proc/self/mountinfo')).splitlines():
        fields = line.split()
        if '-' not in fields:
            continue
        separator = fields.index('-')
        kind, options = fields[separator + 1], fields[separator + 3].split(',')
        key = 'memory' if kind == 'cgroup' and 'memory' in options else '' if kind == 'cgroup2' else None
        if key is not None and key not in found:
            found[key] = (Path(fields[4]), fields[3])
    return found


def _own_groups() -> dict[str, str]:
    """This process's group in the v1 `memory` hierarchy (key `'memory'`) and in the v2 one (key `''`)."""
    groups: dict[str, str] = {}
    for line in _read(Path('/proc/self/cgroup')).splitlines():
        _, controllers, path = line.split(':', 2)
        for controller in controllers.split(',') if controllers else ['']:
            if controller in ('memory', ''):
                groups[controller] = path
    return groups


def _within(mount: tuple[Path, str], group: str) -> Path:
    """The folder of `group` under `mount` (its point, and the group it shows there)."""
    point, shown = mount
    relative = Path(group).relative_to(shown) if Path(group).is_relative_to(shown) else Path(group.lstrip('/'))
    return point / relative


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ''
