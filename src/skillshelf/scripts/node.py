"""Where Node finds the packages installed with `npm install -g`, for skills' scripts that `require` them.

Node does not look in npm's global folder by itself: a script that does `require('pptxgenjs')` after
`npm install -g pptxgenjs` fails with "Cannot find module" unless `NODE_PATH` names that folder (`npm root -g`).
Skills' node and shell scripts get it set where the workspace shows that folder (a `LocalWorkspace`, a sandbox on
this machine; see `node_path_for`), and every command in `SkillSandbox` has it (the sandbox shows the folder
read-only). With a skills' environment (`environment`), its Node packages come first.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import subprocess

from pydantic_ai.workspaces import Workspace

from .environment import SkillEnvironment

__all__ = ('global_node_modules', 'node_path_for')

_NPM_TIMEOUT = 30.0


@functools.cache
def global_node_modules() -> str | None:
    """The folder of npm's global packages (`npm root -g`), asked once; `None` without npm or the folder.

    Asked of npm rather than worked out, since its prefix may be configured (`npm config set prefix`, an `.npmrc`).
    """
    npm = shutil.which('npm')
    if npm is None:
        return None
    try:
        completed = subprocess.run(
            [npm, 'root', '-g'], capture_output=True, text=True, timeout=_NPM_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    folder = completed.stdout.strip()
    if completed.returncode != 0 or not os.path.isabs(folder) or not os.path.isdir(folder):
        return None
    return folder


async def node_path_for(workspace: Workspace, environment: SkillEnvironment | None = None) -> str | None:
    """`NODE_PATH` for a skill's script in `workspace`: the skills' `environment`'s Node packages and this machine's
    global npm folder, those the workspace sees (a workspace elsewhere has its own, or none); `None` for neither."""
    folders = [environment.node_modules] if environment is not None else []
    folder = await asyncio.to_thread(global_node_modules)
    folders += [folder] if folder is not None else []
    seen = [folder for folder in folders if await workspace.exists(folder)]
    return os.pathsep.join(seen) if seen else None
