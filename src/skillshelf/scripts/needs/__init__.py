"""What a skill's scripts need from the environment, read from its files (nothing is run): its `compatibility` field,
its scripts' `#!` lines, the imports and started programs of its Python scripts, its shell scripts' commands, PEP 723
headers and `requirements.txt` (`scan_skill`). The run's workspace is asked about them when the skill is loaded
(`scripts.lacking`); `skillshelf check` checks them against an interpreter and a `PATH` (`authoring.needs`)."""

from .model import Checked, Need, NeedKind, SkillNeeds, Status
from .scan import scan_content, scan_skill

__all__ = ('Checked', 'Need', 'NeedKind', 'SkillNeeds', 'Status', 'scan_content', 'scan_skill')
