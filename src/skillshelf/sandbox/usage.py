"""How much a workspace folder holds on the host, in bytes and in files, and the watch that stops a command writing
past either limit.

The measure is `du`, once for the disk blocks in use and once for the files (`--inodes`: files, folders and links,
a file with several links counting once in each). It walks by file descriptor, so a tree deeper than the longest
path the system takes, where a script could otherwise hide data from the count, is measured whole; and it is about
twice as fast as a walk in Python (200,000 files: 0.7 s). One `du` measures every folder due at once, so two hundred
commands watched together cost two processes per round, not four hundred. Every file is counted because every file
has a name: the seccomp filter refuses unnamed ones (`O_TMPFILE`, see `seccomp`).

No file system this library can count on gives a folder a hard quota, so the limits are held by watching. The watch
runs in one thread of its own, not on the event loop: an agent busy with two hundred runs delays its loop by
hundreds of milliseconds, in which a fast writer writes hundreds of MiB. Every `WATCH_INTERVAL` seconds the thread
reads the file system's use (one `statvfs` call per command) and measures a command's folder again once the file
system has filled by half the room that folder had left, in bytes or in files, or `MEASURE_EVERY` seconds have
passed (space freed elsewhere can hide growth no longer than that); a command over a limit is killed there and then,
with its process group. What it writes meanwhile is the overshoot: tens of MiB, or some thousands of empty files, on
an idle machine. The kernel holds the rest: no one file may grow past the room left when the command starts (its
file-size limit), and `fallocate`, which takes space without writing it, is refused (see `seccomp`).
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
from dataclasses import dataclass

from .errors import WorkspaceFullError
from .limits import SandboxLimits

__all__ = ('MEASURE_EVERY', 'WATCH_INTERVAL', 'DiskWatch', 'Usage', 'check_room', 'measure_folders')

WATCH_INTERVAL = 0.02
"""Seconds between two looks at the file system's use while a command runs."""
MEASURE_EVERY = 1.0
"""Seconds after which a running command's workspace is measured again, whatever the file system's use says."""
_MEASURE_TIMEOUT = 60.0
"""Seconds one `du` may take (a folder of millions of files); past it, the folders count as unmeasured."""


@dataclass(frozen=True)
class Usage:
    """What a folder takes on disk."""

    size: int = 0
    """Bytes of disk blocks."""
    files: int = 0
    """Files, folders and links (inodes)."""


async def check_room(folder: str, limits: SandboxLimits, adding: int = 0) -> Usage:
    """What `folder` holds (measured in a worker thread), refused with `WorkspaceFullError` if it is over a limit, or
    would be with `adding` bytes more."""
    used = (await asyncio.to_thread(measure_folders, [folder])).get(folder, Usage())
    if used.size + adding > limits.max_workspace_bytes:
        raise WorkspaceFullError(
            f'the workspace holds {used.size:,} bytes; with {adding:,} more it would pass its '
            f'{limits.max_workspace_bytes:,}-byte limit: remove files before running or writing anything more',
            limit=limits.max_workspace_bytes,
            ran=False,
        )
    if used.files > limits.max_workspace_files:
        raise WorkspaceFullError(
            f'the workspace holds {used.files:,} files and folders, past its limit of {limits.max_workspace_files:,}: '
            'remove files before running or writing anything more',
            limit=limits.max_workspace_files,
            files=True,
            ran=False,
        )
    return used


def measure_folders(folders: list[str]) -> dict[str, Usage]:
    """What each of `folders` takes on disk (a missing one is left out); blocks, so call it from a thread."""
    if not folders:
        return {}
    du = _program('du')
    if du is None:  # not a GNU/Linux host
        return {folder: _walk(folder) for folder in folders}
    (sizes, files), complete = _du_both(du, folders)
    if not complete and os.geteuid() != 0 and (chmod := _program('chmod')) is not None:
        # A folder its owner may not read (a sandbox runs as the agent's user and may chmod its own files) hides
        # what is under it: the owner opens it up again, and the count is taken again.
        _quiet(chmod, '-R', 'u+rwX', '--', *folders)
        (sizes, files), _ = _du_both(du, folders)
    return {folder: Usage(size, files.get(folder, 0)) for folder, size in sizes.items()}


