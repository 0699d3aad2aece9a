"""What linting a skill folder finds: findings, each naming a rule, and the report of one folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ('CHARACTERS_PER_TOKEN', 'SPEC_RULES', 'Finding', 'Severity', 'SkillReport')

Severity = Literal['error', 'warning']


SPEC_RULES = frozenset(
    {'frontmatter', 'unknown-field', 'name', 'name-folder', 'description', 'description-length', 'compatibility'}
)
"""Rules of the Agent Skills format itself; the rest are skillshelf's lint."""


CHARACTERS_PER_TOKEN = 4
"""A rough, model-independent estimate used for every token count the command line shows."""


@dataclass(frozen=True)
class Finding:
    """One problem with one skill."""

    rule: str
    """Stable rule id, e.g. `name-folder` or `description-short`."""
    severity: Severity
    """`error` fails `skillshelf validate`; `warning` fails it only with `--strict`."""
    message: str
    """What is wrong and how to fix it."""

    @property
    def spec(self) -> bool:
        """Whether the rule is the Agent Skills format's own (see `SPEC_RULES`)."""
        return self.rule in SPEC_RULES


@dataclass
class SkillReport:
    """Everything found about one skill folder."""

    folder: Path
    """The skill folder."""
    name: str | None
    """The skill's name when the frontmatter has a readable one."""
    findings: list[Finding]
    """Problems, in the order they were found."""

    @property
    def errors(self) -> list[Finding]:
        """Findings that make the skill invalid."""
        return [finding for finding in self.findings if finding.severity == 'error']

    @property
    def warnings(self) -> list[Finding]:
        """Advice: the skill works, but could be easier to find or use."""
        return [finding for finding in self.findings if finding.severity == 'warning']
