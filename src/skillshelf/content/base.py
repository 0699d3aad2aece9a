"""`SkillContent`, the one way to ask any skill for its instructions and files, and `TextContent`, content held in
memory (a Python skill's, or one read from `SKILL.md` text)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from .._text import shown
from ..errors import ResourceError
from .paths import safe_relative_path

__all__ = (
    'MAX_FILE_BYTES',
    'MAX_LISTED_RESOURCES',
    'MAX_RESOURCE_BYTES',
    'MAX_SKILL_BYTES',
    'SkillContent',
    'TextContent',
    'decode_text',
    'read_text',
    'text_bytes',
    'too_large',
)

MAX_RESOURCE_BYTES = 256 * 1024
"""A resource larger than this is described, not returned: it would flood the model's context."""
MAX_LISTED_RESOURCES = 200
"""At most this many resources are listed for one skill, so a huge folder cannot flood `load_skill`."""
MAX_FILE_BYTES = 64 << 20
"""The largest skill file that is copied into a workspace, served whole from a package or stored by a registry: one
limit, so whatever a registry accepts, a run can use."""
MAX_SKILL_BYTES = 256 << 20
"""The most a registry stores for one skill's files together (each file at most `MAX_FILE_BYTES`)."""


@runtime_checkable
class SkillContent(Protocol):
    """What a skill holds besides its name and description: its instructions and its files.

    Every kind of skill answers these three questions the same way, wherever its content is kept (in memory, a
    folder, a registry), so reading a file for the model and copying a skill into a workspace are one code path.
    """

    @property
    def origin(self) -> str | None:
        """Where the content comes from, for messages (a folder, a file, a package or registry entry); `None` for a
        skill defined in Python."""
        ...

    def instructions(self, max_chars: int | None = None) -> str:
        """The instructions the model reads when it loads the skill, or their first `max_chars` characters.

        Raises:
            SkillFormatError: they can no longer be read.
        """
        ...

    def list_files(self) -> list[str]:
        """The relative POSIX paths of the skill's files (its `SKILL.md` left out), in a stable order, at most
        `MAX_LISTED_RESOURCES`."""
        ...

    def has_files(self) -> bool:
        """Whether the skill has any file; cheap, as the capability asks it of every skill of a small library to
        decide whether `read_skill_resource` is worth offering."""
        ...

    def read_bytes(self, path: str, max_bytes: int) -> bytes:
        """The bytes of the file at `path`, relative to the skill (checked with `safe_relative_path`).

        Raises:
            ResourceError: the path is unsafe or names no file, or the file holds more than `max_bytes` bytes.
        """
        ...


@dataclass(frozen=True)
class TextContent:
    """Content held in memory: a Python skill's, a command file's, or one read from `SKILL.md` text."""

    text: str
    """The instructions."""
    files: Mapping[str, bytes] = field(default_factory=dict[str, bytes])
    """The files, by normalised relative path (see `safe_relative_path`)."""
    origin: str | None = None
    """Where the text came from (a package, a registry, a command file); `None` for a skill defined in Python."""
    source: bytes | None = field(default=None, repr=False)
    """The file the text was read from (its `SKILL.md`, a command file), byte for byte, for the lock's digest (see
    `lock.digest`); `None` for a skill defined in Python."""

    def instructions(self, max_chars: int | None = None) -> str:
        """The text, or its first `max_chars` characters."""
        return self.text[:max_chars]

    def list_files(self) -> list[str]:
        """The files' paths, sorted."""
        return sorted(self.files)[:MAX_LISTED_RESOURCES]

    def has_files(self) -> bool:
        """Whether it holds any file."""
        return bool(self.files)

    def read_bytes(self, path: str, max_bytes: int) -> bytes:
        """One file's bytes; refused past `max_bytes`."""
        relative = safe_relative_path(path).as_posix()
        data = self.files.get(relative)
        if data is None:
            raise ResourceError(f'no resource {shown(path)}')
        if len(data) > max_bytes:
            raise too_large(path, len(data), max_bytes)
        return data


def text_bytes(text: str) -> bytes:
    """The bytes of a `SKILL.md` kept as text: UTF-8, with the bytes that were not UTF-8 (decoded with
    `surrogateescape`, as a registry keeps them) given back as they were."""
    try:
        return text.encode('utf-8', 'surrogateescape')
    except UnicodeEncodeError:
        return text.encode('utf-8', 'surrogatepass')


def read_text(content: SkillContent, path: str) -> str:
    """A file of `content` as the model reads it: UTF-8 text of at most `MAX_RESOURCE_BYTES` bytes.

    Raises:
        ResourceError: the path is unsafe or missing, or the file is binary, not UTF-8 or too large.
    """
    return decode_text(path, content.read_bytes(path, MAX_RESOURCE_BYTES))


def too_large(path: str, size: int | None, limit: int) -> ResourceError:
    """The refusal of a file over `limit` bytes (`size`, when it is known)."""
    held = f'is {size:,} bytes,' if size is not None else 'is'
    return ResourceError(f'{shown(path)} {held} over the {limit:,}-byte limit for one read')


def decode_text(requested: str, data: bytes) -> str:
    """Decode a resource as UTF-8 text, refusing binary content with a message instead of bytes."""
    if b'\x00' in data:
        raise ResourceError(
            f'{shown(requested)} is a binary file ({len(data):,} bytes); only text resources can be read'
        )
    try:
        return data.decode('utf-8-sig')
    except UnicodeDecodeError:
        raise ResourceError(f'{shown(requested)} is not UTF-8 text; only text resources can be read') from None
