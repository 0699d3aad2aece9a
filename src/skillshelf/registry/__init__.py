"""The skill registry annex: a fleet's skills in one SQL database (`pip install 'skillshelf[registry]'`).

`SkillRegistry` publishes skills and serves them to every worker, as a skill source (`Skills(sources=[registry])`, or
`{'registry': url}` in an agent spec). Every publish is kept as a revision (`RegistryEntry`); a worker can pin the
registry or single skills (`RegistryPins`). SQLite is embedded; PostgreSQL serves a fleet. The skills core never
imports this package: only a spec that names a registry does, when it is read.
"""

from .pins import RegistryPins
from .skill_registry import RegistryEntry, SkillRegistry

__all__ = ('RegistryEntry', 'RegistryPins', 'SkillRegistry')
