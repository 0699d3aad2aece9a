"""What to install for the skills' scripts, from what `skillshelf check` finds they need: Python packages by their
distribution's name (`import PIL` is `pillow`, `import docx` is `python-docx`: `scripts.distributions`), the Node
packages they load or install, and the Debian packages of the programs they run. Optional needs (a guarded import, a
program looked up first) are left out, as `check` does not count them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ...scripts.distributions import distribution_of
from ...scripts.needs.model import Need, SkillNeeds, normalise
from .debian import ENVIRONMENT_PROGRAMS, debian_packages

__all__ = ('EnvironmentPlan', 'Program', 'Requirement', 'names', 'plan_environment')


@dataclass(frozen=True)
class Requirement:
    """One package to install, and the skills that need it."""

    name: str
    """As the installer takes it: a pip requirement (`python-docx`, `pillow>=10`) or an npm package (`pptxgenjs`)."""
    skills: tuple[str, ...]
    """The skills that need it."""


@dataclass(frozen=True)
class Program:
    """A program the skills run, and where it comes from."""

    name: str
    """Its name (`soffice`), with `alternatives` any of which will do."""
    alternatives: tuple[str, ...]
    """Other programs that will do."""
    packages: tuple[str, ...] | None
    """The Debian packages that provide it, or `None` when that is not known."""
    skills: tuple[str, ...]
    """The skills that need it."""


@dataclass(frozen=True)
class EnvironmentPlan:
    """What to install, by installer."""

    python: tuple[Requirement, ...] = ()
    """Python packages, for pip."""
    node: tuple[Requirement, ...] = ()
    """Node packages, for npm."""
    programs: tuple[Program, ...] = ()
    """Programs, with their Debian packages."""
    unmet: tuple[str, ...] = field(default=())
    """What no installer here provides (a Python version), said as a sentence each."""

    @property
    def debian(self) -> tuple[str, ...]:
        """Every Debian package of `programs`, once each, in order."""
        return tuple(dict.fromkeys(name for program in self.programs for name in program.packages or ()))

    @property
    def unknown_programs(self) -> tuple[Program, ...]:
        """The programs no known Debian package provides."""
        return tuple(program for program in self.programs if program.packages is None)


def plan_environment(
    skills: Sequence[SkillNeeds], wanted: Callable[[Need], bool] = lambda need: True
) -> EnvironmentPlan:
    """What to install for `skills`: every need that is not optional and that `wanted` keeps (default: all; `env`
    keeps those the environment lacks)."""
    python: dict[str, tuple[str, list[str]]] = {}
    node: dict[str, list[str]] = {}
    programs: dict[str, tuple[Need, list[str]]] = {}
    unmet: list[str] = []
    for skill in skills:
        for need in skill.needs:
            if need.optional or not wanted(need):
                continue
            if need.kind in ('module', 'package'):
                requirement = _requirement(need)
                _add(python.setdefault(normalise(requirement.split(';')[0].split('[')[0]), (requirement, []))[1], skill)
            elif need.kind == 'node-package':
                _add(node.setdefault(need.name, []), skill)
            elif need.kind == 'command' and need.name not in ENVIRONMENT_PROGRAMS:
                _add(programs.setdefault(need.name, (need, []))[1], skill)
            elif need.kind == 'python':
                unmet.append(f'{skill.name} needs Python {need.spec}: make the environment with that Python')
    node_users = list(dict.fromkeys(user for users in node.values() for user in users))
    for name in ('node', 'npm') if node else ():  # npm installs the Node packages, and node runs them
        need = Need('command', name)
        if name not in programs and wanted(need):
            programs[name] = (need, node_users)
    return EnvironmentPlan(
        tuple(Requirement(name, tuple(users)) for name, users in python.values()),
        tuple(Requirement(name, tuple(users)) for name, users in node.items()),
        tuple(
            Program(name, need.alternatives, debian_packages((name, *need.alternatives)), tuple(users))
            for name, (need, users) in programs.items()
        ),
        tuple(dict.fromkeys(unmet)),
    )


def _requirement(need: Need) -> str:
    if need.kind == 'package':
        return need.spec or need.name
    return distribution_of(need.name) or need.name


def _add(users: list[str], skill: SkillNeeds) -> None:
    if skill.name not in users:
        users.append(skill.name)


def names(requirements: Iterable[Requirement]) -> list[str]:
    """The names of `requirements`, for an installer's command line."""
    return [requirement.name for requirement in requirements]
