"""The skills' environment: one folder holding a Python virtual environment with the packages the skills' scripts
need and, under `node/`, the Node packages they load (`skillshelf env DIR --venv FOLDER` makes it).

`Skills(environment=FOLDER)` points every workspace at it: scripts run on its interpreter, and Node finds its
packages (`NODE_PATH`), wherever the workspace shows the folder (a `LocalWorkspace`, the `SkillSandbox` that `Skills`
supplies, a sandbox told to mount it). A workspace that does not show it keeps its own, and the developer is told.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai.workspaces import Workspace

from ..errors import SkillError

__all__ = ('NODE_FOLDER', 'SkillEnvironment', 'node_modules_beside', 'shell_setup')

NODE_FOLDER = 'node'
"""The environment's folder for Node packages (`npm install --prefix <environment>/node`); they land in its
`node_modules`, which goes on `NODE_PATH`."""


@dataclass(frozen=True)
class SkillEnvironment:
    """A skills' environment on this machine (see the module docstring)."""

    folder: str
    """Its folder, absolute, links resolved (a virtual environment: `bin/python`, `pyvenv.cfg`)."""

    @property
    def python(self) -> str:
        """The interpreter scripts run on."""
        return os.path.join(self.folder, 'bin', 'python')

    @property
    def node_modules(self) -> str:
        """Where its Node packages are, for `NODE_PATH`."""
        return os.path.join(self.folder, NODE_FOLDER, 'node_modules')

    @classmethod
    def at(cls, path: str | os.PathLike[str]) -> SkillEnvironment:
        """The environment at `path`: its folder, or its interpreter (`<folder>/bin/python`).

        Raises:
            SkillError: `path` is not a virtual environment (no `bin/python` beside a `pyvenv.cfg`).
        """
        given = Path(os.fspath(path)).expanduser().absolute()
        folder = given.parent.parent if given.is_file() and given.parent.name == 'bin' else given
        if not (folder / 'bin' / 'python').is_file() or not (folder / 'pyvenv.cfg').is_file():
            raise SkillError(
                f'the skills environment {os.fspath(path)!r} is not a virtual environment (no bin/python and '
                'pyvenv.cfg there): make it with `skillshelf env SKILLS_DIR --venv FOLDER`, then name that folder'
            )
        return cls(os.path.realpath(folder))  # as sandboxes mount it (`sandbox.bubblewrap.host_path`)


def node_modules_beside(python: str) -> str | None:
    """The Node packages of the environment the interpreter `python` belongs to (`<folder>/node/node_modules`, see
    `SkillEnvironment`), or `None` when it has none."""
    folder = os.path.dirname(os.path.dirname(python))
    modules = os.path.join(folder, NODE_FOLDER, 'node_modules')
    return modules if os.path.isfile(os.path.join(folder, 'pyvenv.cfg')) and os.path.isdir(modules) else None


async def shell_setup(workspace: Workspace, environment: SkillEnvironment | None) -> str:
    """What a shell command line in `workspace` is prefixed with so that `python3`, `pip` and `node` find the skills'
    `environment` (its `bin` first on `PATH`, its Node packages first on `NODE_PATH`); `''` without one, where the
    workspace already runs on it (the sandbox `Skills` supplies), or where it does not show it."""
    if environment is None or getattr(workspace.backend, 'python', None) == environment.python:
        return ''
    if not await workspace.exists(environment.python):
        return ''
    bin_folder = shlex.quote(os.path.dirname(environment.python))
    modules = shlex.quote(environment.node_modules)
    return f'export PATH={bin_folder}:"$PATH" NODE_PATH={modules}"${{NODE_PATH:+:$NODE_PATH}}"\n'
