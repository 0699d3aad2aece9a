"""`SandboxLimits`: what one command in a `SkillSandbox` may use of the machine; the kernel or the size watch stops
anything beyond. The time and output limits are the tool's, in any workspace (`ScriptLimits`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ('SandboxLimits',)


@dataclass(frozen=True)
class SandboxLimits:
    """What one command in `SkillSandbox` may use; anything beyond is stopped or refused, and the model is told.

    ```python
    SkillSandbox(limits=SandboxLimits(max_memory_bytes=4 << 30, max_workspace_bytes=8 << 30))
    ```

    Each workspace's commands run as its own user when the agent runs as root (else in a user namespace of their
    own), so one conversation's processes never count against another's. How long a command may run and how much
    of its output the model sees are set on the tool, for every workspace: `Skills(script_limits=ScriptLimits(...))`.
    """

    max_processes: int = 64
    """Processes (and threads) the workspace's user may have at once: a fork bomb stops here."""
    max_memory_bytes: int = 2 << 30
    """Address space of each process."""
    max_file_bytes: int = 64 << 20
    """Size of any one file a command writes (never more than the room the workspace has left, either)."""
    max_workspace_bytes: int = 1 << 30
    """What the workspace folder may hold in all; a command that writes past it is stopped, and no command runs
    until files are removed."""
    max_tmp_bytes: int = 256 << 20
    """The size of each command's private `/tmp`, and of its `/dev/shm`."""
