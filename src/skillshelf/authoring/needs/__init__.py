"""What a skill's scripts need from the environment, and whether an environment has it.

`scan_skill` reads a skill's files (nothing is run): its `compatibility` field, its scripts' `#!` lines, the imports
and started programs of its Python scripts (with `ast`), the commands of its shell scripts (with `shlex`), PEP 723
headers and `requirements.txt`. `check_needs` asks an interpreter which modules and packages it has, and looks the
programs up as `SkillSandbox` (or, with `local`, a `LocalWorkspace`) would find them. `skillshelf check` shows both.
"""

from __future__ import annotations

from ...scripts.distributions import DISTRIBUTIONS, distribution_of, install_hint
from ...scripts.needs.model import Checked, Need, NeedKind, SkillNeeds, Status
from ...scripts.needs.scan import scan_content, scan_skill
from .check import Environment, Facts, InterpreterError, SkillCheck, check_needs

__all__ = (
    'DISTRIBUTIONS',
    'Checked',
    'Environment',
    'Facts',
    'InterpreterError',
    'Need',
    'NeedKind',
    'SkillCheck',
    'SkillNeeds',
    'Status',
    'check_needs',
    'distribution_of',
    'install_hint',
    'scan_content',
    'scan_skill',
)
