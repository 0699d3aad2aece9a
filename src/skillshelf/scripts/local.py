"""`LocalRunner`: scripts run as plain subprocesses of the agent, for setups that trust their skills."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ScriptError
from ..files import FolderChangedError
from .process import run_bounded
from .runner import ScriptLimits, ScriptRequest, ScriptResult
from .workdir import left_files, work_directory


@dataclass
class LocalRunner:
    """Run scripts directly, with the agent's user, environment, file system and network.

    No sandbox: choose it only for skills you trust as much as your own code. Each run still gets a fresh work
    directory as its current directory, a time limit and an output limit (`limits`; the process, memory and
    file-size limits apply only to `BubblewrapRunner`).
    """

    limits: ScriptLimits = field(default_factory=ScriptLimits)
    """Time and output limits of each run."""

    def skill_dir(self, folder: Path) -> str:
        """The skill folder's own path."""
        return str(folder)

    async def run(self, request: ScriptRequest) -> ScriptResult:
        """Run the script from the real skill folder, in a fresh work directory."""
        try:
            request.folder.check()
        except FolderChangedError:
            raise ScriptError('the skill folder changed after the library was read; load the skill again') from None
        script = os.path.join(request.folder.path, *request.script.parts)
        with work_directory(request.files) as workdir:
            finished = await run_bounded(
                [*request.interpreter, script, *request.args],
                cwd=str(workdir),
                env=None,
                timeout=self.limits.timeout,
                max_output_bytes=self.limits.max_output_bytes,
            )
            files = left_files(workdir)
        return ScriptResult(
            finished.exit_code, finished.output.decode('utf-8', 'replace'), finished.output_bytes, files
        )
