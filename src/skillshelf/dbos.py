"""Durable agents on DBOS: `SkillSteps` records each call of a `Skills` capability's tools as a DBOS step.

Needs the `durable` extra (`pip install 'skillshelf[durable]'`); see docs/durable.md.
"""

from .capability.dbos_steps import SkillSteps

__all__ = ('SkillSteps',)
