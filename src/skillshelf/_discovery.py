"""Finding `SKILL.md` skill folders in library directories."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._errors import SkillFormatError
from ._markdown import SKILL_FILE
from ._skill import Skill


@dataclass(frozen=True)
class SkippedSkill:
    """A `SKILL.md` that could not be used, and why."""

    path: Path
    """The file (or directory) at fault."""
    problem: str
    """What is wrong with it."""


@dataclass
class Discovery:
    """What one library directory holds."""

    skills: list[Skill[Any]]
    """Valid skills, ordered by folder name."""
    skipped: list[SkippedSkill]
    """Folders with a `SKILL.md` that failed to parse."""


def discover(directory: Path) -> Discovery:
    """Read the skills in `directory`: itself if it holds a `SKILL.md`, else each immediate sub-folder that does.

    Folders are visited in sorted order so that every process sees the same library; hidden folders
    (starting with `.`) are ignored. A broken skill is reported in `skipped` and never hides the others.
    """
    found = Discovery(skills=[], skipped=[])
    if not directory.is_dir():
        found.skipped.append(SkippedSkill(directory, 'the directory does not exist'))
        return found
    if (directory / SKILL_FILE).exists():
        _read_into(found, directory)
        return found
    try:
        children = sorted(child for child in directory.iterdir() if not child.name.startswith('.'))
    except OSError as error:
        found.skipped.append(SkippedSkill(directory, f'cannot list the directory ({error.strerror or error})'))
        return found
    for child in children:
        if _is_skill_folder(child):
            _read_into(found, child)
    return found


def _is_skill_folder(path: Path) -> bool:
    try:
        return path.is_dir() and (path / SKILL_FILE).exists()
    except OSError:
        return False


def _read_into(found: Discovery, folder: Path) -> None:
    try:
        found.skills.append(Skill.from_folder(folder))
    except SkillFormatError as error:
        found.skipped.append(SkippedSkill(error.path or folder, error.problem))
