"""Checking `SKILL.md` folders against the Agent Skills format and skillshelf's own authoring advice.

Every finding names a rule. Rules in `SPEC_RULES` are the format's own, and agree with the reference
validator `skills-ref` (a test proves it on real skills); the others are skillshelf's lint: what the
library refuses to load, and advice that makes a skill easier for a model to pick and use.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from ...errors import SkillFormatError, SkillFormatWarning, SkillWarning
from ...markdown.frontmatter import SKILL_FILE, read_body
from ...skill import Skill
from ...sources.directory import skill_folders
from ...sources.misplaced import where_skills_are
from .body_rules import check_body
from .frontmatter_rules import check_fields, frontmatter_fields
from .report import CHARACTERS_PER_TOKEN, SPEC_RULES, Finding, Severity, SkillReport

__all__ = (
    'CHARACTERS_PER_TOKEN',
    'SPEC_RULES',
    'Finding',
    'Severity',
    'SkillReport',
    'lint_directories',
    'lint_folder',
    'skill_folders',
)


def lint_directories(
    directories: Sequence[Path], *, progress: Callable[[int], Callable[[], None]] | None = None
) -> tuple[list[SkillReport], list[str]]:
    """Lint every skill folder in `directories`; also returns problems with the directories themselves.

    `progress`, if given, is called once with the number of folders and returns a callback run after each one.
    """
    reports: list[SkillReport] = []
    problems: list[str] = []
    seen: dict[str, Path] = {}
    found: list[Path] = []
    for directory in directories:
        if not directory.is_dir():
            problems.append(f'{directory}: the directory does not exist')
            continue
        folders = skill_folders(directory)
        misnamed = _misnamed_skill_files(directory, folders)
        problems.extend(f'{path}: skillshelf reads only {SKILL_FILE}; rename the file' for path in misnamed)
        if not folders and not misnamed:
            advice = where_skills_are(directory)
            problems.append(
                f'{directory}: no skill folder (a folder holding a {SKILL_FILE}) was found'
                + (f'; {advice}' * bool(advice))
            )
        found.extend(folders)
    advance = progress(len(found)) if progress is not None else None
    for folder in found:
        report = lint_folder(folder)
        if advance is not None:
            advance()
        if report.name is not None and report.name in seen:
            report.findings.append(
                Finding(
                    'shadowed',
                    'warning',
                    f'another skill named {report.name!r} is in {seen[report.name]}; the earlier one wins',
                )
            )
        elif report.name is not None:
            seen[report.name] = folder
        reports.append(report)
    return reports, problems


def _misnamed_skill_files(directory: Path, folders: Sequence[Path]) -> list[Path]:
    """`skill.md` files (any case but the right one) that other tools accept and skillshelf would not find."""
    try:
        children = sorted(child for child in directory.iterdir() if child.is_dir() and not child.name.startswith('.'))
    except OSError:
        children = []
    candidates = [directory, *children]
    misnamed: list[Path] = []
    for folder in candidates:
        if folder in folders or (folder == directory and folders):
            continue
        try:
            names = sorted(path.name for path in folder.iterdir())
        except OSError:
            continue  # an unreadable folder holds nothing skillshelf could load either
        misnamed.extend(folder / name for name in names if name.lower() == 'skill.md' and name != SKILL_FILE)
    return misnamed


def lint_folder(folder: Path) -> SkillReport:
    """Check one skill folder: the format's rules, whether skillshelf can load it, and authoring advice."""
    skill_file = folder / SKILL_FILE
    findings: list[Finding] = []
    data = frontmatter_fields(skill_file, findings)
    name: str | None = None
    if data is not None:
        name = check_fields(folder, data, findings)
    _check_loads(folder, findings)
    try:
        body = read_body(skill_file)
    except SkillFormatError as error:
        if not any(finding.severity == 'error' for finding in findings):
            findings.append(Finding('loads', 'error', f'skillshelf cannot load the skill: {error.problem}'))
    else:
        check_body(folder, body, findings)
    return SkillReport(folder, name, findings)


def _check_loads(folder: Path, findings: list[Finding]) -> None:
    """Report what the library itself refuses or repairs, unless a format rule already explains it. What it loads
    despite the format (a `SkillFormatWarning`: a name that differs from its folder, YAML only Claude Code reads)
    is reported by the format's own rules, so it is not repeated here."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            Skill.from_folder(folder)
        except SkillFormatError as error:
            if not any(finding.severity == 'error' for finding in findings):
                findings.append(Finding('loads', 'error', f'skillshelf cannot load the skill: {error.problem}'))
            return
    for warning in caught:
        if issubclass(warning.category, SkillWarning) and not issubclass(warning.category, SkillFormatWarning):
            findings.append(Finding('loads', 'warning', str(warning.message).split(': ', 1)[-1]))
