"""Reading `SKILL.md` files: frontmatter, body and the Agent Skills format rules.

The format (https://agentskills.io/specification): a YAML frontmatter block between `---` lines,
with `name` and `description` required, then a markdown body of instructions.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import frontmatter
import yaml

from ._errors import SkillFormatError, SkillWarning

SKILL_FILE = 'SKILL.md'
DELIMITER = '---'
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500
MAX_FRONTMATTER_BYTES = 64 * 1024
"""A frontmatter block larger than this is refused: catalogs only need a name and a description."""
MAX_SKILL_FILE_BYTES = 2 * 1024 * 1024
"""A `SKILL.md` larger than this is refused rather than read into every run's context."""

KNOWN_FIELDS = frozenset({'name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'})

_YAML_HANDLER = frontmatter.YAMLHandler()


@dataclass(frozen=True)
class Frontmatter:
    """The parsed frontmatter of one `SKILL.md`."""

    name: str
    """The skill's name, as the model uses it."""
    description: str
    """What the skill does and when to use it; shown in the catalog and searched."""
    license: str | None = None
    """The `license` field, verbatim."""
    compatibility: str | None = None
    """The `compatibility` field: environment requirements, verbatim."""
    allowed_tools: tuple[str, ...] = ()
    """The `allowed-tools` field, split into tool patterns."""
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The `metadata` mapping plus every field the format does not define (`when_to_use`, `tags`, ...)."""


def name_problem(name: str) -> str | None:
    """Why `name` breaks the Agent Skills naming rules, or `None` if it is valid."""
    if not name:
        return 'the name is empty'
    if len(name) > MAX_NAME_LENGTH:
        return f'the name is {len(name)} characters long; the limit is {MAX_NAME_LENGTH}'
    if unicodedata.normalize('NFKC', name) != name:
        return f'the name {name!r} is not NFKC-normalised'
    if name != name.lower():
        return f'the name {name!r} has upper-case letters; use lower-case letters, digits and hyphens'
    if name.startswith('-') or name.endswith('-'):
        return f'the name {name!r} starts or ends with a hyphen'
    if '--' in name:
        return f'the name {name!r} has consecutive hyphens'
    if not all(char.isalnum() or char == '-' for char in name):
        return f'the name {name!r} may only contain lower-case letters, digits and single hyphens'
    return None


def read_frontmatter(skill_file: Path) -> Frontmatter:
    """Read and validate the frontmatter of `skill_file`, without reading its body.

    Raises:
        SkillFormatError: the file is missing, unreadable, too large or breaks the format.
    """
    head = _read_head(skill_file)
    data = _parse_yaml(skill_file, head)
    return _validate(skill_file, data)


def read_body(skill_file: Path) -> str:
    """Read the markdown body of `skill_file`: everything after the frontmatter, stripped."""
    text = _read_text(skill_file)
    lines = text.splitlines()
    closing = _closing_delimiter_index(lines)
    if closing is None:
        raise SkillFormatError(skill_file, 'the frontmatter is not closed by a `---` line')
    return '\n'.join(lines[closing + 1 :]).strip()


def _read_text(skill_file: Path) -> str:
    try:
        size = skill_file.stat().st_size
        if size > MAX_SKILL_FILE_BYTES:
            raise SkillFormatError(skill_file, f'the file is {size:,} bytes; the limit is {MAX_SKILL_FILE_BYTES:,}')
        raw = skill_file.read_bytes()
    except OSError as error:
        raise SkillFormatError(skill_file, f'cannot read the file ({error.strerror or error})') from error
    try:
        return raw.decode('utf-8-sig')
    except UnicodeDecodeError as error:
        raise SkillFormatError(skill_file, f'the file is not valid UTF-8 (byte {error.start})') from error


def _read_head(skill_file: Path) -> str:
    """The frontmatter text between the delimiters, read line by line so bodies stay on disk."""
    try:
        with skill_file.open('rb') as stream:
            first = stream.readline(MAX_FRONTMATTER_BYTES).decode('utf-8-sig', errors='strict')
            if first.rstrip('\r\n').rstrip() != DELIMITER:
                raise SkillFormatError(skill_file, 'the file does not start with a `---` frontmatter line')
            collected: list[bytes] = []
            size = 0
            for raw_line in stream:
                if raw_line.rstrip(b'\r\n').rstrip() == DELIMITER.encode():
                    return b''.join(collected).decode('utf-8')
                size += len(raw_line)
                if size > MAX_FRONTMATTER_BYTES:
                    raise SkillFormatError(
                        skill_file, f'the frontmatter is larger than {MAX_FRONTMATTER_BYTES:,} bytes'
                    )
                collected.append(raw_line)
    except OSError as error:
        raise SkillFormatError(skill_file, f'cannot read the file ({error.strerror or error})') from error
    except UnicodeDecodeError as error:
        raise SkillFormatError(skill_file, 'the frontmatter is not valid UTF-8') from error
    raise SkillFormatError(skill_file, 'the frontmatter is not closed by a `---` line')


def _closing_delimiter_index(lines: list[str]) -> int | None:
    if not lines or lines[0].strip() != DELIMITER:
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() == DELIMITER:
            return index
    return None


def _parse_yaml(skill_file: Path, head: str) -> dict[str, Any]:
    try:
        data = _YAML_HANDLER.load(head)
    except yaml.YAMLError as error:
        data = _recover_unquoted_colons(skill_file, head, error)
    if data is None:
        raise SkillFormatError(skill_file, 'the frontmatter is empty; it needs `name` and `description`')
    if not isinstance(data, dict):
        raise SkillFormatError(skill_file, f'the frontmatter is a YAML {type(data).__name__}, not a mapping of fields')
    return cast('dict[str, Any]', data)


_PLAIN_FIELD = re.compile(r'^(?P<key>[A-Za-z_][\w-]*):[ \t]+(?P<value>[^\'"|>\[{&*!#].*)$')


def _recover_unquoted_colons(skill_file: Path, head: str, error: yaml.YAMLError) -> Any:
    """Retry a frontmatter that failed only because a plain value contains `: ` (allowed by agentskills.io).

    Skill authors often write `description: Use when: the user asks...`; YAML reads that as a nested
    mapping and fails. The spec asks clients to recover, so top-level plain values are quoted and
    parsed again, with a warning.
    """

    def quote(match: re.Match[str]) -> str:
        value = match['value'].rstrip()
        if ': ' not in value and not value.endswith(':'):
            return match[0]
        return f'{match["key"]}: "{value.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'

    repaired = '\n'.join(_PLAIN_FIELD.sub(quote, line) for line in head.splitlines())
    if repaired == head.rstrip('\n') or repaired == head:
        raise SkillFormatError(skill_file, f'the frontmatter is not valid YAML ({_first_line(error)})') from error
    try:
        data = _YAML_HANDLER.load(repaired)
    except yaml.YAMLError:
        raise SkillFormatError(skill_file, f'the frontmatter is not valid YAML ({_first_line(error)})') from error
    warnings.warn(
        SkillWarning(f'{skill_file}: quoted a frontmatter value that contains ": "; quote it in the file'),
        stacklevel=2,
    )
    return data


def _first_line(error: yaml.YAMLError) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _validate(skill_file: Path, data: dict[str, Any]) -> Frontmatter:
    name = _required_string(skill_file, data, 'name')
    if problem := name_problem(name):
        raise SkillFormatError(skill_file, problem)
    folder = skill_file.parent.name
    if unicodedata.normalize('NFKC', folder) != name:
        raise SkillFormatError(skill_file, f'the name {name!r} does not match its folder {folder!r}; rename one')
    description = _required_string(skill_file, data, 'description')
    if len(description) > MAX_DESCRIPTION_LENGTH:
        warnings.warn(
            SkillWarning(
                f'{skill_file}: the description is {len(description)} characters; '
                f'the format allows {MAX_DESCRIPTION_LENGTH}, so catalogs may shorten it'
            ),
            stacklevel=3,
        )
    metadata = data.get('metadata', {})
    if not isinstance(metadata, Mapping):
        raise SkillFormatError(skill_file, '`metadata` must be a mapping of keys to values')
    extra = {str(key): value for key, value in data.items() if key not in KNOWN_FIELDS}
    return Frontmatter(
        name=name,
        description=description,
        license=_optional_string(skill_file, data, 'license'),
        compatibility=_optional_string(skill_file, data, 'compatibility'),
        allowed_tools=_allowed_tools(skill_file, data.get('allowed-tools')),
        metadata={**extra, **cast('Mapping[str, Any]', metadata)},
    )


def _required_string(skill_file: Path, data: Mapping[str, Any], key: str) -> str:
    if key not in data:
        raise SkillFormatError(skill_file, f'the frontmatter has no `{key}` field')
    value = data[key]
    if not isinstance(value, str):
        raise SkillFormatError(skill_file, f'`{key}` must be a string, not a YAML {type(value).__name__}')
    value = value.strip()
    if not value:
        raise SkillFormatError(skill_file, f'`{key}` is empty')
    return value


def _optional_string(skill_file: Path, data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise SkillFormatError(skill_file, f'`{key}` must be a string, not a YAML {type(value).__name__}')
    return value


def _allowed_tools(skill_file: Path, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list) and all(isinstance(item, str) for item in cast('list[Any]', value)):
        return tuple(cast('list[str]', value))
    raise SkillFormatError(skill_file, '`allowed-tools` must be a space-separated string or a list of strings')
