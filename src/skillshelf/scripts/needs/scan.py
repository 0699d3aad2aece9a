"""A skill's needs from its files: its `compatibility` field, its scripts' `#!` lines, the imports and started
programs of its Python scripts, its shell scripts' commands, the Node packages its JavaScript loads and its shell
scripts and Markdown install (`npm install`), PEP 723 headers and `requirements.txt` files.

Nothing is run and nothing is fetched: the files are read through the skill's content, so a skill from a folder, a
package, a Git repository or a registry is read alike.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...errors import ResourceError, SkillError
from ..distributions import distribution_of
from ..script import INTERPRETERS, shebang_program
from .compatibility import COMPATIBILITY, compatibility_needs
from .model import Need, SkillNeeds, merge, normalise
from .node_source import javascript_packages, markdown_npm_installs
from .python_source import PythonFindings, python_needs, requirements_needs
from .shell import MAX_SHELL_BYTES, shell_commands

if TYPE_CHECKING:
    from ...content import SkillContent
    from ...skill import Skill

__all__ = ('MAX_SCRIPT_BYTES', 'scan_content', 'scan_skill')

MAX_SCRIPT_BYTES = 2 * 1024 * 1024
"""A file larger than this is not read (and the report says so): scripts are smaller, data files are not scripts."""
_SHEBANG_KINDS = {'python': 'python', 'python3': 'python', 'bash': 'bash', 'sh': 'bash', 'node': 'node'}
_READ_SUFFIXES = {'', *INTERPRETERS}
"""Files read at all: scripts by extension, and files without one (they may have a `#!` line); and Markdown."""


def scan_skill(skill: Skill[Any]) -> SkillNeeds:
    """What `skill` needs, from its files and its `compatibility` field."""
    compatibility = skill.metadata.get('compatibility')
    return scan_content(skill.name, skill.content, compatibility if isinstance(compatibility, str) else None)


def scan_content(name: str, content: SkillContent, compatibility: str | None = None) -> SkillNeeds:
    """What the skill `name` with `content` needs; `compatibility` is its field's text, if any."""
    files = content.list_files()
    local = _own_modules(files)
    sightings: list[tuple[Need, str]] = []
    stdlib: list[tuple[Need, str]] = []
    notes: list[str] = []
    if compatibility and compatibility.strip():
        sightings += [(need, COMPATIBILITY) for need in compatibility_needs(compatibility)]
    try:
        instructions = content.instructions()
    except SkillError as error:
        notes.append(f'SKILL.md: not read ({error})')
        instructions = ''
    sightings += [(Need('node-package', name), 'SKILL.md') for name in markdown_npm_installs(instructions)]
    for path in files:
        base = posixpath.basename(path)
        suffix = posixpath.splitext(base)[1].lower()
        if base.lower() == 'requirements.txt':
            text = _read(content, path, notes)
            if text is not None:
                sightings += [(need, path) for need in requirements_needs(path, text, notes)]
            continue
        if suffix == '.md':
            text = _read(content, path, notes)
            sightings += [(Need('node-package', name), path) for name in markdown_npm_installs(text or '')]
            continue
        if suffix not in _READ_SUFFIXES:
            continue
        text = _read(content, path, notes)
        if text is None:
            continue
        program = shebang_program(text.split('\n', 1)[0])
        kind = (
            INTERPRETERS.get(suffix)
            or _SHEBANG_KINDS.get(program or '')
            or ('python' if (program or '').startswith('python3') else None)
        )
        if kind == 'python':
            found: PythonFindings = python_needs(path, text, local)
            sightings += found.sightings
            stdlib += found.stdlib
            notes += found.notes
        elif kind == 'bash':
            sightings.append((Need('command', 'bash'), path))
            shell = shell_commands(text)
            sightings += [
                (Need('command', command, optional=optional), path) for command, optional in shell.commands.items()
            ]
            if shell.cut:
                notes.append(f'{path}: only its first {MAX_SHELL_BYTES // 1024} KiB were read for commands')
            if shell.unread:
                notes.append(f'{path}: {shell.unread} line(s) not read (an unclosed quote)')
            sightings += [(Need('node-package', name), path) for name in shell.node_packages]
        elif kind == 'node':
            packages = javascript_packages(text, module=suffix == '.mjs' or program == 'node')
            sightings += [(Need('node-package', name), path) for name in packages]
            if program == 'node' or packages:  # a .js without `#!` or npm packages may be a browser file
                sightings.append((Need('command', 'node'), path))
        elif kind is None and program is not None:
            sightings.append((Need('command', program), path))
    return SkillNeeds(name, _fold_modules(merge(sightings)), compatibility, tuple(notes), merge(stdlib))


def _read(content: SkillContent, path: str, notes: list[str]) -> str | None:
    """A file's text; `None` for a binary file, and a note for one that cannot be read."""
    try:
        data = content.read_bytes(path, MAX_SCRIPT_BYTES)
    except ResourceError as error:
        notes.append(f'{path}: not read ({error})')
        return None
    if b'\x00' in data[:8192]:
        return None
    return data.decode('utf-8-sig', 'replace')


def _own_modules(files: Iterable[str]) -> set[str]:
    """The top-level names the skill's own Python files can be imported by: each file's name and each folder
    holding one (a script's folder and the skill's folder are on `sys.path` when it runs, so `from office.helpers
    import x` in `scripts/` and `from scripts.util import y` are both the skill's own)."""
    names: set[str] = set()
    for path in files:
        if path.endswith('.py'):
            parts = path[:-3].split('/')
            names.update(part for part in parts if part and part != '__init__')
    return names


def _fold_modules(needs: tuple[Need, ...]) -> tuple[Need, ...]:
    """A module that a declared package provides is shown with that package, not twice."""
    packages = {normalise(need.name): need for need in needs if need.kind == 'package'}
    folded: dict[str, Need] = dict(packages)
    kept: list[Need] = []
    for need in needs:
        if need.kind != 'module':
            continue
        key = normalise(distribution_of(need.name) or need.name)
        package = folded.get(key)
        if package is None:
            kept.append(need)
            continue
        places = dict.fromkeys((*package.found_in, *need.found_in))
        folded[key] = replace(package, found_in=tuple(places), imports=(*package.imports, need.name))
    return (
        *folded.values(),
        *kept,
        *(need for need in needs if need.kind not in ('package', 'module')),
    )
