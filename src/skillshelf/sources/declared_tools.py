"""The tools a `SKILL.md` declares in its `python-tools:` field, imported as the skill's hidden tools.

Importing a module runs its code, so discovery imports them only for skills in directories the user trusts
(`Skills(trusted_directories=...)`); anywhere else the skill is kept for its instructions alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from pydantic_ai.tools import ToolFuncEither
from pydantic_ai.toolsets import FunctionToolset

from .._imports import import_object
from ..errors import SkillError
from ..skill import Skill

__all__ = ('add_declared_tools', 'untrusted_note')


def add_declared_tools(skill: Skill[Any], paths: Sequence[str]) -> None:
    """Import each `'package.module:function'` of `paths` and add it to `skill`'s tools (a function that takes
    `RunContext` first is given it).

    Raises:
        SkillError: a path cannot be imported, names something that is not callable, or cannot be made a tool.
    """
    toolset = skill.toolset
    if not isinstance(toolset, FunctionToolset):  # a folder skill's toolset is the one it made itself
        raise SkillError(f'skill {skill.name!r} has a toolset of its own, so it cannot take declared tools')
    for path in paths:
        function = _import_tool(path)
        try:
            toolset.add_function(function)
        except Exception as error:  # pydantic-ai refuses signatures it cannot describe, and clashing names
            raise SkillError(f'the tool {path!r} cannot be used as a tool: {error}') from error


def _import_tool(path: str) -> ToolFuncEither[Any, ...]:
    try:
        function = import_object(path, 'tool')
    except SkillError:
        raise
    except Exception as error:  # the module's own code failed: that is the skill's problem, not the library's
        raise SkillError(f'importing the tool {path!r} failed: {type(error).__name__}: {error}') from error
    if not callable(function):
        raise SkillError(f'the tool {path!r} is a {type(function).__name__}, not a function')
    return cast('ToolFuncEither[Any, ...]', function)


def untrusted_note(skill_file: Path, paths: Sequence[str]) -> str:
    """The warning for a skill that declares `paths` as tools outside a trusted directory."""
    return (
        f'{skill_file}: its tools ({", ".join(paths)}) were not imported because its directory is not trusted; '
        'it is loaded for its instructions only (list the directory in `trusted_directories` to import them)'
    )
