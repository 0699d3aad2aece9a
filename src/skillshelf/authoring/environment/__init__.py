"""The skills' environment, built in one command (`skillshelf env`): what `skillshelf check` finds the skills' scripts
need, installed in a virtual environment (Python packages by pip, Node packages by npm under its `node/`), the
Debian packages of the programs they run listed or installed, or all of it written as a container image recipe.
`Skills(environment=FOLDER)` then points every workspace at it (see `scripts.environment`).
"""

from __future__ import annotations

from .debian import DEBIAN_PACKAGES, debian_packages
from .dockerfile import DEFAULT_BASE, IMAGE_FOLDER, dockerfile
from .install import Step, apt_install, create_environment, npm_install, pip_install
from .plan import EnvironmentPlan, Program, Requirement, plan_environment

__all__ = (
    'DEBIAN_PACKAGES',
    'DEFAULT_BASE',
    'IMAGE_FOLDER',
    'EnvironmentPlan',
    'Program',
    'Requirement',
    'Step',
    'apt_install',
    'create_environment',
    'debian_packages',
    'dockerfile',
    'npm_install',
    'pip_install',
    'plan_environment',
)
