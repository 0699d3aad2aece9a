"""What the model is told when the workspace itself fails, rather than the command or file it asked for: a clause it
can act on, never a host path; and, where the fix is the developer's (a sandbox that cannot start, a workspace that
is not the conversation's), a `SkillWarning` for them with the details."""

from __future__ import annotations

import warnings

from pydantic_ai.workspaces import WorkspaceError

from .._text import without_paths
from ..errors import SkillWarning
from ..workspace.errors import ForeignWorkspaceError, SandboxBrokenError, WorkspaceFullError
from ..workspace.sandbox import PROVIDER

__all__ = ('contained', 'stopped_at_time_limit', 'workspace_problem')


def workspace_problem(error: WorkspaceError | OSError | ValueError) -> str:
    """The model's clause for `error` (no final period); warns the developer where the fix is theirs."""
    if isinstance(error, (ForeignWorkspaceError, SandboxBrokenError)):
        warnings.warn(SkillWarning(f"the run's workspace cannot be used: {error}"), stacklevel=3)
        return error.for_model.rstrip('.')
    if isinstance(error, WorkspaceFullError):
        return error.for_model.rstrip('.')
    if isinstance(error, OSError):  # its filename may be a host path
        return without_paths(error.strerror or type(error).__name__)
    return without_paths(str(error)) or type(error).__name__  # a workspace's message may name its host folder


def contained(ref_provider: str | None) -> bool:
    """Whether the workspace kills everything a command started at its time limit: skillshelf's sandbox does (a PID
    namespace per command); pydantic-ai's `LocalWorkspace` kills the command's process group, which a process that
    started a session of its own (`setsid`, a daemon) has left."""
    return ref_provider == PROVIDER


def stopped_at_time_limit(ref_provider: str | None) -> str:
    """Why a run stopped at its time limit ended, as it is true for the workspace it ran in (a clause)."""
    if contained(ref_provider):
        return 'it reached the time limit, and every process it started was killed'
    return (
        'it reached the time limit and was killed with its process group; a process it started in a session of its '
        'own (a daemon, `setsid`) may still be running in the workspace'
    )
