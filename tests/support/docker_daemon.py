"""A Docker daemon for the tests that run skills in harness's `DockerSandbox`: the one the `docker` CLI already
reaches, or else a `dockerd` of the session's own (Debian's `docker.io`), started with no bridge network and no
iptables rules, its images kept under a cache folder (so a built image outlives the session), stopped at the end.

Starting one needs root and `dockerd`; where either is missing the tests are skipped with the reason, and where CI
installed it (`SKILLSHELF_REQUIRE_DOCKER`) they fail instead.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ('cache_folder', 'docker_host', 'docker_problem')

_START_TIMEOUT = 120.0
"""How long a starting daemon may take to answer (a first start makes its data folder)."""
_STOP_TIMEOUT = 60.0


def cache_folder() -> Path:
    """Where the test suite keeps what outlives a session (the daemon's images): `$SKILLSHELF_TEST_CACHE`, else
    `$XDG_CACHE_HOME/skillshelf-tests` (`~/.cache/skillshelf-tests`)."""
    configured = os.environ.get('SKILLSHELF_TEST_CACHE')
    if configured:
        return Path(configured)
    return Path(os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache') / 'skillshelf-tests'


def docker_problem(reason: str) -> None:
    """Skip the test for `reason`; fail it where Docker must work (`SKILLSHELF_REQUIRE_DOCKER`, set by CI)."""
    if os.environ.get('SKILLSHELF_REQUIRE_DOCKER'):
        pytest.fail(reason)
    pytest.skip(reason)


def _answers(host: str | None) -> bool:
    """Whether a daemon answers the `docker` CLI at `host` (`None`: wherever the environment points it)."""
    env = dict(os.environ)
    if host is not None:
        env['DOCKER_HOST'] = host
    try:
        done = subprocess.run(['docker', 'version'], capture_output=True, env=env, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@pytest.fixture(scope='session')
def docker_host() -> Iterator[str | None]:
    """A Docker daemon the `docker` CLI reaches for the session: `DOCKER_HOST` while it runs (`None` when the
    environment already reached one, which is then left alone)."""
    if shutil.which('docker') is None:
        docker_problem("no docker CLI (.ci/run installs Debian's docker.io)")
    if _answers(None):
        yield None
        return
    dockerd = shutil.which('dockerd')
    if dockerd is None:
        docker_problem('no Docker daemon answers and dockerd is not installed (.ci/run installs docker.io)')
    if os.geteuid() != 0:
        docker_problem('no Docker daemon answers, and starting one (dockerd) needs root')
    assert dockerd is not None
    data = cache_folder() / 'docker'
    data.mkdir(parents=True, exist_ok=True)
    # The socket's path must fit a sockaddr_un (108 bytes): a short temporary folder, not the cache.
    run = Path(tempfile.mkdtemp(prefix='skillshelf-dockerd-'))
    host = f'unix://{run}/docker.sock'
    log = (run / 'dockerd.log').open('wb')
    daemon = subprocess.Popen(
        [
            dockerd,
            '--bridge=none',  # no docker0: a container can have no network but its own loopback
            '--iptables=false',
            '--ip6tables=false',
            f'--data-root={data}',
            f'--exec-root={run}/exec',
            # beside the data root: a second daemon on it (a session killed before it could stop its daemon) refuses
            # to start while the first runs
            f'--pidfile={data}.pid',
            f'--host={host}',
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    previous = os.environ.get('DOCKER_HOST')
    try:
        deadline = time.monotonic() + _START_TIMEOUT
        while not _answers(host):
            if daemon.poll() is not None or time.monotonic() > deadline:
                output = (run / 'dockerd.log').read_text(errors='replace')[-2000:]
                docker_problem(f'dockerd did not start (exit code {daemon.poll()}): {output}')
            time.sleep(0.2)
        os.environ['DOCKER_HOST'] = host  # harness's DockerSandbox passes it on to the docker CLI
        yield host
    finally:
        if previous is None:
            os.environ.pop('DOCKER_HOST', None)
        else:
            os.environ['DOCKER_HOST'] = previous
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)  # dockerd stops its containers and its containerd
            try:
                daemon.wait(timeout=_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(daemon.pid, signal.SIGKILL)
                daemon.wait()
        log.close()
        shutil.rmtree(run, ignore_errors=True)
