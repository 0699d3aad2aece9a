"""A fleet's skills in one SQL database: `SkillRegistry` publishes skills and serves them to every worker.

Needs the `registry` extra (`pip install 'skillshelf[registry]'`): SQLite embedded, PostgreSQL for a fleet. Every
publish is kept as a revision (`RegistryEntry`); a worker can pin the registry or single skills (`RegistryPins`).
"""

from .sources.registry import RegistryEntry, RegistryPins, SkillRegistry

__all__ = ('RegistryEntry', 'RegistryPins', 'SkillRegistry')
