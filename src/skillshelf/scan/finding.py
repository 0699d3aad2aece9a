"""What the content scan reports: a `Finding` names the skill, file, line, rule and severity, with a sentence a
person understands; `ScanMode` is what a library does with them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ('SEVERITIES', 'SHOWN', 'Finding', 'Hit', 'ScanMode', 'Severity', 'check_mode', 'refusal')

Severity = Literal['critical', 'warning', 'info']
"""How sure and how bad: `critical` is an objective sign of an attack (a scan in `refuse` mode skips the skill),
`warning` is something a reviewer should read, `info` is worth knowing."""
SEVERITIES: tuple[Severity, ...] = ('critical', 'warning', 'info')
"""The severities, worst first."""
ScanMode = Literal['warn', 'refuse', 'off']
"""What a library does with a skill's findings: `refuse` skips a skill with a critical finding (with a
`SkillWarning`) and warns about the rest, `warn` loads every skill and warns, `off` does not scan."""
Hit = tuple[int, str, Severity, str]
"""`(line, rule, severity, message)`: a finding of a rule, before it is given its skill and file."""
_MODES = ('warn', 'refuse', 'off')
SHOWN = 3
"""Critical findings named in one refusal or warning; the rest are counted."""


@dataclass(frozen=True, order=True)
class Finding:
    """One thing the scan found in one skill."""

    skill: str
    """The skill's name."""
    file: str
    """The file, relative to the skill (`SKILL.md` for its instructions)."""
    line: int
    """The line (from 1) where it is; 0 for the skill as a whole."""
    rule: str
    """The rule that found it (`remote-code`, `hidden-unicode`, ...)."""
    severity: Severity
    """`critical`, `warning` or `info`."""
    message: str
    """What was found and why it matters, in a sentence."""

    def __str__(self) -> str:
        where = f'{self.file}:{self.line}' if self.line else self.file
        return f'{self.skill}: {where}: {self.severity} [{self.rule}] {self.message}'


def check_mode(value: object) -> ScanMode:
    """`value` as a scan mode.

    Raises:
        ValueError: it is not one of `warn`, `refuse`, `off`.
    """
    if value not in _MODES:
        raise ValueError(f"the `scan` option must be 'warn', 'refuse' or 'off', not {value!r}")
    return value  # pyright: ignore[reportReturnType]


def refusal(critical: list[Finding], remedy: str = "load it with `scan='warn'`") -> str:
    """Why a skill is refused, in words: its first critical findings, and what to do (`remedy`)."""
    shown = '; '.join(
        f'{finding.file}:{finding.line}: {finding.message} [{finding.rule}]' for finding in critical[:SHOWN]
    )
    more = f' (and {len(critical) - SHOWN} more)' if len(critical) > SHOWN else ''
    return (
        f'refused by the content scan: {shown}{more}. Read the skill; if you trust it, {remedy} '
        '(`skillshelf scan` shows every finding)'
    )
