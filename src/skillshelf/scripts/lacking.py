"""What the run's workspace lacks for a skill's scripts, said when the skill is loaded: the programs and Python modules
its scripts name (read from its files by `needs.scan_skill`, never run), asked of the workspace itself in one bounded
command (`command -v` for programs, `importlib.util.find_spec` for modules), so the model can tell the user before it
starts rather than after a script fails.

Asking never fails a load: a workspace that cannot answer (no `sh`, a timeout, an error) gets no note. Optional
needs (a guarded import, a program looked up first) are left out, as `skillshelf check` does not count them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai.workspaces import Workspace, WorkspaceError

from ..skill import Skill
from .environment import SkillEnvironment
from .needs.model import Need
from .needs.scan import scan_skill
from .python import python_for

__all__ = ('MAX_ASKED', 'PROBE_TIMEOUT', 'Lack', 'lacking_note', 'workspace_lacks')

PROBE_TIMEOUT = 10.0
"""Seconds the workspace may take to answer."""
MAX_ASKED = 60
"""Programs and modules asked about, at most, per skill (real skills name a handful)."""
_MAX_SHOWN = 6
"""Lacks named in the note; the rest are counted."""
_SCANS_KEPT = 256
_PROBE = r"""
python="$1"; shift
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do command -v "$1" >/dev/null 2>&1 || echo "program $1"; shift; done
[ "$#" -gt 0 ] && shift
[ "$#" -eq 0 ] || "$python" -I -c '
import importlib.util, sys
for name in sys.argv[1:]:
    try:
        found = importlib.util.find_spec(name) is not None
    except Exception:
        found = False
    if not found:
        print("module", name)
' "$@"
"""
_scans: dict[int, tuple[Skill[Any], tuple[Need, ...]]] = {}
"""Each skill's needs by the skill object (kept, so its id stays its own): a changed skill is a new object."""


@dataclass(frozen=True)
class Lack:
    """Something a skill's scripts need that the workspace does not have."""

    kind: Literal['program', 'module']
    """A program run by name, or a top-level Python module."""
    name: str
    """Its name (`soffice`, `lxml`); for a program with alternatives, the first (`magick` for `magick` or `convert`)."""
    found_in: tuple[str, ...]
    """The skill's files that need it."""


async def workspace_lacks(
    workspace: Workspace, skill: Skill[Any], environment: SkillEnvironment | None = None
) -> list[Lack]:
    """What `workspace` lacks of what `skill`'s scripts need (Python modules asked of the skills' `environment`
    where the workspace shows it), asked in one command; `[]` when it cannot tell."""
    needs = await _needs(skill)
    programs = [need for need in needs if need.kind == 'command']
    modules = [(need, name) for need in needs for name in _import_names(need)]
    asked_programs = list(dict.fromkeys(name for need in programs for name in (need.name, *need.alternatives)))
    asked_modules = list(dict.fromkeys(name for _, name in modules))
    if not asked_programs and not asked_modules:
        return []
    try:
        python = await python_for(workspace, environment)
        argv = ['sh', '-c', _PROBE, 'sh', python, *asked_programs[:MAX_ASKED], '--', *asked_modules[:MAX_ASKED]]
        done = await workspace.run(argv, timeout=PROBE_TIMEOUT)
    except (WorkspaceError, OSError, ValueError):
        return []
    if done.exit_code != 0:
        return []
    answered = {tuple(line.split(' ', 1)) for line in done.stdout.splitlines() if ' ' in line}
    lacks = [
        Lack('program', need.name, need.found_in)
        for need in programs
        if all(('program', name) in answered for name in (need.name, *need.alternatives))
    ]
    lacks += [Lack('module', name, need.found_in) for need, name in modules if ('module', name) in answered]
    return lacks


def lacking_note(lacks: list[Lack]) -> str:
    """The load reply's note on what the workspace lacks (`''` for nothing): what, where, and what to do."""
    if not lacks:
        return ''
    kinds: list[str] = []
    for kind, noun in (('program', 'program'), ('module', 'Python module')):
        named = [lack for lack in lacks[:_MAX_SHOWN] if lack.kind == kind]
        if named:
            listed = ', '.join(f'{lack.name!r} ({_places(lack.found_in)})' for lack in named)
            kinds.append(f'the {noun}{"s" if len(named) > 1 else ""} {listed}')
    more = f'; and {len(lacks) - _MAX_SHOWN} more' if len(lacks) > _MAX_SHOWN else ''
    return (
        f'This workspace lacks what some of its scripts need: {"; ".join(kinds)}{more}. Scripts that need '
        f'{"them" if len(lacks) > 1 else "it"} will fail here: tell the user before you start, and do not retry them.'
    )


async def _needs(skill: Skill[Any]) -> tuple[Need, ...]:
    """The needs that count (not optional ones) of `skill`, scanned once per skill object."""
    kept = _scans.get(id(skill))
    if kept is not None and kept[0] is skill:
        return kept[1]
    scanned = await asyncio.to_thread(scan_skill, skill)
    needs = tuple(need for need in scanned.needs if not need.optional)
    if len(_scans) >= _SCANS_KEPT:
        _scans.pop(next(iter(_scans)))
    _scans[id(skill)] = (skill, needs)
    return needs


def _import_names(need: Need) -> tuple[str, ...]:
    """The top-level modules the workspace must have for `need`: a module, or what a package's imports name."""
    if need.kind == 'module':
        return (need.name,)
    return need.imports if need.kind == 'package' else ()


def _places(found_in: tuple[str, ...]) -> str:
    more = f' +{len(found_in) - 2}' if len(found_in) > 2 else ''
    return ', '.join(found_in[:2]) + more
