"""The content scan where a library takes and serves skills (see `scan`), as `LibraryOptions.scan` says.

At build only what the model sees before loading a skill is scanned, from memory: its frontmatter (`scan_frontmatter`);
a critical finding there refuses the skill at once, as it would otherwise reach the catalog. Its body and files are
scanned at its first use (`SkillLibrary.get`), before the model reads anything of it or anything of it runs; the
verdict is kept for that version of the skill. So a library of thousands of skills starts as fast as unscanned, and a
skill never used is never read. Skills defined in Python are the application's own code and are not scanned.
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SkillWarning
from ..scan import SHOWN, Finding, ScanMode, refusal, scan_frontmatter, scan_skill
from ..skill import Skill
from ..sources.base import SkippedSkill

__all__ = ('Screen', 'flagged_messages')

_NOT_AGAIN = 'do not try to load it again: use another skill, or tell the user'


@dataclass
class Screen:
    """A library's scan: the frontmatter of each skill read, the rest of a skill at its first use."""

    mode: ScanMode
    """`refuse`, `warn` or `off`."""
    flagged: list[Finding] = field(default_factory=list[Finding])
    """Critical findings of skills kept (`warn`) at the last read."""
    _verdicts: dict[int, tuple[Skill[Any], str | None]] = field(
        default_factory=dict[int, tuple[Skill[Any], str | None]]
    )
    """By skill object (one per version read): the skill, and why it is refused (`None`: it is used)."""
    _refused_names: set[str] = field(default_factory=set[str])
    """Skills refused at their first use, checked again when the sources are read again (`withhold`)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def read(self) -> None:
        """A read of the sources begins: its flagged findings start afresh."""
        self.flagged = []

    def admits(self, skill: Skill[Any], skipped: list[SkippedSkill]) -> bool:
        """Whether `skill` is taken at build, by its frontmatter; a refused one is added to `skipped` with every
        reason."""
        if self.mode == 'off':
            return True
        critical = [finding for finding in scan_frontmatter(skill) if finding.severity == 'critical']
        if not critical:
            return True
        if self.mode == 'warn':
            self.flagged += critical
            return True
        skipped.append(SkippedSkill(Path(skill.origin or skill.name), refusal(critical)))
        return False

    def refused(self, skill: Skill[Any]) -> str | None:
        """Why `skill` is refused at its first use, for the model; `None` when it may be used. The first call for a
        version scans its body and files and warns the developer (`SkillWarning`) of each critical finding."""
        if self.mode == 'off' or skill.origin is None:
            return None
        with self._lock:
            kept = self._verdicts.get(id(skill))
            if kept is not None and kept[0] is skill:
                return kept[1]
            unread: list[str] = []
            critical = [finding for finding in scan_skill(skill, unread) if finding.severity == 'critical']
            reason = None
            if critical and self.mode == 'warn':
                warnings.warn(SkillWarning(flagged_messages(critical)[0]), stacklevel=4)
            elif critical:
                warnings.warn(SkillWarning(f'skill {skill.name!r} ({skill.origin}): {refusal(critical)}'), stacklevel=4)
                where = '; '.join(f'{f.file}:{f.line} {f.rule}' for f in critical[:SHOWN])
                reason = f'it was refused by the content scan ({where}); {_NOT_AGAIN}'
            if not unread:  # else scanned again at the next use: what could not be read now may be then
                self._verdicts[id(skill)] = (skill, reason)
            if reason is not None:
                self._refused_names.add(skill.name)
            return reason

    def withhold(self, skills: dict[str, Skill[Any]]) -> None:
        """Take out of a new read of the sources each skill refused at its first use whose version now is refused
        too (its findings are kept by file digest, so this costs little), so no catalog lists it again; one that was
        fixed comes back. The verdicts of versions no longer read are dropped."""
        for name in sorted(self._refused_names & skills.keys()):
            if self.refused(skills[name]) is not None:
                del skills[name]
            else:
                self._refused_names.discard(name)
        current = {id(skill) for skill in skills.values()}
        with self._lock:
            self._verdicts = {key: kept for key, kept in self._verdicts.items() if key in current}


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
