"""Skills a library directory holds where discovery does not read them, in hidden folders (`skills/.curated`) or in
sub-folders of its folders (a repository's `skills/`): found only to say where they are, in the reports of
`discover` and the linter."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from ..markdown.frontmatter import SKILL_FILE

__all__ = ('HINT_SCAN_LIMIT', 'holds_skills', 'is_folder', 'where_skills_are')

HINT_SCAN_LIMIT = 1000
"""Entries of a folder looked at to tell whether it holds skill folders, for the advice of a skip."""


def where_skills_are(directory: Path, *, nested: bool = True) -> str:
    """Where the skills are when `directory` yields none, as advice (`''` when nothing can be seen): its hidden
    folders that hold skill folders (OpenAI's library keeps every skill in `skills/.curated`, `skills/.system`,
    `skills/.experimental`, and hidden folders are not read), and with `nested` its folders that hold skill folders
    (a repository root, whose skills are in `skills/`). Looks two levels down, one `stat` per entry."""
    hidden: list[str] = []
    parents: list[str] = []
    try:
        with os.scandir(directory) as scan:
            entries = sorted((entry for entry in scan if is_folder(entry)), key=lambda e: e.name)
    except OSError:
        return ''
    for entry in entries:
        if entry.name.startswith('.'):
            if entry.name != '.git' and holds_skills(entry.path):
                hidden.append(entry.name)
        elif nested and not os.path.lexists(os.path.join(entry.path, SKILL_FILE)) and holds_skills(entry.path):
            parents.append(entry.name)  # a skill folder, even a broken one, is reported as itself
    advice: list[str] = []
    if hidden:
        advice.append(
            f'its hidden folder{"s" if len(hidden) > 1 else ""} {", ".join(hidden)} hold skill folders, and hidden '
            f'folders are not read: list {"each" if len(hidden) > 1 else "it"} as a directory (e.g. '
            f'{str(directory / hidden[0])!r})'
        )
    if parents:
        advice.append(
            f'its folder{"s" if len(parents) > 1 else ""} {", ".join(parents)} hold skill folders: list '
            f'{"each" if len(parents) > 1 else "it"} as a directory (e.g. {str(directory / parents[0])!r})'
        )
    return '; '.join(advice)


def holds_skills(folder: str) -> bool:
    """Whether `folder` is a skill folder or holds one (a folder with a `SKILL.md`) directly, among its first
    `HINT_SCAN_LIMIT` entries (this only makes advice, and a huge folder must not slow every read of the library)."""
    if os.path.isfile(os.path.join(folder, SKILL_FILE)):
        return True
    try:
        with os.scandir(folder) as scan:
            return any(
                is_folder(entry) and os.path.isfile(os.path.join(entry.path, SKILL_FILE))
                for entry in itertools.islice(scan, HINT_SCAN_LIMIT)
            )
    except OSError:
        return False


def is_folder(entry: os.DirEntry[str]) -> bool:
    """Whether the listed `entry` is a folder or a symlink to one (`False` when that cannot be told)."""
    try:
        return entry.is_dir()
    except OSError:
        return False
