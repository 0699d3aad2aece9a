"""Errors and warnings raised by skillshelf."""

from __future__ import annotations

from pathlib import Path

__all__ = (
    'ResourceError',
    'ScriptError',
    'SkillConflictError',
    'SkillError',
    'SkillFormatError',
    'SkillFormatWarning',
    'SkillWarning',
)


class SkillError(Exception):
    """Base class for every error skillshelf raises."""


class SkillFormatError(SkillError):
    """A `SKILL.md` file (or a Python skill definition) breaks the Agent Skills format."""

    def __init__(self, path: str | Path | None, problem: str) -> None:
        self.path = None if path is None else Path(path)
        """The offending file, or `None` for a skill defined in Python."""
        self.problem = problem
        """What is wrong, phrased so the author knows what to change."""
        super().__init__(f'{path}: {problem}' if path else problem)


class SkillConflictError(SkillError):
    """Two skills share a name, or two skills expose the same tool name."""


class ResourceError(SkillError):
    """A skill's file cannot be read; the message is written for the model."""


class ScriptError(SkillError):
    """A skill's script cannot be run (no interpreter for it, no sandbox); the message is written for the model."""


class SkillWarning(UserWarning):
    """A skill was skipped or recovered; the message names the file and the problem."""


class SkillFormatWarning(SkillWarning):
    """A `SKILL.md` breaks the Agent Skills format in a way Claude Code or Codex tolerate, and was loaded as they
    load it (a name that differs from its folder, a missing name, an over-long description, YAML they read as
    meant); the message names the file, the deviation and the fix. `strict=True` makes each one an error."""
