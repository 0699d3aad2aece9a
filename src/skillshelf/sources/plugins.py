"""Claude Code plugins as a library directory: a plugin folder (`.claude-plugin/plugin.json`, with its skills in
`skills/` and in any folders the manifest's `skills` names), a folder of plugin folders, or a marketplace
(`.claude-plugin/marketplace.json`, listing plugins by a local `source` and, optionally, their `skills`). Each skill is
named `plugin:skill`, as Claude Code names a plugin's skills, so two plugins' skills of one name both load.

A marketplace's plugin whose source is the marketplace's own folder (`"./"`: Anthropic's skills repository lists its
own `skills/` as plugins that way) is that repository, and is read as one, from `skills/` under the skills' own names
(`locations.repository_skills`); a plugin the marketplace fetches from elsewhere (git, a package) is reported, never
fetched. Paths in a manifest stay inside the plugin's folder (and a plugin's inside its marketplace's).
"""

from __future__ import annotations

import json
import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, cast

from ..files import DEFAULT_READ_POLICY, ReadPolicy
from ..markdown.names import name_problem
from .base import SkippedSkill, SourceSkills
from .directory import discover, fingerprint, path_key

__all__ = ('MANIFEST', 'MARKETPLACE', 'Plugin', 'PluginSource', 'plugin_layout')

MANIFEST = Path('.claude-plugin', 'plugin.json')
"""A plugin's manifest, beneath its folder."""
_MANIFEST = str(MANIFEST)
MARKETPLACE = Path('.claude-plugin', 'marketplace.json')
"""A marketplace's list of plugins, beneath its folder."""
MAX_MANIFEST_BYTES = 1 << 20
"""A manifest or marketplace file larger than this is not read."""


@dataclass(frozen=True)
class Plugin:
    """One plugin of a library directory: its name and the folders its skills are read from."""

    name: str
    """The plugin's name, the first half of its skills' names."""
    folders: tuple[Path, ...]
    """Each a skill folder or a folder of skill folders."""


@dataclass(frozen=True)
class Layout:
    """What a library directory holds as plugins."""

    plugins: tuple[Plugin, ...] = ()
    """The plugins whose skills are read."""
    problems: tuple[SkippedSkill, ...] = ()
    """Manifests and plugins that cannot be read, each with why."""
    manifests: tuple[Path, ...] = field(default=(), repr=False)
    """The manifest and marketplace files read, whose changes make the directory read again."""


def plugin_layout(directory: Path) -> Layout | None:
    """The plugins of `directory` (see the module docstring); `None` when it holds none, so it is read as usual."""
    if (directory / MANIFEST).is_file():
        plugin, problems = _plugin(directory, None, directory)
        return Layout(() if plugin is None else (plugin,), tuple(problems), (directory / MANIFEST,))
    if (directory / MARKETPLACE).is_file():
        return _marketplace(directory)
    try:
        with os.scandir(directory) as scan:
            folders = sorted(entry.path for entry in scan if not entry.name.startswith('.') and entry.is_dir())
    except OSError:
        return None
    members = [Path(folder) for folder in folders if _has_manifest(folder)]
    if not members:
        return None
    plugins: list[Plugin] = []
    problems: list[SkippedSkill] = []
    for member in members:
        plugin, found = _plugin(member, None, directory)
        plugins += [] if plugin is None else [plugin]
        problems += found
    return Layout(tuple(plugins), tuple(problems), tuple(member / MANIFEST for member in members))


def _has_manifest(folder: str) -> bool:
    # A string and `os.access`, which raises nothing for a missing file: a library of thousands of skill folders is
    # looked through at every start (`os.path.isfile` of a joined `Path` took twice the time).
    manifest = f'{folder}{os.sep}{_MANIFEST}'
    return os.access(manifest, os.F_OK) and os.path.isfile(manifest)


@dataclass(frozen=True)
class PluginSource:
    """A library directory of Claude Code plugins (see `plugin_layout`), its skills named `plugin:skill`."""

    path: Path
    """The directory, absolute: a plugin, a folder of plugins, or a marketplace."""
    trusted: bool = False
    """Import the Python tools its skills declare (`python-tools:`); importing runs code from the folder."""
    policy: ReadPolicy = DEFAULT_READ_POLICY
    """How the files of its skill folders may be read."""
    reports_version: ClassVar[bool] = True

    def version(self) -> Hashable:
        """The manifests' and the skill folders' listings: changes when a manifest or a skill changes."""
        layout = plugin_layout(self.path) or Layout()
        folders = [folder for plugin in layout.plugins for folder in plugin.folders]
        return (tuple(path_key(manifest) for manifest in layout.manifests), fingerprint(folders))

    def read_skills(self) -> SourceSkills:
        """Every plugin's skills, in the order the plugins and their folders are listed."""
        found = SourceSkills(version=self.version())
        layout = plugin_layout(self.path)
        if layout is None:
            found.skipped.append(SkippedSkill(self.path, 'it no longer holds a Claude Code plugin or marketplace'))
            return found
        found.skipped += layout.problems
        for plugin in layout.plugins:
            for folder in plugin.folders:
                part = discover(folder, policy=self.policy, trusted=self.trusted, plugin=plugin.name)
                found.skills += part.skills
                found.skipped += part.skipped
                found.deviations += part.deviations
        if not found.skills and not found.skipped:
            found.skipped.append(SkippedSkill(self.path, 'its plugins hold no skill'))
        return found


