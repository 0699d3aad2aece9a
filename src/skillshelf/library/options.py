"""`LibraryOptions`: where a library's skills come from and which it keeps, each option declared, documented and
checked here once (agent specs pass values unvalidated, so a mistake fails at construction, naming the option)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ..errors import SkillError
from ..files import ReadPolicy
from ..lock import SkillLock
from ..scan import ScanMode, check_mode
from ..sources.base import SkillSource
from .locations import directory_sources
from .name_filter import NameFilter, name_patterns
from .source_spec import SourceSpec, resolve_sources

__all__ = ('LibraryOptions',)

_PATH_OPTIONS = ('directories', 'command_directories', 'trusted_directories')
_FLAGS = ('standard_directories', 'strict', 'allow_hard_links', 'auto_reload')


@dataclass(frozen=True)
class LibraryOptions:
    """Where a library's skills come from and which it keeps.

    Each value is checked and normalised when the options are created: paths become tuples of `Path`, sources are
    resolved, names and globs become tuples.

    Raises:
        SkillError: an option has the wrong type (the message names it), or a source cannot be resolved.
    """

    directories: str | Path | Sequence[str | Path] = ()
    """Library directories: each holds skill folders (or is one). Earlier directories win name clashes."""
    command_directories: str | Path | Sequence[str | Path] = ()
    """Directories of Claude Code command files (`*.md`, each a skill named by its file), read after `directories`."""
    standard_directories: bool = False
    """Also read the usual locations that exist: `.claude/skills`, `.agents/skills`, `.claude/commands` here, then
    `~/.claude/skills`, `~/.agents/skills`, `~/.codex/skills`, `~/.claude/commands` (earlier ones win clashes)."""
    trusted_directories: str | Path | Sequence[str | Path] = ()
    """Directories (of `directories`) whose skills get the Python tools their `SKILL.md` declares (`python-tools:`).
    Importing them runs code from the folder, so a skill elsewhere that declares tools loads without them."""
    sources: SkillSource | SourceSpec | Sequence[SkillSource | SourceSpec] = ()
    """Other places skills come from, after the directories: `SkillSource`s, import paths of them, or in a spec
    `{'package': ...}`, `{'entry_points': ...}`, `{'git': url, 'ref': ...}`, `{'registry': url}`."""
    include: str | Sequence[str] = ()
    """Names or globs (`'pdf-*'`) of the only skills to offer; empty offers every skill."""
    exclude: str | Sequence[str] = ()
    """Names or globs of skills to leave out of the catalog, search and `load_skill`; exclude wins over include."""
    strict: bool = False
    """Raise on any broken or shadowed skill folder instead of skipping it with a warning."""
    allow_hard_links: bool = False
    """Serve a skill's files that have other hard links. Off by default: a hard link's other names may lie outside
    the skill folder. Turn it on for libraries installed with hard links (e.g. by `uv` in its default link mode)."""
    auto_reload: bool = True
    """Check the directories and sources for added, removed or edited skills at the start of each run: one `stat`
    per skill, about 0.7 s per run at 100k skills. Turn it off for a library that does not change while the process
    runs."""
    scan: ScanMode = 'refuse'
    """The content scan of every skill a directory or source holds (Python skills are yours and are not scanned):
    `'refuse'` refuses a skill with a critical finding (code fetched or decoded and run, credentials sent out, hidden
    characters or instructions, ...) with a `SkillWarning` naming each one; `'warn'` loads it and warns; `'off'` does
    not scan (for a library scanned before, by `skillshelf scan` in CI). The frontmatter is scanned as the library is
    built (a skill refused there never reaches the catalog); the body and files at the skill's first use, before the
    model reads them or a script runs (a skill refused then is told to the model, and left out of later catalogs).
    A registry's skills are scanned the same way, besides at `publish`."""
    lock: str | Path | None = None
    """A lock file (written by `skillshelf lock`): each skill of the directories and sources must have the content it
    records, or it is refused with a `SkillWarning` naming the files that changed (the others load); a skill it does
    not record is refused too. Python skills are not checked. The file is read once, when the library is built (a
    process picks up an updated lock when it starts). `None`: no check."""

    def __post_init__(self) -> None:
        for option in _PATH_OPTIONS:
            object.__setattr__(self, option, _paths(getattr(self, option), option))
        for option in _FLAGS:
            if not isinstance(getattr(self, option), bool):
                raise SkillError(f'the `{option}` option must be true or false, not {getattr(self, option)!r}')
        if (lock := cast(object, self.lock)) is not None and not isinstance(lock, (str, Path)):
            raise SkillError(f'the `lock` option must be the path of a lock file, not {self.lock!r}')
        object.__setattr__(self, 'sources', tuple(resolve_sources(self.sources)))
        try:
            check_mode(self.scan)
        except ValueError as error:
            raise SkillError(str(error)) from None
        for option in ('include', 'exclude'):
            object.__setattr__(self, option, name_patterns(getattr(self, option), option))

    @property
    def selection(self) -> NameFilter:
        """The skills kept: `include`, except `exclude`."""
        return NameFilter(cast('tuple[str, ...]', self.include), cast('tuple[str, ...]', self.exclude))

    def read_sources(self) -> list[SkillSource]:
        """Every source the library reads, in order: the directories (named, then usual), then `sources`.

        Raises:
            SkillError: a named directory does not exist, or a trusted directory is not one of `directories`.
        """
        directories = directory_sources(
            cast('tuple[Path, ...]', self.directories),
            cast('tuple[Path, ...]', self.command_directories),
            standard=self.standard_directories,
            trusted=cast('tuple[Path, ...]', self.trusted_directories),
            policy=ReadPolicy(self.allow_hard_links),
        )
        return [*directories, *cast('tuple[SkillSource, ...]', self.sources)]

    def read_lock(self) -> SkillLock | None:
        """The lock file the skills are checked against, read now; `None` without one.

        Raises:
            SkillError: the lock file is missing or is not one (see `read_lock`).
        """
        return None if self.lock is None else SkillLock.read(self.lock)

    @classmethod
    def merged(cls, parts: Sequence[LibraryOptions], **latest: Any) -> LibraryOptions:
        """The options of several libraries read as one: their directories, sources and `exclude` in order, an
        `include` only if every part has one, the flags of the last part (`latest` overrides any of them)."""
        includes = [part.include for part in parts]
        values: dict[str, Any] = {
            option: [item for part in parts for item in cast('tuple[Any, ...]', getattr(part, option))]
            for option in (*_PATH_OPTIONS, 'sources', 'exclude')
        }
        values['include'] = [pattern for part in includes for pattern in part] if all(includes) else []
        values['standard_directories'] = any(part.standard_directories for part in parts)
        flags = {
            option: getattr(parts[-1], option)
            for option in ('strict', 'allow_hard_links', 'auto_reload', 'scan', 'lock')
        }
        return cls(**{**flags, **values, **latest})


def _paths(value: object, option: str) -> tuple[Path, ...]:
    """A directories option as a tuple of paths."""
    if isinstance(value, (str, Path)):
        return (Path(value),)
    if isinstance(value, (list, tuple)) and all(isinstance(item, (str, Path)) for item in cast('Sequence[Any]', value)):
        return tuple(Path(item) for item in cast('Sequence[str | Path]', value))
    raise SkillError(f'the `{option}` option must be a string or a list of strings, not {value!r}')
