"""`ScriptLimits`: what one command in a skill workspace may use; anything beyond is stopped or cut, and the model is
told."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ('ScriptLimits',)


@dataclass(frozen=True)
class ScriptLimits:
    """What one script run (or command) may use; anything beyond is stopped or cut, and the model is told.

    The time and output limits apply in every workspace; the others are enforced by skillshelf's own sandbox
    (`SkillSandbox`), where each workspace also runs as its own user when the agent runs as root, so one
    conversation's processes never count against another's.
    """

    timeout: float = 30.0
    """Seconds before the run (every process it started) is killed."""
    max_output_bytes: int = 32 * 1024
    """Output (stdout and stderr) kept for the model; the rest is counted and dropped."""
    max_processes: int = 64
    """Processes (and threads) the workspace's user may have at once: a fork bomb stops here (sandbox only)."""
    max_memory_bytes: int = 2 << 30
    """Address space of each process (sandbox only)."""
    max_file_bytes: int = 64 << 20
    """Size of any one file a command writes (sandbox only)."""
    max_workspace_bytes: int = 1 << 30
    """What the workspace folder may hold in all; a command that writes past it is stopped, and no command runs
    until files are removed (sandbox only)."""
    max_tmp_bytes: int = 256 << 20
    """The size of each command's private `/tmp`, and of its `/dev/shm` (sandbox only)."""
