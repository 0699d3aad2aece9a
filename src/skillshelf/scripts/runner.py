"""The contract between the `run_skill_script` meta-tool and whatever runs a script: request, result, limits."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Protocol, runtime_checkable

from ..files import HeldFolder

SKILL_DIR_VARIABLES = ('${SKILL_DIR}', '${CLAUDE_SKILL_DIR}')
"""Written in a skill's instructions, each stands for its folder as the runner shows it to scripts."""


@dataclass(frozen=True)
class ScriptLimits:
    """What one script run may use; anything beyond is stopped or cut, and the model is told."""

    timeout: float = 30.0
    """Seconds before the run (every process it started) is killed."""
    max_output_bytes: int = 32 * 1024
    """Output (stdout and stderr together) kept for the model; the rest is counted and dropped."""
    max_processes: int = 64
    """Processes (and threads) the script may have at once: a fork bomb stops here (sandboxed runs only)."""
    max_memory_bytes: int = 2 << 30
    """Address space of each process (sandboxed runs only)."""
    max_file_bytes: int = 64 << 20
    """Size of any one file the script writes (sandboxed runs only)."""


@dataclass(frozen=True)
class ScriptRequest:
    """One run of a skill's script, with everything already checked: the script is a file beneath the folder."""

    skill: str
    """The skill's name."""
    folder: HeldFolder
    """The skill folder as discovery accepted it; a runner opens it through this, never by path again."""
    script: PurePosixPath
    """The script, relative to the folder."""
    interpreter: tuple[str, ...]
    """The program (and its options) that runs the script, chosen from its extension or shebang line."""
    args: tuple[str, ...] = ()
    """Arguments after the script's path, passed as they are (no shell)."""
    files: Mapping[str, str] = field(default_factory=dict[str, str])
    """Text files to write into the run's work directory first, by relative path."""


@dataclass(frozen=True)
class ScriptResult:
    """What became of a run."""

    exit_code: int | None
    """The exit status (negative: killed by that signal); `None` if the run was stopped at its time limit."""
    output: str
    """The start of stdout and stderr, interleaved as written, at most `ScriptLimits.max_output_bytes`."""
    output_bytes: int
    """How many bytes of output the run wrote in all."""
    files: Mapping[str, int] = field(default_factory=dict[str, int])
    """Files left in the work directory (relative path to size); the directory is deleted after the run."""

    @property
    def timed_out(self) -> bool:
        """Whether the run was stopped at its time limit."""
        return self.exit_code is None


@runtime_checkable
class ScriptRunner(Protocol):
    """Runs skill scripts: `BubblewrapRunner` (sandboxed, the default) or `LocalRunner`, or your own."""

    def skill_dir(self, folder: Path) -> str:
        """Where a script sees the skill `folder`: what `${SKILL_DIR}` in its instructions becomes."""
        ...

    async def run(self, request: ScriptRequest) -> ScriptResult:
        """Run the script; a limit reached is reported in the result, never raised."""
        ...


def expand_skill_dir(instructions: str, skill_dir: str) -> str:
    """`instructions` with each `${SKILL_DIR}` (and Claude's `${CLAUDE_SKILL_DIR}`) replaced by `skill_dir`; nothing
    else in a skill's text is ever expanded."""
    for variable in SKILL_DIR_VARIABLES:
        instructions = instructions.replace(variable, skill_dir)
    return instructions
