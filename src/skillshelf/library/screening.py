"""The content scan at the door of a library: each skill a source hands over is scanned (see `scan`) before it is
taken, and one with a critical finding is refused (skipped with the reason, like a broken `SKILL.md`) or kept and
flagged, as `LibraryOptions.scan` says. Skills defined in Python are the application's own code and are not scanned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ranking.cache import CACHE_MIN_SKILLS
from ..scan import SHOWN, Finding, ScanMode, refusal, scan_skill
from ..scan.cache import findings_cache
from ..skill import Skill
from ..sources.base import SkippedSkill

__all__ = ('Screen', 'flagged_messages')


@dataclass
class Screen:
    """One read's scan: which skills pass, and the critical findings of those kept anyway."""

    mode: ScanMode
    """`refuse`, `warn` or `off`."""
    flagged: list[Finding] = field(default_factory=list[Finding])
    """Critical findings of skills kept (`warn`)."""
    scanned: int = 0
    """Skills scanned in this read."""

    def done(self) -> None:
        """The read is over: keep what was scanned for the next start (see `scan.cache`), for a library large
        enough that scanning it again would be felt (as its search index is kept)."""
        if self.scanned >= CACHE_MIN_SKILLS:
            findings_cache.save()

    def admits(self, skill: Skill[Any], skipped: list[SkippedSkill]) -> bool:
        """Whether `skill` is taken; a refused one is added to `skipped` with every reason."""
        if self.mode == 'off':
            return True
        self.scanned += 1
        critical = [finding for finding in scan_skill(skill) if finding.severity == 'critical']
        if not critical:
            return True
        if self.mode == 'warn':
            self.flagged += critical
            return True
        skipped.append(SkippedSkill(Path(skill.origin or skill.name), refusal(critical)))
        return False


def flagged_messages(flagged: list[Finding]) -> list[str]:
    """One warning per skill loaded despite critical findings (`scan='warn'`)."""
    by_skill: dict[str, list[Finding]] = {}
    for finding in flagged:
        by_skill.setdefault(finding.skill, []).append(finding)
    return [
        f"skill {name!r} has critical findings of the content scan and is loaded anyway (scan='warn'): "
        + '; '.join(f'{f.file}:{f.line}: {f.message} [{f.rule}]' for f in findings[:SHOWN])
        + (f' (and {len(findings) - SHOWN} more)' if len(findings) > SHOWN else '')
        for name, findings in by_skill.items()
    ]
