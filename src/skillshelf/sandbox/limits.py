"""`SandboxLimits`: what one command in a `SkillSandbox` may use of the machine; the kernel or the size watch stops
anything beyond. The time and output limits are the tool's, in any workspace (`ScriptLimits`)."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

__all__ = ('SandboxLimits',)


@dataclass(frozen=True)
class SandboxLimits:
    """What one command in `SkillSandbox` may use; anything beyond is stopped or refused, and the model is told.

    ```python
    SkillSandbox(limits=SandboxLimits(max_command_memory_bytes=8 << 30, max_workspace_bytes=8 << 30))
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
    _: KW_ONLY
    max_workspace_files: int = 65_536
    """Files, folders and links the workspace folder may hold (empty files take no bytes, but each takes one of the
    host file system's inodes, which are few: ext4 makes one per 16 KiB, so a full 1 GiB workspace may take
    no larger a share of them than of the disk). A command past it is stopped, and no command runs until files are
    removed; a `node_modules` or a virtual environment takes a few thousand to some tens of thousands."""
    max_command_memory_bytes: int = 4 << 30
    """Memory all the processes of one command may use together, with the files they keep in `/tmp` and `/dev/shm`;
    a command past it is stopped. Held by a memory cgroup of the command's own where the machine lets the agent
    make one (see `memory`); elsewhere only `max_memory_bytes` per process and `max_tmp_bytes` hold, and memory no
    process holds (`memfd_create`, `shmget`) is refused."""
