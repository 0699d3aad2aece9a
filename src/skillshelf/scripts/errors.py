"""What a workspace may raise that the script and command tools understand beyond pydantic-ai's own errors: a
command the workspace stopped at one of its own limits (`CommandStoppedError`): it filled the workspace past its size
or its number of files (`WorkspaceFullError`), or its processes together used more memory than one command may
(`MemoryLimitError`).

Any workspace may raise them (skillshelf's sandbox does); the tools tell the model what ran and what to do next.
"""

from __future__ import annotations

from pydantic_ai.workspaces import WorkspaceError

from ..errors import SkillError

__all__ = ('CommandStoppedError', 'MemoryLimitError', 'WorkspaceFullError')


class CommandStoppedError(WorkspaceError, SkillError):
    """A command the workspace stopped at one of its own limits, besides time and output (which pydantic-ai's
    `WorkspaceTimeoutError` and `WorkspaceOutputLimitError` say); `stopped` says which."""

    def __init__(
        self, message: str, *, stopped: str, exit_code: int | None = None, stdout: str = '', stderr: str = ''
    ) -> None:
        super().__init__(message)
        self.stopped = stopped
        """Which limit: `'disk'` (the workspace's size), `'files'` (its number of files) or `'memory'`."""
        self.exit_code = exit_code
        """The command's exit status, if it ended before it could be stopped; `None` if it was stopped."""
        self.stdout = stdout
        """What the command printed."""
        self.stderr = stderr
        """Its error output."""


class WorkspaceFullError(CommandStoppedError):
    """The workspace holds more than its size limit, or more files than its file limit: a command that wrote past it
    was stopped (or had ended; its output is kept), and nothing more runs or is written until files are removed."""

    def __init__(
        self,
        message: str,
        *,
        limit: int,
        files: bool = False,
        ran: bool = True,
        exit_code: int | None = None,
        stdout: str = '',
        stderr: str = '',
    ) -> None:
        super().__init__(
            message, stopped='files' if files else 'disk', exit_code=exit_code, stdout=stdout, stderr=stderr
        )
        self.limit = limit
        """The workspace's limit: in bytes, or in files and folders when `files`."""
        self.files = files
        """Whether the limit passed is the number of files (and folders), not the bytes."""
        self.ran = ran
        """Whether a command ran and filled it (else nothing ran: it was full already)."""

    @property
    def for_model(self) -> str:
        """What the model is told."""
        holds = f'{self.limit:,} files and folders' if self.files else f'{self.limit:,} bytes'
        return (
            f'the workspace is full (it may hold {holds} in all), so nothing more can be written or run '
            'in it. Tell the user: files must be removed from the workspace (or a new conversation started) first.'
        )


class MemoryLimitError(CommandStoppedError):
    """A command's processes together used more memory than one command may have: the system killed one of them,
    and the workspace stopped the rest."""

    def __init__(
        self, message: str, *, limit: int, exit_code: int | None = None, stdout: str = '', stderr: str = ''
    ) -> None:
        super().__init__(message, stopped='memory', exit_code=exit_code, stdout=stdout, stderr=stderr)
        self.limit = limit
        """The memory one command may use, in bytes."""

    @property
    def for_model(self) -> str:
        """What the model is told."""
        return (
            f'the command used more memory than one command may have ({self.limit:,} bytes for all its processes '
            'together, with their files in /tmp and /dev/shm) and was stopped. Use less: work through the data in '
            'parts, or tell the user'
        )
