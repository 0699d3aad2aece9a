"""Skills shipped inside Python packages: `PackageSource` (one package's folder, zipped installs included) and
`EntryPointSource` (every installed package that declares skills, so `pip install acme-skills` is enough).

An installed folder is read like a library directory; inside a zip file, a skill's files are listed when it is read
and each is read from the package when it is used, whole (up to the reader's limit: a page for the model,
`MAX_FILE_BYTES` for a copy into a workspace), so its scripts and binary files work as a folder skill's do."""

from __future__ import annotations

import hashlib
import importlib.resources
import os
import posixpath
import zipfile
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .._text import shown
from ..content import safe_relative_path
from ..content.base import MAX_FILE_BYTES, MAX_LISTED_RESOURCES, too_large
from ..content.folder import MAX_RESOURCE_DEPTH, MAX_SCANNED_ENTRIES
from ..errors import ResourceError, SkillError, SkillFormatError
from ..markdown.bounded_read import MAX_SKILL_FILE_BYTES, SKILL_FILE
from ..markdown.frontmatter import FormatDeviation
from ..skill import Skill, markdown_skill
from .base import SkillSource, SourceSkills, skipped
from .directory import discover
from .entries import DOCUMENTS, SKILL_LIKE_FILES

if TYPE_CHECKING:
    from importlib.abc import Traversable  # importlib.resources.abc from Python 3.11

__all__ = ('ENTRY_POINT_GROUP', 'EntryPointSource', 'PackageSource')

ENTRY_POINT_GROUP = 'skillshelf.skills'
"""The entry-point group packages declare their skills in."""


@dataclass(frozen=True)
class PackageSource:
    """The skill folders inside an installed package's `folder`, read through `importlib.resources`.

    An installed folder is read like a library directory (see `discover`); a package imported from a zip file is
    read entry by entry with the same limits, through `Skill.from_markdown`.
    """

    package: str
    """The importable package, e.g. `'acme_skills'`."""
    folder: str = 'skills'
    """The folder inside the package that holds the skill folders (`''`: the package's own folder)."""

    def version(self) -> Hashable:
        """`None`: an installed package does not change while the process runs."""
        return None

    def read_skills(self) -> SourceSkills:
        """Read the package's skill folders, in name order.

        Raises:
            SkillError: the package cannot be imported.
        """
        try:
            root = importlib.resources.files(self.package)
        except (ImportError, TypeError, ValueError) as error:
            raise SkillError(f'the package {self.package!r} cannot be imported ({error})') from error
        for part in (part for part in self.folder.split('/') if part):
            root = root / part
        if isinstance(root, Path):
            found = discover(root)
            return SourceSkills(found.skills, found.skipped, deviations=found.deviations)
        return _read_tree(root, f'{self.package}/{self.folder}'.rstrip('/'))


@dataclass(frozen=True)
class EntryPointSource:
    """The skills of every installed package that declares an entry point in `group`, in entry-point name order.

    In the package's `pyproject.toml`, `[project.entry-points."skillshelf.skills"]` then either
    `acme = "acme_skills"` (the skill folders in the package's `skills` folder) or `acme = "acme_skills:source"`
    (a `SkillSource`, a `Skill` or a list of skills).
    """

    group: str = ENTRY_POINT_GROUP
    """The entry-point group."""

    def version(self) -> Hashable:
        """`None`: the installed packages do not change while the process runs."""
        return None

    def read_skills(self) -> SourceSkills:
        """Read every entry point's skills; one that cannot be loaded is skipped with the reason."""
        result = SourceSkills()
        for point in sorted(entry_points(group=self.group), key=lambda point: (point.name, point.value)):
            origin = f'entry point {point.name} = {point.value}'
            try:
                read = _entry_point_skills(point)
            except Exception as error:  # a broken package must not hide the others
                result.skipped.append(skipped(origin, f'cannot be loaded ({type(error).__name__}: {error})'))
                continue
            result.skills.extend(read.skills)
            result.skipped.extend(read.skipped)
        return result


def _entry_point_skills(point: EntryPoint) -> SourceSkills:
    if ':' not in point.value:
        return PackageSource(point.module).read_skills()
    target = cast(object, point.load())
    if isinstance(target, SkillSource):
        return target.read_skills()
    items = cast('list[object]', list(target)) if isinstance(target, (list, tuple)) else [target]  # pyright: ignore[reportUnknownArgumentType]
    if not all(isinstance(item, Skill) for item in items):
        raise SkillError(f'{point.value} is not a skill source, a Skill or a list of skills')
    return SourceSkills(cast('list[Skill[Any]]', items))


def _read_tree(root: Traversable, label: str) -> SourceSkills:
    """The skill folders under `root` (inside a zip file, say): each entry a skill or a skipped entry, as `discover`
    reports a directory's."""
    result = SourceSkills()
    listing = _lister(root)
    if (root / SKILL_FILE).is_file():
        entries = [root]
    elif root.is_dir():
        entries = sorted((entry for entry in listing(root) if not entry.name.startswith('.')), key=lambda e: e.name)
    else:
        return SourceSkills(skipped=[skipped(label, 'the folder does not exist in the package')])
    for entry in entries[:MAX_SCANNED_ENTRIES]:
        origin = label if entry is root else f'{label}/{entry.name}'
        if not entry.is_dir():
            suffix = os.path.splitext(entry.name)[1].lower()
            if suffix in SKILL_LIKE_FILES and not DOCUMENTS.match(entry.name):
                result.skipped.append(
                    skipped(origin, f'it is a file, not a skill folder (a folder holding a {SKILL_FILE})')
                )
            continue
        deviations: list[FormatDeviation] = []
        try:
            skill = _read_skill(entry, origin, deviations, listing)
        except SkillFormatError as error:
            result.skipped.append(skipped(origin, error.problem))
            continue
        result.skills.append(skill)
        result.deviations.extend(deviations)
    return result


