"""A program a script runs that the workspace lacks: found in what the failed run printed, and what the developer is
told about it (which workspace, and how to add the program there).

A run names the program it could not start in one of a few ways: Python's `subprocess` raises
`FileNotFoundError: [Errno 2] No such file or directory: 'soffice'` from `_execute_child`; a shell says
`sh: 1: soffice: not found` (dash), `script.sh: line 3: soffice: command not found` (bash) or
`zsh: command not found: soffice`; `env` on a `#!` line says `/usr/bin/env: 'node': No such file or directory`.
A name with a `/` is a path the script got wrong, not a program to install, and is left alone.
"""

from __future__ import annotations

import os
import re
import shutil

from pydantic_ai.workspaces import Workspace

from ..errors import SkillWarning
from .python import describe_workspace

__all__ = ('missing_program', 'missing_program_warning')

_PATTERNS = (
    re.compile(
        r'in _execute_child\n(?:[^\n]*\n){0,4}?FileNotFoundError: \[Errno 2\] No such file or directory: '
        r"'(?P<name>[^'\n]+)'"
    ),
    re.compile(r'(?m)^[^\n:]+: \d+: (?P<name>[^\s:]+): not found[ \t]*$'),
    re.compile(r'(?m)^[^\n]*?: (?P<name>[^\s:]+): command not found[ \t]*$'),
    re.compile(r'(?m)^[^\n:]+: command not found: (?P<name>\S+)[ \t]*$'),
    re.compile(r"(?m)^\S*env: ['‘]?(?P<name>[^'’\s]+)['’]?: No such file or directory[ \t]*$"),
)


def missing_program(stderr: str) -> str | None:
    """The program a run could not start because it is not installed (see the module docstring), or `None`; the
    last one named when there are several (the one that ended the run)."""
    found: list[tuple[int, str]] = []
    for pattern in _PATTERNS:
        found += [(match.start(), match['name']) for match in pattern.finditer(stderr) if '/' not in match['name']]
    return max(found)[1] if found else None


def missing_program_warning(skill: str, script: str, program: str, workspace: Workspace) -> SkillWarning:
    """The developer's warning that `script` of `skill` runs `program`, which `workspace` lacks: the workspace named
    as it is, and how to add the program there."""
    described = describe_workspace(workspace)
    if described.kind == 'local':
        remedy = "install it on this machine, on the PATH the agent's process has"
    elif described.kind == 'offers-python':
        here = shutil.which(program)
        if here is not None:
            folder = os.path.dirname(os.path.realpath(here))
            show = (
                f'SkillSandbox(mounts=[{folder!r}])' if described.label == 'SkillSandbox' else 'a mount of its folder'
            )
            remedy = f'this machine has it at {here}, which {described.label} does not show: add {show}'
        else:
            remedy = f'install it on this machine system-wide (under /usr), where {described.label} sees programs'
    else:
        remedy = 'install it where that workspace runs commands (for a remote sandbox, in its image)'
    return SkillWarning(
        f'skill {skill!r}: {script} runs the program {program!r}, which the workspace that runs scripts '
        f'({described.label}) lacks; {remedy}. `skillshelf check` lists what each skill needs'
    )
