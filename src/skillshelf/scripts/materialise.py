"""A skill's files in a workspace: copied, through the workspace's own file protocol (so a remote sandbox works too),
to a stable path the skill's instructions, its scripts and the agent's other tools can all use.

The copy is `<working directory>/.skillshelf/skills/<name>/`. A manifest of content hashes beside the files makes a
second load of an unchanged skill cheap: only the files whose bytes changed since are written again, and files the
skill no longer has are removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic_ai.workspaces import Workspace

from ..content.base import MAX_FILE_BYTES
from ..errors import ResourceError
from ..skill import Skill

__all__ = ('MAX_COPIED_FILE_BYTES', 'SKILLS_FOLDER', 'Copied', 'copy_skill', 'skill_folder')

SKILLS_FOLDER = '.skillshelf/skills'
"""Where skills' files are copied, relative to the workspace's working directory."""
MAX_COPIED_FILE_BYTES = MAX_FILE_BYTES
"""A skill file larger than this (64 MiB) is not copied into the workspace (and the load says so)."""
_MANIFEST = '.skillshelf-manifest.json'


@dataclass(frozen=True)
class Copied:
    """What copying a skill into a workspace did."""

    folder: str
    """The skill's folder in the workspace, absolute."""
    written: int
    """Files written (new or changed)."""
    left_out: tuple[str, ...] = ()
    """Files that could not be copied, each with the reason."""


async def skill_folder(workspace: Workspace, name: str) -> str:
    """The absolute path of skill `name`'s folder in `workspace`."""
    return posixpath.join(await workspace.working_dir(), SKILLS_FOLDER, name)


async def copy_skill(workspace: Workspace, skill: Skill[Any]) -> Copied:
    """Copy `skill`'s files into `workspace` (see the module docstring); unchanged files are not written again.

    Raises:
        WorkspaceError: the workspace refused a write (its own errors pass through).
    """
    folder = await skill_folder(workspace, skill.name)
    files, left_out = await asyncio.to_thread(_read_files, skill)
    manifest_path = posixpath.join(folder, _MANIFEST)
    before = await _manifest(workspace, manifest_path)
    after = {path: hashlib.sha256(data).hexdigest() for path, data in files.items()}
    written = 0
    for path, data in files.items():
        if before.get(path) != after[path]:
            await workspace.write_bytes(posixpath.join(folder, path), data)
            written += 1
    for path in sorted(before.keys() - after.keys()):
        with contextlib.suppress(FileNotFoundError):
            await workspace.remove(posixpath.join(folder, path))
    if written or before.keys() != after.keys() or not before:
        await workspace.write_bytes(manifest_path, json.dumps(after, sort_keys=True).encode())
    return Copied(folder, written, tuple(left_out))


def _read_files(skill: Skill[Any]) -> tuple[dict[str, bytes], list[str]]:
    """The skill's files by relative path, read where they are kept; those that cannot be read, with why."""
    files: dict[str, bytes] = {}
    left_out: list[str] = []
    for path in skill.content.list_files():
        try:
            files[path] = skill.content.read_bytes(path, MAX_COPIED_FILE_BYTES)
        except ResourceError as error:
            left_out.append(f'{path} ({error})')
    return files, left_out


async def _manifest(workspace: Workspace, path: str) -> Mapping[str, str]:
    try:
        loaded: object = json.loads(await workspace.read_bytes(path))
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {str(key): str(value) for key, value in loaded.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
