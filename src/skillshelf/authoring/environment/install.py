"""The installers `skillshelf env` runs: `python -m venv` and pip for the virtual environment, npm for its Node
packages (`npm install --prefix <environment>/node`), apt-get for Debian packages (`--system`, as root).

Each run is one command; when it fails, pip's and npm's packages are tried one at a time, so the report names the
ones that could not be installed rather than failing them all. Installers read their own configuration as usual
(`PIP_INDEX_URL`, `PIP_FIND_LINKS`, an `.npmrc`), so a mirror or a local wheel folder works.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...scripts.environment import NODE_FOLDER, SkillEnvironment

__all__ = ('INSTALL_TIMEOUT', 'Step', 'apt_install', 'create_environment', 'npm_install', 'pip_install')

INSTALL_TIMEOUT = 1800.0
"""Seconds one installer's command may take (LibreOffice from apt takes minutes)."""
_ERROR_LINES = 6


@dataclass(frozen=True)
class Step:
    """One installer's run, and what came of it."""

    what: str
    """What it installs (`Python packages`)."""
    command: tuple[str, ...]
    """The command line it ran."""
    installed: tuple[str, ...] = ()
    """What it installed."""
    failed: tuple[str, ...] = ()
    """What it could not install."""
    error: str = ''
    """The last lines the installer printed when it failed."""


def create_environment(folder: Path) -> tuple[SkillEnvironment, Step | None]:
    """The environment at `folder`, made (with this Python's `venv`, pip included) if it is not there yet; the step
    that made it, or `None` when it was there."""
    if (folder / 'pyvenv.cfg').is_file():
        return SkillEnvironment.at(folder), None
    command = (_base_python(), '-m', 'venv', str(folder))
    step = _run('virtual environment', command, (str(folder),))
    if step.failed:
        raise OSError(f'could not make the virtual environment {folder}: {step.error}')
    return SkillEnvironment.at(folder), step


def pip_install(environment: SkillEnvironment, requirements: Sequence[str]) -> Step:
    """Install `requirements` in `environment` with its pip."""
    command = (environment.python, '-m', 'pip', 'install', '--disable-pip-version-check', '--quiet')
    return _each('Python packages', command, requirements)


def npm_install(environment: SkillEnvironment, packages: Sequence[str]) -> Step:
    """Install `packages` in `environment`'s Node folder with npm (missing npm fails them all)."""
    folder = os.path.join(environment.folder, NODE_FOLDER)
    npm = shutil.which('npm')
    command = ('npm', 'install', '--prefix', folder, '--no-audit', '--no-fund', '--prefer-offline')
    if npm is None:
        return Step('Node packages', command, failed=tuple(packages), error='npm is not installed')
    os.makedirs(folder, exist_ok=True)
    return _each('Node packages', (npm, *command[1:]), packages)


def apt_install(packages: Sequence[str]) -> Step:
    """Install the Debian `packages` with apt-get (its lists updated first), as root."""
    command = ('apt-get', 'install', '-y', '-q', '--no-install-recommends', *packages)
    if os.geteuid() != 0:
        return Step('Debian packages', command, failed=tuple(packages), error='--system installs as root only')
    environment = {**os.environ, 'DEBIAN_FRONTEND': 'noninteractive'}
    update = _run('Debian package lists', ('apt-get', 'update', '-q'), (), environment)
    if update.failed:
        return Step('Debian packages', command, failed=tuple(packages), error=update.error)
    return _run('Debian packages', command, tuple(packages), environment)


def _each(what: str, command: tuple[str, ...], names: Sequence[str]) -> Step:
    """`command` with all of `names`; if that fails, with each, to tell which cannot be installed."""
    if not names:
        return Step(what, command)
    together = _run(what, (*command, *names), tuple(names))
    if not together.failed or len(names) == 1:
        return together
    steps = [_run(what, (*command, name), (name,)) for name in names]
    return Step(
        what,
        together.command,
        tuple(name for step in steps for name in step.installed),
        tuple(name for step in steps for name in step.failed),
        '\n'.join(step.error for step in steps if step.error),
    )


def _run(what: str, command: tuple[str, ...], names: tuple[str, ...], env: dict[str, str] | None = None) -> Step:
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return Step(what, command, failed=names, error=str(error))
    if done.returncode == 0:
        return Step(what, command, installed=names)
    lines = [line for line in (done.stderr or done.stdout).strip().splitlines() if line.strip()]
    return Step(what, command, failed=names, error='\n'.join(lines[-_ERROR_LINES:]) or f'exit code {done.returncode}')


def _base_python() -> str:
    """This Python, outside any virtual environment it runs in (a venv made from a venv's python works, but names the
    outer one as its home only indirectly)."""
    base = os.path.join(sys.base_prefix, 'bin', f'python{sys.version_info[0]}.{sys.version_info[1]}')
    return base if os.path.isfile(base) else sys.executable
