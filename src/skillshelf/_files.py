"""Opening untrusted files: the one rule `SKILL.md` and resource reads share."""

from __future__ import annotations

import os
import stat
from pathlib import Path

_O_NONBLOCK = getattr(os, 'O_NONBLOCK', 0)
"""Opening a FIFO without it blocks until a writer appears: a hang, not an error."""
_O_NOFOLLOW = getattr(os, 'O_NOFOLLOW', 0)
"""Callers pass a resolved path; a symlink appearing at it after their check is refused, not followed."""


class NotRegularFileError(OSError):
    """The path is a FIFO, a device, a directory or anything else that is not a regular file."""


def open_regular_file(target: Path) -> tuple[int, int]:
    """Open the already-resolved `target` read-only, without blocking and without following a symlink.

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
