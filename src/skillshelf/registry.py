"""A fleet's skills in one SQL database: `SkillRegistry` publishes skills and serves them to every worker.

Needs the `registry` extra (`pip install 'skillshelf[registry]'`): SQLite embedded, PostgreSQL for a fleet.
"""

from .sources.registry import SkillRegistry

__all__ = ('SkillRegistry',)