class DiskWatch:
    """One command's workspace, watched from the watch thread while the command runs (see the module docstring):
    `start` it with the command's process group, `close` it when the command has ended."""

    def __init__(self, folder: str, limits: SandboxLimits, used: Usage) -> None:
        """`used`: what the folder held when the command started."""
        self.folder = folder
        self.limit = limits.max_workspace_bytes
        self.file_limit = limits.max_workspace_files
        self.used = used
        self.reason: str | None = None
        """Why the watch killed the command (it grew past a limit), once it has."""
        self.full_of_files = False
        """Whether the limit it passed (see `judge`) is the number of files, not the bytes."""
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
        """Measure now (after the command): the reason it is over a limit, if it is."""
        measured = await asyncio.to_thread(measure_folders, [self.folder])
        self.used = measured.get(self.folder, Usage())
        return self.judge()

    def full(
        self, message: str, *, exit_code: int | None = None, stdout: str = '', stderr: str = ''
    ) -> WorkspaceFullError:
        """The error saying the command filled the workspace past the limit `judge` found (`message` for the
        developer), with how the command ended."""
        limit = self.file_limit if self.full_of_files else self.limit
        return WorkspaceFullError(
            message, limit=limit, files=self.full_of_files, exit_code=exit_code, stdout=stdout, stderr=stderr
        )

    def is_due(self, filled_by_root: dict[str, tuple[int, int]]) -> bool:
        """Whether the folder should be measured now (the watch thread asks, with the file systems' use this round
        by sandbox root)."""
        root = os.path.dirname(os.path.dirname(os.path.dirname(self.folder)))
        filled = filled_by_root.get(root)
        if filled is None:
            filled = filled_by_root[root] = _filled(self.folder)
        grown = (filled[0] - self._filled[0], filled[1] - self._filled[1])
        room = ((self.limit - self.used.size) / 2, (self.file_limit - self.used.files) / 2)
        if grown[0] < room[0] and grown[1] < room[1] and time.monotonic() - self._measured < MEASURE_EVERY:
            return False
        self._filled = filled
        return True

    def judge(self) -> str | None:
        """The reason to stop, if `used` is over a limit (and the time of this measure noted)."""
        self._measured = time.monotonic()
        if self.used.size > self.limit:
            self.full_of_files = False
            return f'the workspace grew past its {self.limit:,}-byte limit'
        if self.used.files > self.file_limit:
            self.full_of_files = True
            return f'the workspace passed its limit of {self.file_limit:,} files and folders'
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
            filled: dict[str, tuple[int, int]] = {}  # one `statvfs` per sandbox root a round: each gives up the GIL
            due = [watch for watch in watches if watch.reason is None and watch.is_due(filled)]
            if not due:
                continue
            try:
                measured = measure_folders(sorted({watch.folder for watch in due}))
            except (OSError, subprocess.SubprocessError):
                continue
            for watch in due:
                watch.used = measured.get(watch.folder, watch.used)
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


def _filled(folder: str) -> tuple[int, int]:
    """The bytes and the files in use on the file system holding `folder` (0 if it cannot be read; files are 0 on a
    file system that does not count them, such as btrfs: there `MEASURE_EVERY` holds the file limit)."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return 0, 0
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize, stats.f_files - stats.f_ffree


def _du_both(du: str, folders: list[str]) -> tuple[tuple[dict[str, int], dict[str, int]], bool]:
    """`du`'s bytes and files for each folder, and whether it read everything both times."""
    sizes, sizes_complete = _du(du, folders, '-B1')
    files, files_complete = _du(du, folders, '--inodes')
    return (sizes, files), sizes_complete and files_complete


def _du(du: str, folders: list[str], unit: str) -> tuple[dict[str, int], bool]:
    """`du`'s total in `unit` for each folder (a missing one left out), and whether it read everything."""
    try:
        done = subprocess.run(
            [du, '-s', '-x', unit, '-0', '--', *folders],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=_MEASURE_TIMEOUT,
            check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {}, False
    totals: dict[str, int] = {}
    for record in done.stdout.split(b'\0'):
        total, _, path = record.partition(b'\t')
        with contextlib.suppress(ValueError):
            totals[os.fsdecode(path)] = int(total)
    return totals, done.returncode == 0


def _quiet(*argv: str) -> None:
    quiet = subprocess.DEVNULL
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run(argv, stdin=quiet, stdout=quiet, stderr=quiet, check=False, timeout=_MEASURE_TIMEOUT)


def _walk(folder: str) -> Usage:
    """What `du` counts, walked in Python (by path: a tree deeper than the longest path is counted only so far; a
    file with several links counts each time)."""
    size = files = 0
    pending = [folder]
    while pending:
        try:
            with os.scandir(pending.pop()) as scan:
                for entry in scan:
                    with contextlib.suppress(OSError):
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                        size += entry.stat(follow_symlinks=False).st_blocks * 512
                        files += 1
        except OSError:
            continue
    return Usage(size, files + 1)
