"""skillshelf's sandboxed workspace against pydantic-ai's own backend contract (`WorkspaceBackendSuite`).

Every command runs in its own PID namespace, so its time limit holds for everything it started (the model is told
every process was killed, and that is true). Three rules of the suite assume processes outlive their command or
share one process table; here they are replaced by checks of what the sandbox does instead: a background child
ends with its command (the command still returns at once), a detached process too, and a cancelled command leaves
no process behind, seen from the host. A dev server a skill needs is started and used in one command.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest
from pydantic_ai.workspaces import SupportsCommands, Workspace, WorkspaceBackend, WorkspaceRef
from pydantic_ai.workspaces.conformance import WorkspaceBackendSuite

from skillshelf.sandbox.sandbox import SandboxWorkspace, SkillSandbox

from sandbox_support import needs_bwrap, processes_of


@pytest.fixture
def anyio_backend() -> str:
    return 'asyncio'


@needs_bwrap
class TestSandboxWorkspace(WorkspaceBackendSuite):
    @pytest.fixture
    def sandbox(self, tmp_path: Path) -> SkillSandbox:
        return SkillSandbox(tmp_path / 'workspaces')

    @pytest.fixture
    def backend(self, sandbox: SkillSandbox) -> WorkspaceBackend:
        return SandboxWorkspace(sandbox, conversation='conformance')

    @pytest.fixture
    def fresh_backend(self, sandbox: SkillSandbox) -> Callable[[], WorkspaceBackend]:
        return lambda: SandboxWorkspace(sandbox, conversation='conformance')

    @pytest.fixture
    def attach_backend(self, sandbox: SkillSandbox) -> Callable[[WorkspaceRef], WorkspaceBackend]:
        return lambda ref: SandboxWorkspace(sandbox, ref, conversation='conformance')

    @pytest.fixture
    def destroy_environment(self, sandbox: SkillSandbox) -> Callable[[WorkspaceBackend], Awaitable[None]]:
        async def destroy(backend: WorkspaceBackend) -> None:
            assert backend.ref is not None
            assert await sandbox.delete(backend.ref)

        return destroy

    async def test_background_child_does_not_hold_up_completed_command(self, backend: WorkspaceBackend) -> None:  # type: ignore[override]
        # The suite's rule, plus what the sandbox does instead of letting the child run on: it ends with the command.
        assert isinstance(backend, SupportsCommands)
        with anyio.fail_after(20):
            result = await backend.run(['sh', '-c', '(sleep 5; printf late > finished) & printf done'])
        assert (result.exit_code, result.stdout) == (0, 'done')
        await anyio.sleep(6)
        assert not await Workspace(backend).exists('finished')

    async def test_a_backend_attached_by_ref_reaches_a_detached_process(self, backend: WorkspaceBackend) -> None:  # type: ignore[override]
        assert isinstance(backend, SupportsCommands)
        result = await backend.run(['sh', '-c', 'setsid sh -c "sleep 3; printf late > detached" & printf started'])
        assert result.stdout == 'started'
        await anyio.sleep(4)
        assert not await Workspace(backend).exists('detached')

    async def test_cancellation_stops_foreground_work(self, backend: WorkspaceBackend) -> None:  # type: ignore[override]
        if os.geteuid() != 0:
            pytest.skip('seen from the host through the workspace user, which only a root agent gives a workspace')
        assert isinstance(backend, SandboxWorkspace)
        workspace = Workspace(backend)

        async def command() -> None:
            await backend.run(['sh', '-c', 'printf ready > started; exec sleep 3600'])

        uid = int((await backend.run(['id', '-u'])).stdout)
        async with anyio.create_task_group() as group:
            group.start_soon(command)
            with anyio.fail_after(30):
                while not await workspace.exists('started'):
                    await anyio.sleep(0.05)
            assert any('sleep 3600' in line for line in processes_of(uid))
            group.cancel_scope.cancel()
        assert not any('sleep 3600' in line for line in processes_of(uid))
