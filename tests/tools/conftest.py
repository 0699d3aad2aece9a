"""Fixtures of the workspace tool tests."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace

from skillshelf import SkillSandbox, SkillWarning

from docker_containers import Containers
from docker_daemon import docker_host  # noqa: F401  (the session's daemon, started when none answers)
from document_image import document_image  # noqa: F401  (built once, kept in the daemon's cache)
from document_places import Place, harness
from sandbox_support import BWRAP_PROBLEM


@pytest.fixture(params=['local', 'sandbox'])
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> AbstractCapability[Any]:
    """The run's workspace: pydantic-ai's `LocalWorkspace`, or skillshelf's bubblewrap `SkillSandbox`."""
    if request.param == 'local':
        (tmp_path / 'work').mkdir()
        return LocalWorkspace(tmp_path / 'work')
    if BWRAP_PROBLEM is not None:
        pytest.skip(BWRAP_PROBLEM)
    return SkillSandbox(tmp_path / 'workspaces')


PYTHON3_FALLBACK = 'run_skill_script runs Python scripts with the `python3` of the workspace'
"""The developer's warning that a container's scripts run on its own `python3`: the image's, on purpose here."""


@pytest.fixture(params=['local', 'sandbox', 'harness', 'docker'])
def place(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Place]:
    """One conversation's workspace, set up as an application would (see `document_places`).

    Programs that keep settings in `HOME` (LibreOffice's user profile) get a home of the test's own: a local
    workspace passes this process's `HOME` on, and harness's sandbox shows the host's home read-only (a container has
    its own). A test module setting `HARNESS_NETWORK = True` gets harness's sandbox with `network=True` (see
    `test_office_workflows`); a container never has a network.
    """
    folder = tmp_path / 'work'
    home = tmp_path / 'home'
    home.mkdir()
    if request.param == 'local':
        folder.mkdir()
        monkeypatch.setenv('HOME', str(home))
        yield Place('local', [LocalWorkspace(folder)], skill_file_tools=True, folder=folder)
        return
    if request.param == 'docker':
        package = harness()
        image = request.getfixturevalue('document_image')
        containers = Containers(package, image, copies=tmp_path / 'copied')
        capabilities = [containers.capability(), package.FileSystem(), package.Shell()]
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings('ignore', PYTHON3_FALLBACK, SkillWarning)
                yield Place('docker', capabilities, skill_file_tools=False, containers=containers)
            assert containers.network_modes() <= {'none'}, 'every container of the test ran with --network none'
        finally:
            containers.remove()
        return
    if BWRAP_PROBLEM is not None:
        pytest.skip(BWRAP_PROBLEM)
    if request.param == 'sandbox':
        sandbox = SkillSandbox(tmp_path / 'workspaces')
        yield Place('sandbox', [sandbox], skill_file_tools=True, sandbox=sandbox)
        return
    package = harness()
    folder.mkdir()
    # Scripts run on this interpreter where the sandbox shows it; harness's sandbox hides /tmp, so an environment
    # there (a checkout under /tmp) is bound read-only, as a user gives any path the sandbox should see.
    environment = [arg for prefix in sorted({sys.prefix, sys.base_prefix}) for arg in ('--ro-bind', prefix, prefix)]
    writable_home = ['--bind', str(home), str(home), '--setenv', 'HOME', str(home)]
    network = bool(getattr(request.module, 'HARNESS_NETWORK', False))
    sandbox = package.BubblewrapSandbox(
        LocalWorkspace(folder), network=network, bwrap_args=[*environment, *writable_home]
    )
    yield Place('harness', [sandbox, package.FileSystem(), package.Shell()], skill_file_tools=False, folder=folder)
