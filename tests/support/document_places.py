"""The workspaces the document workflow tests run in (`tests/tools/test_document_workflows.py`,
`test_office_workflows.py`), each set up as an application would; the `place` fixture (`tests/tools/conftest.py`)
gives one per test.

- `local`: pydantic-ai's `LocalWorkspace` (no sandbox), with skillshelf's file tools (`Skills(file_tools=True)`);
- `sandbox`: skillshelf's `SkillSandbox` (bubblewrap, one folder per conversation), with skillshelf's file tools;
- `harness`: pydantic-ai-harness's `BubblewrapSandbox(LocalWorkspace(...))`, with harness `FileSystem` and `Shell` as
  the model's tools. Harness pins `pydantic-ai-slim` (0.62: 2.62.0), so it cannot be installed beside the main test
  environment's pydantic-ai; there this variant is skipped, and CI runs these modules again in `.venv-harness`,
  where it runs (`.ci/run`);
- `docker`: harness's `DockerSandbox` with harness `FileSystem` and `Shell`: each conversation in a container of an
  image built here from Debian packages (`document_image`), with no network, on a daemon the session starts if none
  answers (`docker_daemon`); skipped like `harness`, and where Docker cannot run unless CI requires it
  (`SKILLSHELF_REQUIRE_DOCKER`).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.run import AgentRunResult
from pydantic_ai.workspaces import Workspace, WorkspaceBackend

from skillshelf import Skills, SkillSandbox
from skillshelf.sandbox import SandboxWorkspace
from skillshelf.scripts import ScriptLimits

from docker_containers import Containers
from scripted_model import Script

SKILLS = Path(__file__).resolve().parents[1] / 'tools' / 'document_skills'
"""The tests' own document skills (written for these tests; nothing of a third-party skill is copied)."""
CONVERSATION = 'a-users-conversation'
HARNESS_MISSING = 'pydantic-ai-harness is not installed here (CI runs this module in .venv-harness, where it is)'


def harness() -> Any:
    """pydantic-ai-harness, or a skip where it is not installed; with `SKILLSHELF_REQUIRE_HARNESS` set (CI's second
    environment), a missing harness fails instead."""
    if os.environ.get('SKILLSHELF_REQUIRE_HARNESS'):
        return importlib.import_module('pydantic_ai_harness')
    return pytest.importorskip('pydantic_ai_harness', reason=HARNESS_MISSING)


@dataclass
class Place:
    """One kind of workspace, as an application sets it up: the agent's capabilities for it, how the application puts
    a user's file in before the first run, and where the files are on the host afterwards."""

    kind: str
    capabilities: list[AbstractCapability[Any]]
    skill_file_tools: bool
    """Whether skillshelf gives the model its file tools (`Skills(file_tools=True)`); else the harness's do."""
    folder: Path | None = None
    """The host folder of a local workspace (also the one harness's sandbox binds)."""
    sandbox: SkillSandbox | None = None
    containers: Containers | None = None
    """The test's containers, for `docker`."""
    backend: WorkspaceBackend | None = field(default=None, init=False)

    def agent(self, model: Script, limits: ScriptLimits | None = None) -> Agent[None, str]:
        """An agent of `model` with the document skills, their scripts run within `limits`."""
        # On the host nothing isolates a script: the application trusts these skills' scripts like its own code (a
        # sandbox runs them unasked anyway).
        trusted: dict[str, Any] = (
            {'script_approval': False, 'preapproved_programs': ['python3']} if self.kind == 'local' else {}
        )
        skills = Skills(
            SKILLS, scripts=True, file_tools=self.skill_file_tools, script_limits=limits or ScriptLimits(), **trusted
        )
        return Agent(model.model(), capabilities=[*self.capabilities, skills])

    def check_file_tools(self, model: Script) -> None:
        """The model was given the file tools this workspace is meant to have: skillshelf's or harness's."""
        tools = model.requests[0].tools
        assert ('list_files' in tools, 'list_directory' in tools) == (self.skill_file_tools, not self.skill_file_tools)

    def put(self, path: str, data: bytes) -> dict[str, Any]:
        """Put a user's file in the workspace before the conversation's first run; that run's extra arguments."""
        if self.folder is not None:
            (self.folder / path).write_bytes(data)
            return {}
        if self.containers is not None:
            if self.backend is None:  # the conversation's container, made before its first run
                container: WorkspaceBackend = self.containers.backend()
                self.backend = container
            anyio.run(Workspace(self.backend).write_bytes, path, data)
            return {'workspace': self.backend}
        assert self.sandbox is not None
        if self.backend is None:  # the conversation's workspace, made before its first run, for it alone
            self.backend = SandboxWorkspace(self.sandbox, conversation=CONVERSATION)
        anyio.run(Workspace(self.backend).write_bytes, path, data)
        return {'workspace': self.backend, 'conversation_id': CONVERSATION}

    def host_folder(self, result: AgentRunResult[Any]) -> Path:
        """Where the run's files are on this machine."""
        if self.folder is not None:
            return self.folder
        ref = result.response.workspace_ref
        assert ref is not None
        if self.containers is not None:
            return self.containers.copy_out(ref.id)
        assert self.sandbox is not None
        folder = self.sandbox.folder(ref)
        assert folder is not None
        return folder
