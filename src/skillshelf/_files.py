"""Opening untrusted files: the one rule `SKILL.md` and resource reads share."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

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
