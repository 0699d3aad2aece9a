"""Whether bubblewrap can run here (the sandbox tests need the real thing), and what a sandbox left running."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def bwrap_problem() -> str | None:
    """Why bubblewrap cannot start here, or `None` if it can."""
    if shutil.which('bwrap') is None:
        return 'bwrap is not installed'
    probe = subprocess.run(
        ['bwrap', '--ro-bind', '/', '/', '--unshare-net', '--unshare-pid', '--', 'sh', '-c', 'exit 0'],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return None if probe.returncode == 0 else f'bwrap cannot start: {probe.stderr.strip()}'


BWRAP_PROBLEM = bwrap_problem()
needs_bwrap = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=BWRAP_PROBLEM or '')


def processes_of(uid: int) -> list[str]:
    """The command lines of the host's processes running as `uid`."""
    found: list[str] = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                if os.stat(f'/proc/{entry}').st_uid == uid:
                    found.append(Path(f'/proc/{entry}/cmdline').read_bytes().replace(b'\0', b' ').decode())
            except OSError:
                continue
    return found
