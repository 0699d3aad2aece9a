"""The directories a library reads, as sources, in order: those named (`directories`, `command_directories`), then the
usual locations of Claude Code, Codex and other Agent Skills clients (`standard_directories`).

The usual locations, earlier ones winning name clashes (project before user, as Codex and the Agent Skills client
guide order them; Claude Code itself lets a personal skill win over a project one):

1. `.claude/skills`, `.agents/skills`, then `.claude/commands` (command files), in the current working directory;
2. `~/.claude/skills` (`$CLAUDE_CONFIG_DIR/skills` when set), `~/.agents/skills`, `~/.codex/skills`
   (`$CODEX_HOME/skills` when set), then `~/.claude/commands`.

A usual location that does not exist is skipped without a word; a directory that is named and does not exist is an
error. A named directory holding Claude Code plugins (a plugin, a folder of plugins, a marketplace) is read as them,
its skills named `plugin:skill` (see `sources.plugins`). A named directory that is a repository's root (no `SKILL.md` of its own, and a `skills/` folder that is not a
skill folder either: Anthropic's, OpenAI's, obra/superpowers', Vercel's) is read from its `skills/` folder, as
`GitSource` reads a repository; hidden folders there that hold skills (OpenAI's `skills/.curated`, `skills/.system`)
and skill folders left at the root are named in a `SkillWarning`, since they are not read.
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

from ..errors import SkillError, SkillWarning
from ..files import ReadPolicy
from ..markdown.frontmatter import SKILL_FILE
from ..sources.commands import CommandDirectorySource
from ..sources.directory import DirectorySource
from ..sources.misplaced import HINT_SCAN_LIMIT, where_skills_are
from ..sources.plugins import PluginSource, plugin_layout

__all__ = ('DirectoryLike', 'directory_sources', 'standard_directories')

DirectoryLike = DirectorySource | CommandDirectorySource
"""A library directory of either kind: skill folders, or command files."""


def standard_directories(project: Path | None = None, home: Path | None = None) -> list[DirectoryLike]:
    """The usual skill locations (see the module's docstring) of `project` (default: the current working directory)
    and `home` (default: the user's home directory), each read only while it exists."""
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
    return [
        CommandDirectorySource(_absolute(path), optional=True)
        if commands
        else DirectorySource(_absolute(path), optional=True)
        for path, commands in places
    ]


def directory_sources(
    directories: Sequence[Path],
    command_directories: Sequence[Path],
    *,
    standard: bool,
    trusted: Sequence[Path],
    policy: ReadPolicy,
) -> list[DirectoryLike | PluginSource]:
    """The directories a library reads, in order: `directories`, `command_directories`, then with `standard` the usual
    locations not already listed (so running in the home directory reads `~/.claude/skills` once). Relative paths
    resolve against the working directory now. Skills found directly in a `trusted` directory get the Python tools
    they declare; each reads its files by `policy`.

    Raises:
        SkillError: a named directory is missing or not a directory, or a trusted directory is not one of
            `directories`.
    """
    named: list[DirectoryLike] = [DirectorySource(_absolute(path)) for path in directories]
    named += [CommandDirectorySource(_absolute(path)) for path in command_directories]
    for source in named:
        _check_exists(source)
    trusted_real = _trusted(trusted, [source.path for source in named if isinstance(source, DirectorySource)])
    seen = {os.path.realpath(source.path) for source in named}
    for source in standard_directories() if standard else []:
        if (real := os.path.realpath(source.path)) not in seen:
            seen.add(real)
            named.append(source)
    return [_with_policy(source, trusted_real, policy) for source in named]


def _with_policy(source: DirectoryLike, trusted: frozenset[str], policy: ReadPolicy) -> DirectoryLike | PluginSource:
    if isinstance(source, CommandDirectorySource):
        return CommandDirectorySource(source.path, policy, source.optional)
    is_trusted = not source.optional and os.path.realpath(source.path) in trusted
    if not source.optional and plugin_layout(source.path) is not None:
        return PluginSource(source.path, is_trusted, policy)
    folder = source.path if source.optional else repository_skills(source.path)
    return DirectorySource(folder, is_trusted, policy, source.optional)


def repository_skills(directory: Path) -> Path:
    """The folder of the named `directory` whose skill folders are read: its `skills/` folder at a repository's root
    (see the module's docstring), else itself; what is not read there is named in a `SkillWarning`."""
    conventional = directory / 'skills'
    at_root = (
        not os.path.lexists(directory / SKILL_FILE)
        and conventional.is_dir()
        and not os.path.lexists(conventional / SKILL_FILE)
    )
    folder = conventional if at_root else directory
    unread: list[str] = []
    if at_root and (left := _skill_folders(directory)):
        unread.append(
            f'the skill folder{"s" if len(left) > 1 else ""} {", ".join(left)} at its root '
            f'{"are" if len(left) > 1 else "is"} not read: a skill folder may be listed in `directories` itself '
            f'(e.g. {str(directory / left[0])!r})'
        )
    # Hidden folders first: one listing finds them, where visible skill folders cost a `stat` each.
    if (hidden := where_skills_are(folder, nested=False)) and _skill_folders(folder):
        unread.append(hidden)  # without a visible skill, the read reports the directory as empty, with this advice
    if unread:
        where = 'read from its skills/ folder; ' if at_root else ''
        warnings.warn(SkillWarning(f'the skill directory {str(directory)!r}: {where}{"; ".join(unread)}'), stacklevel=4)
    return folder


def _skill_folders(directory: Path) -> list[str]:
    """The visible folders of `directory` that hold a `SKILL.md`, by name, among its first `HINT_SCAN_LIMIT`
    entries (this only makes advice, read once when the library is built)."""
    try:
        with os.scandir(directory) as scan:
            entries = list(itertools.islice(scan, HINT_SCAN_LIMIT))
    except OSError:
        return []
    return sorted(
        entry.name
        for entry in entries
        if not entry.name.startswith('.') and os.path.isfile(os.path.join(entry.path, SKILL_FILE))
    )


def _check_exists(source: DirectoryLike) -> None:
    """Refuse a named directory that is missing or not a directory (a usual location may be missing)."""
    if source.path.is_dir():
        return
    option = '`command_directories`' if isinstance(source, CommandDirectorySource) else '`directories`'
    problem = 'is not a directory' if os.path.lexists(source.path) else 'does not exist'
    raise SkillError(
        f'the skill directory {str(source.path)!r} (in {option}) {problem}; fix the path or create it '
        f'(relative paths resolve against the working directory, {os.getcwd()!r})'
    )


def _trusted(trusted_directories: Sequence[Path], directories: Sequence[Path]) -> frozenset[str]:
    """The real paths of `trusted_directories`, each of which must be one of the library `directories`."""
    listed = {os.path.realpath(directory) for directory in directories}
    trusted = {os.path.realpath(directory.expanduser()): directory for directory in trusted_directories}
    for real, directory in trusted.items():
        if real not in listed:
            raise SkillError(
                f'the trusted directory {str(directory)!r} is not one of the skill directories; list it in '
                '`directories` too (only the skills found directly in it get their declared tools)'
            )
    return frozenset(trusted)


def _absolute(path: str | Path) -> Path:
    return Path(os.path.abspath(Path(path).expanduser()))
