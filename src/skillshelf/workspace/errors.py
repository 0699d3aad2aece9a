"""What goes wrong in skillshelf's sandboxed workspace, said twice: `str(error)` for the developer (it may name host
paths), `for_model` for the model (it never does, and tells it what to do next).

All are pydantic-ai `WorkspaceError`s, so code written for any workspace handles them, and `SkillError`s.
"""

from __future__ import annotations

from pydantic_ai.workspaces import WorkspaceError, WorkspaceUnavailableError

from ..errors import SkillError

__all__ = ('ForeignWorkspaceError', 'SandboxBrokenError', 'WorkspaceFullError')


class ForeignWorkspaceError(WorkspaceUnavailableError, SkillError):
    """A ref names a sandbox workspace that is not this conversation's: another conversation's, or one made without a
    conversation (which opens only when the application passes it to a run itself). Raised when the run selects its
    workspace, before anything runs, so no run answers with another conversation's ref."""

    for_model = (
        "this conversation's workspace is not available to it, so no file can be read or written and nothing can run "
        'there. Do not retry: tell the user that the workspace could not be opened.'
    )
    """What the model is told, if a tool meets this error."""


class SandboxBrokenError(WorkspaceError, SkillError):
    """The sandbox cannot start a process on this host any more: bubblewrap was removed or cannot run (the message
    says which program and why)."""

    for_model = (
        'the sandbox that runs commands cannot start on this machine right now, so no file can be read or written '
        'and nothing can run in the workspace. Do not retry: tell the user that the sandbox is not working.'
    )
    """What the model is told."""


class WorkspaceFullError(WorkspaceError, SkillError):
    """The workspace holds more than `ScriptLimits.max_workspace_bytes`: a command that wrote past it was stopped (or
    had ended; its output is kept), and nothing more runs or is written until files are removed."""

    def __init__(
        self,
        message: str,
        *,
        limit: int,
        ran: bool = True,
        exit_code: int | None = None,
        stdout: str = '',
        stderr: str = '',
    ) -> None:
        super().__init__(message)
        self.limit = limit
        """The workspace's limit, in bytes."""
        self.ran = ran
        """Whether a command ran and filled it (else nothing ran: it was full already)."""
        self.exit_code = exit_code
        """The command's exit status, if it ended before it could be stopped; `None` if it was stopped."""
        self.stdout = stdout
        """What the stopped command printed, when one was stopped."""
        self.stderr = stderr
        """Its error output."""

    @property
    def for_model(self) -> str:
        """What the model is told."""
        return (
            f'the workspace is full (it may hold {self.limit:,} bytes in all), so nothing more can be written or run '
            'in it. Tell the user: files must be removed from the workspace (or a new conversation started) first.'
        )
