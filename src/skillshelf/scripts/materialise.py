"""A skill's files in a workspace: copied, through the workspace's own file protocol (so a remote sandbox works too),
to a stable path the skill's instructions, its scripts and the agent's other tools can all use.

The copy is `<working directory>/.skillshelf/skills/<name>/`. Every time it is used (a load, a script run) it is
checked against the skill's own bytes, not against anything kept in the workspace, which any script there could
rewrite: one command in the workspace hashes the copy's files; a file whose bytes differ, that is a link, or that
has other hard links (a script may have planted one to write through later) is replaced, and anything the skill does
not hold is removed. So an unchanged copy costs one command, and a tampered one is put right before it runs. A
workspace that cannot run commands gets every file written again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import posixpath
from dataclasses import dataclass
from typing import Any

from pydantic_ai.exceptions import UserError
from pydantic_ai.workspaces import Workspace, WorkspaceError

from ..content.base import MAX_FILE_BYTES
from ..errors import ResourceError
from ..skill import Skill

__all__ = ('MAX_COPIED_FILE_BYTES', 'SKILLS_FOLDER', 'Copied', 'copy_skill', 'skill_folder')

SKILLS_FOLDER = '.skillshelf/skills'
"""Where skills' files are copied, relative to the workspace's working directory."""
MAX_COPIED_FILE_BYTES = MAX_FILE_BYTES
"""A skill file larger than this (64 MiB) is not copied into the workspace (and the load says so)."""
_CHECK_COPY = (
    'cd "$1" 2>/dev/null || exit 0; shift; '
    'for f; do if [ -f "$f" ] && [ ! -L "$f" ]; then '
    'printf "%s %s\\n" "$(stat -c %h "$f")" "$(sha256sum < "$f" | cut -c1-64)"; else echo "- -"; fi; done; '
    'find . ! -type d -print0'
)
"""For each of the skill's paths (`$2...`): its link count and hash, or `- -`; then every entry of the copy that is
not a folder, NUL-separated. Paths are arguments, never shell text."""
_CHECK_SECONDS = 60.0
"""How long the check may take (a copy a script filled with thousands of files); past it, every file is written."""


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
    """Copy `skill`'s files into `workspace`, or put its copy right (see the module docstring).

    Raises:
        WorkspaceError: the workspace refused a write (its own errors pass through).
    """
    folder = await skill_folder(workspace, skill.name)
    files, left_out = await asyncio.to_thread(_read_files, skill)
    expected = {path: hashlib.sha256(data).hexdigest() for path, data in files.items()}
    found = await _copy_as_found(workspace, folder, list(expected))
    hashes, entries = found or ({}, set[str]())
    extra = sorted(entries - expected.keys())
    for path in extra:  # first: a planted link to a folder must not take the skill's files
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            await workspace.remove(posixpath.join(folder, path))
    stale = [
        path
        for path in files
        if hashes.get(path) != expected[path] or any(path.startswith(f'{gone}/') for gone in extra)
    ]
    for path in stale:
        target = posixpath.join(folder, path)
        if found is None or path in entries:  # a link, or a file with other names: never written through
            with contextlib.suppress(FileNotFoundError):
                await workspace.remove(target)
        await workspace.write_bytes(target, files[path])
    return Copied(folder, len(stale), tuple(left_out))


async def _copy_as_found(workspace: Workspace, folder: str, paths: list[str]) -> tuple[dict[str, str], set[str]] | None:
    """The copy in `folder` as it is: the hash of each of `paths` that is a regular file with one name, and every
    entry there is (relative paths); `None` when the workspace cannot tell (it runs no commands, or the check
    failed), so everything is written again."""
    try:
        done = await workspace.run(
            ['/bin/sh', '-c', _CHECK_COPY, 'sh', folder, *(f'./{path}' for path in paths)], timeout=_CHECK_SECONDS
        )
    except (WorkspaceError, UserError, OSError):
        return None
    lines = done.stdout.split('\n', len(paths))
    if done.exit_code != 0 or len(lines) < len(paths):
        return None
    hashes = {path: line.split(' ')[1] for path, line in zip(paths, lines, strict=False) if line.startswith('1 ')}
    listing = lines[len(paths)] if len(lines) > len(paths) else ''
    entries = {entry.removeprefix('./') for entry in listing.split('\0') if entry}
    return hashes, entries


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
