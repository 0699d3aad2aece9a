"""Whether bubblewrap can run here (the sandbox tests need the real thing), what a sandbox left running, and a second
Unix user of the host (for the tests of what another local user can plant)."""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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


def processes_naming(marker: str) -> list[int]:
    """The ids of the host's processes with `marker` in their command line (those of every PID namespace: the host
    sees them all), to find one test's own processes whatever user runs them."""
    found: list[int] = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                if marker.encode() in Path(f'/proc/{entry}/cmdline').read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


@dataclass(frozen=True)
class HostUser:
    """A Unix user of the host, made for one test."""

    name: str
    uid: int
    gid: int

    def run(self, script: str, cwd: Path | str = '/') -> None:
        """Run the shell `script` as this user (no other group), failing the test if it fails."""
        subprocess.run(
            ['/bin/sh', '-ec', script],
            user=self.uid, group=self.gid, extra_groups=[], cwd=cwd, check=True, capture_output=True,
        )  # fmt: skip


def python_for_nobody(what: str) -> str:
    """The system `python3`, which the user `nobody` may run, for a test that `what` (`runs the agent as another
    user`); the test is skipped unless it runs as root and there is one."""
    if os.geteuid() != 0:
        pytest.skip(f'{what}, which needs root')
    python = shutil.which('python3', path='/usr/bin')
    if python is None:
        pytest.skip('no system python3 that `nobody` may run')
    return python


def second_user_problem() -> str | None:
    """Why a second Unix user cannot be made here, or `None` if it can."""
    if os.geteuid() != 0:
        return 'making a second Unix user needs root'
    if shutil.which('useradd') is None or shutil.which('userdel') is None:
        return 'useradd/userdel are not installed'
    return None


@contextmanager
def second_user() -> Iterator[HostUser]:
    """A new system user of the host, with no home, removed afterwards (with what it owns in the process table)."""
    name = f'ss-intruder-{secrets.token_hex(3)}'
    subprocess.run(
        ['useradd', '--system', '--no-create-home', '--user-group', '--shell', '/usr/sbin/nologin', name],
        check=True, capture_output=True,
    )  # fmt: skip
    try:
        record = pwd.getpwnam(name)
        yield HostUser(name, record.pw_uid, record.pw_gid)
    finally:
        subprocess.run(['userdel', name], check=False, capture_output=True)


@pytest.fixture
def intruder() -> Iterator[HostUser]:
    """A second Unix user of the host for the test (skipped where one cannot be made)."""
    if (problem := second_user_problem()) is not None:
        pytest.skip(problem)
    with second_user() as user:
        yield user