def _lister(root: Traversable) -> Callable[[Traversable], list[Traversable]]:
    """How to list a folder of `root`'s tree. A zip file's `iterdir` scans every name in the archive at each call,
    so a package of 6,000 empty folders took minutes: its names are grouped by folder once here instead."""
    if not isinstance(root, zipfile.Path):
        return lambda folder: list(folder.iterdir())
    archive = root.root  # the archive with its implied folders, which `zipfile.Path` lists too
    children: dict[str, list[str]] = {}
    for name in archive.namelist():
        parent = posixpath.dirname(name.rstrip('/'))
        children.setdefault(f'{parent}/' if parent else '', []).append(name)

    def listing(folder: Traversable) -> list[Traversable]:
        at = folder.at if isinstance(folder, zipfile.Path) else ''
        return [zipfile.Path(archive, name) for name in children.get(at, [])]

    return listing


def _read_skill(
    folder: Traversable,
    origin: str,
    deviations: list[FormatDeviation],
    listing: Callable[[Traversable], list[Traversable]],
) -> Skill[Any]:
    skill_file = folder / SKILL_FILE
    if not skill_file.is_file():
        raise SkillFormatError(origin, f'the folder has no {SKILL_FILE}, so it is not a skill')
    raw = _read_at_most(skill_file, MAX_SKILL_FILE_BYTES + 1)
    if len(raw) > MAX_SKILL_FILE_BYTES:
        raise SkillFormatError(origin, f'the {SKILL_FILE} is larger than {MAX_SKILL_FILE_BYTES:,} bytes')
    try:
        text = raw.decode('utf-8')
    except UnicodeDecodeError as error:
        raise SkillFormatError(origin, f'the {SKILL_FILE} is not valid UTF-8 (byte {error.start})') from None
    checked = markdown_skill(text, {}, origin=origin, folder=folder.name, deviations=deviations)
    entries: dict[str, Traversable] = {}
    _collect_files(folder, '', 0, entries, listing)
    content = _PackageContent(checked.content.instructions(), entries, origin, raw)
    return Skill.from_content(checked.name, checked.description, content, metadata=checked.metadata)


@dataclass(frozen=True)
class _PackageContent:
    """A packaged skill's content (inside a zip file, say): the body read with the `SKILL.md`, each file read
    from the package when it is used, whole up to the caller's limit, so a copy into a workspace gets every byte."""

    text: str
    """The body."""
    entries: dict[str, Traversable]
    """The files listed when the skill was read, by relative path: the only ones served."""
    origin: str
    """The package and folder."""
    source: bytes = field(repr=False)
    """The `SKILL.md`, byte for byte."""

    def file_digests(self) -> dict[str, str]:
        """The SHA-256 of every file, `SKILL.md` included, by path (see `lock.digest`), each read now.

        Raises:
            SkillFormatError: a file can no longer be read from the package.
        """
        digests = {SKILL_FILE: hashlib.sha256(self.source).hexdigest()}
        for path in self.entries:
            try:
                digests[path] = hashlib.sha256(self.read_bytes(path, MAX_FILE_BYTES)).hexdigest()
            except ResourceError as error:
                raise SkillFormatError(self.origin, str(error)) from None
        return digests

    def instructions(self, max_chars: int | None = None) -> str:
        """The body, or its first `max_chars` characters."""
        return self.text[:max_chars]

    def list_files(self) -> list[str]:
        """The files' paths, sorted."""
        return sorted(self.entries)

    def has_files(self) -> bool:
        """Whether it has any file."""
        return bool(self.entries)

    def read_bytes(self, path: str, max_bytes: int) -> bytes:
        """One file's bytes, read from the package now; refused past `max_bytes`."""
        entry = self.entries.get(safe_relative_path(path).as_posix())
        if entry is None:
            raise ResourceError(f'no resource {shown(path)}')
        try:
            data = _read_at_most(entry, max_bytes + 1)
        except OSError as error:
            raise ResourceError(f'{shown(path)} cannot be read from the package ({error})') from None
        if len(data) > max_bytes:
            raise too_large(path, None, max_bytes)
        return data


def _collect_files(
    folder: Traversable,
    prefix: str,
    depth: int,
    entries: dict[str, Traversable],
    listing: Callable[[Traversable], list[Traversable]],
) -> None:
    """A skill's files, as a folder skill lists them: hidden names left out, bounded in depth and number; each is
    read when it is used."""
    for entry in sorted(listing(folder), key=lambda entry: entry.name):
        if len(entries) >= MAX_LISTED_RESOURCES:
            return
        relative = prefix + entry.name
        if entry.name.startswith('.') or relative == SKILL_FILE:
            continue
        if entry.is_dir():
            if depth < MAX_RESOURCE_DEPTH:
                _collect_files(entry, relative + '/', depth + 1, entries, listing)
        elif entry.is_file():
            entries[relative] = entry


def _read_at_most(entry: Traversable, limit: int) -> bytes:
    with entry.open('rb') as stream:
        return stream.read(limit)
