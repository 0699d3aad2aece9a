"""Files: opening untrusted ones (the one rule `SKILL.md` and resource reads share), and writing cache files."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

_O_NONBLOCK = getattr(os, 'O_NONBLOCK', 0)
"""Opening a FIFO without it blocks until a writer appears: a hang, not an error."""
_O_NOFOLLOW = getattr(os, 'O_NOFOLLOW', 0)
"""A symlink at the opened path is refused, not followed: one swapped in after a caller's check cannot redirect the read."""
REFUSES_SYMLINKS = _O_NOFOLLOW != 0
"""Whether `open_regular_file` refuses a symlink (not on Windows, which has no `O_NOFOLLOW`)."""
SYMLINK_REFUSED_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK})
"""What `open` reports for a refused symlink: `ELOOP` (Linux, macOS), `EMLINK` (FreeBSD)."""


class NotRegularFileError(OSError):
    """The path is a FIFO, a device, a directory or anything else that is not a regular file."""


def open_regular_file(target: str | Path) -> tuple[int, int]:
    """Open `target` read-only, without blocking and without following a symlink at its last component.

    Returns:
        The open descriptor (the caller closes it) and the file's size.

    Raises:
        NotRegularFileError: `target` is not a regular file (nothing is left open).
        OSError: `target` cannot be opened (missing, a symlink, unreadable, ...).
    """
    descriptor = os.open(target, os.O_RDONLY | _O_NONBLOCK | _O_NOFOLLOW)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(f'{target} is not a regular file')
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor, info.st_size


def write_atomically(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Create or replace `path` with what `write` writes to the file it is given, so that a reader never sees half
    a file. A cache is only a cache: if the file cannot be written, nothing is left behind and nothing is raised."""
    temporary: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix='.tmp', delete=False) as file:
            temporary = file.name
            write(file)
        os.replace(temporary, path)
    except OSError:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
