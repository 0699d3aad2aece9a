"""The directories a library reads, in order: those named (`directories`, `command_directories`), then the usual
locations of Claude Code, Codex and other Agent Skills clients (`standard_directories`).

The usual locations, earlier ones winning name clashes (project before user, as Codex and the Agent Skills client
guide order them; Claude Code itself lets a personal skill win over a project one):

1. `.claude/skills`, `.agents/skills`, then `.claude/commands` (command files), in the current working directory;
2. `~/.claude/skills` (`$CLAUDE_CONFIG_DIR/skills` when set), `~/.agents/skills`, `~/.codex/skills`
   (`$CODEX_HOME/skills` when set), then `~/.claude/commands`.

A usual location that does not exist is skipped without a word; a directory that is named and does not exist is an
error (`check_named`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .command_files import commands_fingerprint, discover_commands
from .discovery import Discovery, Fingerprint, discover, fingerprint
from .errors import SkillError

__all__ = (
    'LibraryDirectory',
    'check_named',
    'directories_fingerprint',
    'library_directories',
    'read_directory',
    'standard_directories',
)


@dataclass(frozen=True)
class LibraryDirectory:
    """One directory a library reads."""

    path: Path
    """The directory, absolute: resolved once, against the working directory at construction."""
    commands: bool = False
    """It holds command files (`*.md`, Claude Code's `.claude/commands`), not skill folders."""
    optional: bool = False
    """A usual location: read when it exists, skipped silently when it does not."""

    @classmethod
    def named(cls, path: str | Path, *, commands: bool = False) -> LibraryDirectory:
        """A directory the user named; a relative path resolves against the current working directory, now."""
        return cls(Path(os.path.abspath(Path(path).expanduser())), commands)


def standard_directories(project: Path | None = None, home: Path | None = None) -> list[LibraryDirectory]:
    """The usual skill locations (see the module's docstring) of `project` (default: the current working directory)
    and `home` (default: the user's home directory)."""
    project = Path(os.path.abspath(project or Path.cwd()))
    home = home or Path.home()
    claude = Path(os.environ.get('CLAUDE_CONFIG_DIR') or home / '.claude')
    codex = Path(os.environ.get('CODEX_HOME') or home / '.codex')
    places = [
        (project / '.claude' / 'skills', False),
        (project / '.agents' / 'skills', False),
        (project / '.claude' / 'commands', True),
        (claude / 'skills', False),
        (home / '.agents' / 'skills', False),
        (codex / 'skills', False),
        (claude / 'commands', True),
    ]
    return [LibraryDirectory(Path(os.path.abspath(path)), commands, optional=True) for path, commands in places]


def library_directories(
    directories: Sequence[str | Path], command_directories: Sequence[str | Path], standard: bool
) -> tuple[LibraryDirectory, ...]:
    """The directories a library reads, in order: `directories`, `command_directories`, then with `standard` the
    usual locations that are not already listed (so running in the home directory reads `~/.claude/skills` once).

    Raises:
        SkillError: a named directory is missing or not a directory (see `check_named`).
    """
    named = [LibraryDirectory.named(path) for path in directories]
    named += [LibraryDirectory.named(path, commands=True) for path in command_directories]
    check_named(named)
    seen = {os.path.realpath(directory.path) for directory in named}
    for directory in standard_directories() if standard else []:
        if (real := os.path.realpath(directory.path)) not in seen:
            seen.add(real)
            named.append(directory)
    return tuple(named)


def check_named(directories: Sequence[LibraryDirectory]) -> None:
    """Refuse a named directory that is missing or not a directory (a usual location may be missing).

    Raises:
        SkillError: naming the path, and the working directory a relative path was resolved against.
    """
    for directory in directories:
        if directory.optional or directory.path.is_dir():
            continue
        option = '`command_directories`' if directory.commands else '`directories`'
        problem = 'is not a directory' if os.path.lexists(directory.path) else 'does not exist'
        raise SkillError(
            f'the skill directory {str(directory.path)!r} (in {option}) {problem}; fix the path or create it '
            f'(relative paths resolve against the working directory, {os.getcwd()!r})'
        )


def read_directory(directory: LibraryDirectory, *, allow_hard_links: bool, trusted: bool) -> Discovery:
    """The skills of one directory; nothing, and no report, for a usual location that does not exist."""
    if directory.optional and not os.path.lexists(directory.path):
        return Discovery(fingerprint=directories_fingerprint([directory]))
    if directory.commands:
        return discover_commands(directory.path, allow_hard_links=allow_hard_links)
    return discover(directory.path, allow_hard_links=allow_hard_links, trusted=trusted)


def directories_fingerprint(directories: Sequence[LibraryDirectory]) -> Fingerprint:
    """`discovery.fingerprint` over directories of both kinds: it changes when a usual location appears, too."""
    return tuple(
        part
        for directory in directories
        for part in (commands_fingerprint if directory.commands else _skills_fingerprint)(directory.path)
    )


def _skills_fingerprint(path: Path) -> Fingerprint:
    return fingerprint([path])