def _plugin(folder: Path, entry: Mapping[str, Any] | None, root: Path) -> tuple[Plugin | None, list[SkippedSkill]]:
    """The plugin in `folder`: named by its manifest (or the marketplace's `entry`, or the folder), its skills in
    `skills/` and the manifest's `skills` paths (a marketplace entry's `skills` replace both)."""
    manifest: Mapping[str, Any] = {}
    problems: list[SkippedSkill] = []
    if (folder / MANIFEST).is_file():
        read = _json(folder / MANIFEST)
        if isinstance(read, str):
            return None, [SkippedSkill(folder / MANIFEST, read)]
        manifest = read
    name = (entry or {}).get('name') or manifest.get('name') or folder.name
    problem = name_problem(name) if isinstance(name, str) else 'it is not text'
    if problem is not None:
        where = folder / MANIFEST if entry is None else root / MARKETPLACE
        return None, [SkippedSkill(where, f'the plugin name {name!r} cannot name skills: {problem}')]
    given = entry is not None and 'skills' in entry
    listed = cast('Mapping[str, Any]', entry)['skills'] if given else manifest.get('skills')
    folders: list[Path] = []
    if not given and (folder / 'skills').is_dir():
        folders.append(folder / 'skills')
    for path in _paths(listed):
        target = Path(os.path.normpath(folder / path))
        if not _inside(target, folder):
            problems.append(SkippedSkill(target, f'the plugin {name!r} lists skills outside its folder: {path!r}'))
        elif not target.is_dir():
            problems.append(SkippedSkill(target, f'the plugin {name!r} lists skills in {path!r}, which is no folder'))
        elif target not in folders and target.parent not in folders:  # a skill of `skills/` is read already
            folders.append(target)
    return Plugin(name, tuple(folders)), problems


def _marketplace(root: Path) -> Layout | None:
    """The plugins a marketplace lists with a local source (see the module docstring); `None` when every one is the
    marketplace's own folder, a repository read as usual."""
    where = root / MARKETPLACE
    read = _json(where)
    if isinstance(read, str):
        return Layout(problems=(SkippedSkill(where, read),), manifests=(where,))
    entries = cast(object, read.get('plugins'))
    if not isinstance(entries, list):
        return Layout(problems=(SkippedSkill(where, 'it has no `plugins` list'),), manifests=(where,))
    metadata = cast(object, read.get('metadata'))
    base = cast('Mapping[str, Any]', metadata).get('pluginRoot', '') if isinstance(metadata, Mapping) else ''
    plugins: list[Plugin] = []
    problems: list[SkippedSkill] = []
    manifests = [where]
    own = 0
    for item in cast('list[object]', entries):
        if not isinstance(item, Mapping):
            problems.append(SkippedSkill(where, f'a plugin entry is not a mapping: {item!r}'))
            continue
        entry = cast('Mapping[str, Any]', item)
        source = entry.get('source')
        if not isinstance(source, str):
            problems.append(SkippedSkill(where, f'the plugin {entry.get("name")!r} comes from {source!r}: not fetched'))
            continue
        folder = Path(os.path.normpath(root / (base if isinstance(base, str) else '') / source))
        if folder == Path(os.path.normpath(root)):
            own += 1
            continue
        if not _inside(folder, root) or not folder.is_dir():
            problems.append(SkippedSkill(where, f'the plugin {entry.get("name")!r} has no folder here: {source!r}'))
            continue
        plugin, found = _plugin(folder, entry, root)
        plugins += [] if plugin is None else [plugin]
        problems += found
        manifests += [folder / MANIFEST] if (folder / MANIFEST).is_file() else []
    if own and not plugins and not problems:
        return None
    return Layout(tuple(plugins), tuple(problems), tuple(manifests))


def _json(path: Path) -> Mapping[str, Any] | str:
    """The JSON object in `path`, or why it cannot be read."""
    try:
        if os.stat(path).st_size > MAX_MANIFEST_BYTES:
            return f'the file is over {MAX_MANIFEST_BYTES:,} bytes'
        value = json.loads(path.read_bytes())
    except (OSError, ValueError) as error:
        return f'cannot be read as JSON ({error})'
    if not isinstance(value, dict):
        return 'it is not a JSON object'
    return cast('Mapping[str, Any]', value)


def _paths(listed: object) -> Sequence[str]:
    """A manifest's `skills`: one path or a list of them."""
    if isinstance(listed, str):
        return [listed]
    if isinstance(listed, list):
        return [item for item in cast('list[object]', listed) if isinstance(item, str)]
    return []


def _inside(path: Path, folder: Path) -> bool:
    real, root = os.path.realpath(path), os.path.realpath(folder)
    return real == root or real.startswith(os.path.join(root, ''))
