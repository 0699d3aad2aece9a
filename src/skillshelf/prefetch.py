"""Many small files from a cold disk: several requests in flight instead of one after another.

Right after a boot, a deploy or a container start, the files of a large library are not in the operating
system's cache, and each `stat` or first read of a `SKILL.md` waits for the disk (0.1-0.5 ms here, against
a few microseconds once cached). Discovery visits the files one at a time, so it waits for each in turn.
Threads keep several requests in flight instead: a discovery of 20k skills with nothing cached takes 2.2 s
instead of 4.6 s.

Threads help only then. With the files cached, the same calls in threads take twice as long (each call
hands the GIL around), and a thread never gets the GIL back while the main thread parses. So a sample
of the files is timed first, and threads are used only if it was slow, and only while the main thread
waits for them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from .files import REFUSES_SYMLINKS, open_regular_file

__all__ = ('prefetch', 'stat_each', 'stat_or_none')

_T = TypeVar('_T')

_THREADS = 8
"""Requests in flight: on a virtual disk, 8 beat 4 and 16 (a cold 20k-skill discovery: 2.2 s against 2.6 and 2.4)."""
_CHUNK = 64
"""Files per thread task, so the pool's own work per file stays negligible."""
_MIN_FILES = 256
"""Fewer files than this are done in the caller's thread: a cold disk costs them a tenth of a second at most."""
_SAMPLE = 32
"""Files timed to tell a cold disk from cached files."""
_COLD_SECONDS_PER_FILE = 30e-6
"""Above this, the sampled calls waited for the disk: cached, a `stat` or a first read takes 3-10 µs."""


def stat_each(paths: Sequence[str]) -> list[os.stat_result | None]:
    """`os.stat` of each path, `None` where it fails; in threads if the files are not cached."""
    if _cold(stat_or_none, paths):
        return _in_threads(stat_or_none, paths)
    return [stat_or_none(path) for path in paths]


def prefetch(paths: Sequence[str]) -> None:
    """Bring the start of each file into the operating system's cache, if it is not there, before a loop reads them.

    Only regular files are touched, without following a symlink (see `open_regular_file`); errors are
    left for the reader to report. Where an open cannot refuse a symlink (Windows), nothing is read ahead:
    there, discovery checks where a `SKILL.md` link leads before it opens the file.
    """
    if REFUSES_SYMLINKS and _cold(_touch, paths):
        _in_threads(_touch, paths)


def _cold(call: Callable[[str], object], paths: Sequence[str]) -> bool:
    """Whether `call` on a sample spread over `paths` waited for the disk."""
    if len(paths) < _MIN_FILES:
        return False
    sample = paths[:: max(1, len(paths) // _SAMPLE)][:_SAMPLE]
    started = time.perf_counter()
    for path in sample:
        call(path)
    return time.perf_counter() - started > _COLD_SECONDS_PER_FILE * len(sample)


def _in_threads(call: Callable[[str], _T], paths: Sequence[str]) -> list[_T]:
    def each(chunk: Sequence[str]) -> list[_T]:
        return [call(path) for path in chunk]

    chunks = [paths[start : start + _CHUNK] for start in range(0, len(paths), _CHUNK)]
    try:
        with ThreadPoolExecutor(_THREADS, thread_name_prefix='skillshelf-prefetch') as pool:
            return [result for results in pool.map(each, chunks) for result in results]
    except RuntimeError:  # no threads to be had: a WebAssembly build, or an interpreter shutting down
        return each(paths)


def stat_or_none(path: str | Path) -> os.stat_result | None:
    """`os.stat(path)`, or `None` if there is nothing to look at there."""
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _touch(path: str) -> None:
    """Read one byte, which makes the kernel read ahead the first pages of the file."""
    try:
        descriptor, _ = open_regular_file(path)
    except (OSError, ValueError):
        return
    try:
        os.read(descriptor, 1)
    except OSError:
        pass
    finally:
        os.close(descriptor)
