"""What a workspace may raise that the script and command tools understand beyond pydantic-ai's own errors: a
command that filled the workspace past its size limit (`WorkspaceFullError`).

Any workspace may raise it (skillshelf's sandbox does); the tools tell the model what ran and that files must go.
"""

from __future__ import annotations

from pydantic_ai.workspaces import WorkspaceError

from ..errors import SkillError

__all__ = ('WorkspaceFullError',)


class WorkspaceFullError(WorkspaceError, SkillError):
    """The workspace holds more than the workspace's size limit: a command that wrote past it was stopped (or
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
