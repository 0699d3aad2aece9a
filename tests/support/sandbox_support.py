"""Whether bubblewrap can run here: the sandbox tests need the real thing."""

from __future__ import annotations

import shutil
import subprocess

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
