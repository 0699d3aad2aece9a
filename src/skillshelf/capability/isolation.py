"""Whether a run's workspace isolates what its commands do from the machine the agent runs on: where it does, a
command or script no one can be asked about runs unasked; where it does not, it is refused (see `asking`).

Read by what the workspace is, never by importing it, and conservatively: a workspace isolates only when the class
of its backend, of a wrapper around it or of the capability that supplies it says so (`isolated = True`: skillshelf's
`SkillSandbox` and its `SandboxWorkspace`), or when it is one of pydantic-ai-harness's sandboxes (a class from one of
its `*_sandbox` packages: `BubblewrapSandbox`, `DockerSandbox`, `E2BSandbox`, `ModalSandbox`, ...). pydantic-ai's
`LocalWorkspace`, harness's `SSHWorkspace` (another machine, not a sandbox) and every other workspace do not.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.workspaces import Workspace

from ..scripts.python import workspace_layers_of

__all__ = ('isolates', 'isolating_capability', 'workspace_label')

_HARNESS = 'pydantic_ai_harness'
_SANDBOX_PACKAGE_SUFFIX = '_sandbox'


def isolates(workspace: Workspace) -> bool:
    """Whether the run's `workspace` isolates its commands (see the module docstring)."""
    if not workspace.attached:
        return False
    # By class, never `workspace.backend`: a durable workflow's workspace refuses to hand its backend out.
    return any(_isolating(layer) for layer in workspace_layers_of(workspace))


def isolating_capability(capability: AbstractCapability[Any]) -> bool:
    """Whether `capability`, which supplies runs' workspaces, supplies ones that isolate (known at construction)."""
    return _isolating(type(capability))


def workspace_label(capability: AbstractCapability[Any]) -> str:
    """How the developer's messages name the workspace `capability` supplies."""
    if isinstance(capability, LocalWorkspace):
        return "pydantic-ai's `LocalWorkspace`, which runs commands on this machine"
    return f'the workspace of `{type(capability).__name__}`, which skillshelf does not know to isolate commands'


def _isolating(kind: type[object]) -> bool:
    if getattr(kind, 'isolated', False) is True:
        return True
    package, *modules = kind.__module__.split('.')
    return package == _HARNESS and any(module.endswith(_SANDBOX_PACKAGE_SUFFIX) for module in modules)
