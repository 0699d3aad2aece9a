"""Building the skills' environment: check what the skills need against it, install what it lacks, check again.

The environment is a virtual environment (`folder`), made if missing: its Python packages are what its interpreter
lacks, its Node packages those not yet in its own `node/` folder (npm's global folder does not count: the
environment must work where that folder is not shown, in a container). Debian packages are installed only with
`system` (as root); otherwise they are listed. The second check says what is still missing.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...scripts.environment import SkillEnvironment
from ...scripts.needs.model import Need, SkillNeeds
from ..needs.check import Environment, Facts, SkillCheck, check_needs
from .install import Step, apt_install, create_environment, npm_install, pip_install
from .plan import EnvironmentPlan, names, plan_environment

__all__ = ('Outcome', 'build_environment')


@dataclass(frozen=True)
class Outcome:
    """What building the environment did, and what the skills still lack."""

    environment: SkillEnvironment | None
    """The environment built, or `None` (`--system` alone)."""
    plan: EnvironmentPlan
    """What it lacked at first."""
    steps: tuple[Step, ...]
    """The installers' runs, in order."""
    facts: Facts
    """The interpreter of the last check."""
    results: tuple[SkillCheck, ...]
    """The last check: what each skill still lacks."""

    @property
    def failed(self) -> tuple[str, ...]:
        """What an installer could not install."""
        return tuple(name for step in self.steps for name in step.failed)

    @property
    def missing(self) -> int:
        """How many needs (not optional) are still missing."""
        return sum(result.missing for result in self.results)


def build_environment(skills: Sequence[SkillNeeds], folder: Path | None, system: bool) -> Outcome:
    """Make or update the environment at `folder` (if given) with what `skills` lack, installing Debian packages too
    with `system` (see the module docstring).

    Raises:
        OSError: the virtual environment could not be made.
        InterpreterError: its interpreter does not answer the check.
    """
    steps: list[Step] = []
    environment: SkillEnvironment | None = None
    if folder is not None:
        environment, made = create_environment(folder)
        steps += [made] if made is not None else []
    where = Environment(python=environment.python if environment is not None else sys.executable)
    _, before = check_needs(skills, where)
    checked = {(item.need.kind, item.need.name): item.counts for result in before for item in result.checked}

    def wanted(need: Need) -> bool:
        if need.kind == 'node-package':
            return environment is not None and not os.path.isdir(os.path.join(environment.node_modules, need.name))
        if need.kind == 'command' and (need.kind, need.name) not in checked:  # node and npm, for Node packages
            return shutil.which(need.name) is None
        return checked.get((need.kind, need.name), False)

    plan = plan_environment(skills, wanted)
    if system and plan.debian:  # first: npm may come from it
        steps.append(apt_install(plan.debian))
    if environment is not None:
        if plan.python:
            steps.append(pip_install(environment, names(plan.python)))
        if plan.node:
            steps.append(npm_install(environment, names(plan.node)))
    facts, after = check_needs(skills, where)
    return Outcome(environment, plan, tuple(steps), facts, tuple(after))
