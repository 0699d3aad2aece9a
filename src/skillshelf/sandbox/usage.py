"""How much a workspace folder holds on the host, and the watch that stops a command writing past the limit.

The measure is `du` (the disk blocks in use; a file with several links counts once). It walks by file descriptor,
so a tree deeper than the longest path the system takes, where a script could otherwise hide data from the count,
is measured whole; and it is about twice as fast as a walk in Python (200,000 files: 0.7 s). One `du` measures every
folder due at once, so two hundred commands watched together cost one process per round, not two hundred.

No file system this library can count on gives a folder a hard quota, so the limit is held by watching. The watch
runs in one thread of its own, not on the event loop: an agent busy with two hundred runs delays its loop by
hundreds of milliseconds, in which a fast writer writes hundreds of MiB. Every `WATCH_INTERVAL` seconds the thread
reads the file system's free space (one `statvfs` call per command) and measures a command's folder again once the
file system has filled by half the room that folder had left, or `MEASURE_EVERY` seconds have passed (space freed
elsewhere can hide growth no longer than that); a command over its limit is killed there and then, with its
process group. What it writes meanwhile is the overshoot: tens of MiB on an idle machine. The kernel holds the
rest: no one file may grow past the room left when the command starts (its file-size limit), and `fallocate`, which
takes space without writing it, is refused (see `seccomp`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import signal
import subprocess
import threading
import time

__all__ = ('MEASURE_EVERY', 'WATCH_INTERVAL', 'DiskWatch', 'folder_bytes', 'measure_folders')

WATCH_INTERVAL = 0.02
"""Seconds between two looks at the file system's free space while a command runs."""
MEASURE_EVERY = 1.0
"""Seconds after which a running command's workspace is measured again, whatever the free space says."""
_MEASURE_TIMEOUT = 60.0
"""Seconds one `du` may take (a folder of millions of files); past it, the folders count as unmeasured."""


async def folder_bytes(folder: str) -> int:
    """The bytes of disk the files under `folder` take (symlinks not followed, one file system), measured in a
    worker thread."""
    return (await asyncio.to_thread(measure_folders, [folder])).get(folder, 0)


def measure_folders(folders: list[str]) -> dict[str, int]:
    """What each of `folders` takes on disk (a missing one is left out); blocks, so call it from a thread."""
    if not folders:
        return {}
    du = _program('du')
    if du is None:  # not a GNU/Linux host
        return {folder: _walk_bytes(folder) for folder in folders}
    sizes, complete = _du(du, folders)
    if not complete and os.geteuid() != 0 and (chmod := _program('chmod')) is not None:
        # A folder its owner may not read (a sandbox runs as the agent's user and may chmod its own files) hides
        # what is under it: the owner opens it up again, and the count is taken again.
        _quiet(chmod, '-R', 'u+rwX', '--', *folders)
        sizes, _ = _du(du, folders)
    return sizes


class DiskWatch:
    """One command's workspace, watched from the watch thread while the command runs (see the module docstring):
    `start` it with the command's process group, `close` it when the command has ended."""

    def __init__(self, folder: str, limit: int, used: int) -> None:
        """`used`: what the folder held when the command started."""
        self.folder = folder
        self.limit = limit
        self.used = used
        self.reason: str | None = None
        """Why the watch killed the command (it grew past the limit), once it has."""
        self.group: int | None = None
        """The command's process group, once it started."""
        self._filled = _filled(folder)
        self._measured = time.monotonic()

    def start(self, group: int) -> None:
        """Watch from now on, killing process group `group` if the workspace grows past its limit."""
        self.group = group
        _WATCHER.add(self)

    def close(self) -> None:
        """Stop watching (the command has ended: its process group id may be given to another process)."""
        _WATCHER.discard(self)

    async def __call__(self) -> str | None:
        """The reason the command was killed, once it was (for `run_process`'s `watch`)."""
        return self.reason

    async def measure(self) -> str | None:
        """Measure now (after the command): the reason it is over its limit, if it is."""
        self.used = await folder_bytes(self.folder)
        return self.judge()

    def is_due(self, filled_by_root: dict[str, int]) -> bool:
        """Whether the folder should be measured now (the watch thread asks, with the file systems' use this round
        by sandbox root)."""
        root = os.path.dirname(os.path.dirname(os.path.dirname(self.folder)))
        filled = filled_by_root.get(root)
        if filled is None:
            filled = filled_by_root[root] = _filled(self.folder)
        if filled - self._filled < (self.limit - self.used) / 2 and time.monotonic() - self._measured < MEASURE_EVERY:
            return False
        self._filled = filled
        return True

    def judge(self) -> str | None:
        """The reason to stop, if `used` is over the limit (and the time of this measure noted)."""
        self._measured = time.monotonic()
        if self.used > self.limit:
            return f'the workspace grew past its {self.limit:,}-byte limit'
        return None


class _Watcher:
    """The one thread watching every running command's workspace, started at the first command."""

    def __init__(self) -> None:
        self._watches: set[DiskWatch] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, watch: DiskWatch) -> None:
        with self._lock:
            self._watches.add(watch)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name='skillshelf-disk-watch', daemon=True)
                self._thread.start()

    def discard(self, watch: DiskWatch) -> None:
        with self._lock:
            self._watches.discard(watch)

    def _run(self) -> None:
        while True:
            time.sleep(WATCH_INTERVAL)
            with self._lock:
                if not self._watches:
                    self._thread = None
                    return
                watches = list(self._watches)
            filled: dict[str, int] = {}  # one `statvfs` per sandbox root a round: the GIL is given up at each call
            due = [watch for watch in watches if watch.reason is None and watch.is_due(filled)]
            if not due:
                continue
            try:
                sizes = measure_folders(sorted({watch.folder for watch in due}))
            except (OSError, subprocess.SubprocessError):
                continue
            for watch in due:
                watch.used = sizes.get(watch.folder, watch.used)
                if (reason := watch.judge()) is not None:
                    with self._lock:
                        if watch not in self._watches or watch.group is None:
                            continue  # it ended meanwhile
                        watch.reason = reason
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            os.killpg(watch.group, signal.SIGKILL)


_WATCHER = _Watcher()


@functools.cache
def _program(name: str) -> str | None:
    """`name` on `PATH`, looked up once (each look is several `stat` calls, each giving up the GIL)."""
    return shutil.which(name)


def _filled(folder: str) -> int:
    """The bytes in use on the file system holding `folder` (0 if it cannot be read)."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return 0
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize


def _du(du: str, folders: list[str]) -> tuple[dict[str, int], bool]:
    """`du`'s total for each folder (a missing one left out), and whether it read everything."""
    try:
        done = subprocess.run(
            [du, '-s', '-x', '-B1', '-0', '--', *folders],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=_MEASURE_TIMEOUT,
            check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {}, False
    sizes: dict[str, int] = {}
    for record in done.stdout.split(b'\0'):
        size, _, path = record.partition(b'\t')
        with contextlib.suppress(ValueError):
            sizes[os.fsdecode(path)] = int(size)
    return sizes, done.returncode == 0


def _quiet(*argv: str) -> None:
    quiet = subprocess.DEVNULL
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run(argv, stdin=quiet, stdout=quiet, stderr=quiet, check=False, timeout=_MEASURE_TIMEOUT)


def _walk_bytes(folder: str) -> int:
    """What `du` counts, walked in Python (by path: a tree deeper than the longest path is counted only so far)."""
    total = 0
    pending = [folder]
    while pending:
        try:
            with os.scandir(pending.pop()) as scan:
                for entry in scan:
                    with contextlib.suppress(OSError):
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                        total += entry.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            continue
    return total
