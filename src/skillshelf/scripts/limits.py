"""`ScriptLimits`: how long one command in a skill workspace may run and how much of its output the model sees, in
any workspace; the command is stopped or its output cut beyond them, and the model is told.

What a command may use of the machine (processes, memory, disk) is the workspace's to hold: skillshelf's sandbox
takes `SandboxLimits` (`skillshelf.sandbox`). The five fields that said so here before still work for this release,
with a `DeprecationWarning` naming `SandboxLimits`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from ..errors import SkillWarning

__all__ = ('MOVED_TO_SANDBOX', 'ScriptLimits', 'given_sandbox_limits', 'warn_ignored_sandbox_limits')

MOVED_TO_SANDBOX = ('max_processes', 'max_memory_bytes', 'max_file_bytes', 'max_workspace_bytes', 'max_tmp_bytes')
"""The fields of `SandboxLimits` that `ScriptLimits` held before (deprecated here)."""


@dataclass(frozen=True)
class ScriptLimits:
    """How long one script run (or command) may take and how much of its output the model sees; beyond them it is
    stopped or cut, and the model is told. They hold in every workspace.

    ```python
    Skills('skills', scripts=True, script_limits=ScriptLimits(timeout=120))
    ```
    """

    timeout: float = 30.0
    """Seconds before the run is killed (in `SkillSandbox`, with every process it started)."""
    max_output_bytes: int = 32 * 1024
    """Output (stdout and stderr) kept for the model; the rest is counted and dropped."""
    max_processes: int | None = field(default=None, repr=False)
    """Deprecated: `SandboxLimits.max_processes`."""
    max_memory_bytes: int | None = field(default=None, repr=False)
    """Deprecated: `SandboxLimits.max_memory_bytes`."""
    max_file_bytes: int | None = field(default=None, repr=False)
    """Deprecated: `SandboxLimits.max_file_bytes`."""
    max_workspace_bytes: int | None = field(default=None, repr=False)
    """Deprecated: `SandboxLimits.max_workspace_bytes`."""
    max_tmp_bytes: int | None = field(default=None, repr=False)
    """Deprecated: `SandboxLimits.max_tmp_bytes`."""

    def __post_init__(self) -> None:
        if given := given_sandbox_limits(self):
            named = ', '.join(f'{name}=...' for name in given)
            warnings.warn(
                f'ScriptLimits({named}) is deprecated: these are limits of the sandbox, set with '
                f'`SkillSandbox(limits=SandboxLimits({named}))` (from skillshelf.sandbox); ScriptLimits keeps '
                '`timeout` and `max_output_bytes`. For this release the sandbox that Skills(scripts=True) makes '
                'itself still gets them.',
                DeprecationWarning,
                stacklevel=3,
            )


def given_sandbox_limits(limits: ScriptLimits) -> dict[str, int]:
    """The deprecated sandbox limits `limits` was given, by name (empty for a `ScriptLimits` of today)."""
    return {name: value for name in MOVED_TO_SANDBOX if (value := getattr(limits, name)) is not None}


def warn_ignored_sandbox_limits(moved: dict[str, int], workspace: str | None) -> None:
    """Say that the sandbox limits of `Skills(script_limits=...)` reach no sandbox: the workspace comes from
    `workspace`, or (`None`) the model works in no workspace."""
    named = ', '.join(f'{name}={value!r}' for name, value in moved.items())
    why = (
        f"this agent's workspace comes from {workspace}, and only the sandbox Skills makes itself takes them"
        if workspace
        else 'Skills makes no sandbox with `scripts` and `file_tools` off'
    )
    warnings.warn(
        SkillWarning(
            f'the sandbox limits in Skills(script_limits=ScriptLimits({named})) are ignored: {why}. Set them where '
            'the workspace is made: '
            f"SkillSandbox(limits=SandboxLimits({named})), or your workspace's own limits."
        ),
        stacklevel=4,
    )
