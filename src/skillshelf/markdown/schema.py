"""The Agent Skills frontmatter schema: the `Frontmatter` model and the rules of its fields (names, lengths, text
a file can hold, `allowed-tools` patterns), checked the same way for every kind of skill."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from .names import name_problem

__all__ = (
    'KNOWN_FIELDS',
    'MAX_COMPATIBILITY_LENGTH',
    'MAX_DESCRIPTION_LENGTH',
    'Frontmatter',
    'split_tool_patterns',
    'unencodable',
    'unencodable_problem',
)

MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500

KNOWN_FIELDS = frozenset({'name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'})


def unencodable(value: object) -> str | None:
    """Where `value` (text, or lists and mappings of it) holds text that UTF-8 cannot encode: a lone surrogate,
    which no file, JSON document or model API accepts. Returns a location such as `metadata.keywords[2]`
    (`the text` for `value` itself), or `None` if there is none."""
    if isinstance(value, str):
        return None if _encodable(value) else 'the text'
    if isinstance(value, (dict, list, tuple)) and not value:  # most skills have no resources and little metadata
        return None
    pending: list[tuple[object, str]] = [(value, '')]
    seen: set[int] = set()  # Python values may hold themselves
    while pending:
        item, where = pending.pop()
        if isinstance(item, str):
            if not _encodable(item):
                return where or 'the text'
            continue
        if not isinstance(item, (Mapping, list, tuple)) or id(cast(object, item)) in seen:
            continue
        seen.add(id(cast(object, item)))
        if isinstance(item, Mapping):
            children = list(cast('Mapping[object, object]', item).items())
            for key, _ in children:
                if isinstance(key, str) and not _encodable(key):
                    return f'a key of {where}' if where else 'a key'
            entries = [(child, f'{where}.{key}' if where else str(key)) for key, child in children]
        else:
            entries = [(child, f'{where}[{index}]') for index, child in enumerate(cast('list[object]', item))]
        pending.extend(reversed(entries))  # the first problem in reading order is reported
    return None


def unencodable_problem(fields: Mapping[str, Any]) -> str | None:
    """Why frontmatter `fields` cannot be used because of text UTF-8 cannot encode (see `unencodable`), or `None`."""
    if (where := unencodable(fields)) is None:
        return None
    return (
        f'the frontmatter has text that cannot be encoded as UTF-8 in {where} (a lone surrogate, such as the '
        'escape "\\ud800"); write the character itself'
    )


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        return False
    return True


class Frontmatter(BaseModel):
    """The frontmatter of one `SKILL.md`, checked against the format: the name follows the naming rules, the
    description is not empty, each field has its type. Fields the format does not define (`when_to_use`,
    `tags`, ...) are kept as they are, in `model_extra`."""

    model_config = ConfigDict(extra='allow', frozen=True)

    name: str
    """The skill's name, as the model uses it."""
    description: str
    """What the skill does and when to use it; shown in the catalog and searched."""
    metadata: dict[Any, Any] = Field(default_factory=dict[Any, Any])
    """The `metadata` mapping, verbatim."""
    license: str | None = None
    """The `license` field, verbatim."""
    compatibility: str | None = None
    """The `compatibility` field: environment requirements, verbatim."""
    allowed_tools: tuple[str, ...] = Field(default=(), validation_alias='allowed-tools')
    """The `allowed-tools` field, split into tool patterns (see `split_tool_patterns`)."""
    python_tools: tuple[str, ...] = Field(default=(), validation_alias='python-tools')
    """skillshelf's `python-tools` field: import paths (`'package.module:function'`) of Python functions that become
    the skill's hidden tools, imported only for skills in trusted directories (`Skills(trusted_directories=...)`).
    Not `tools`, which names agent tools the skill brings into view (see `capability.gated_tools`)."""

    @field_validator('name', 'description', mode='before')
    @classmethod
    def _required_text(cls, value: object, info: ValidationInfo) -> str:
        text = _string(value, info.field_name).strip()
        if not text:
            raise ValueError(f'`{info.field_name}` is empty')
        return text

    @field_validator('name')
    @classmethod
    def _naming_rules(cls, name: str) -> str:
        if problem := name_problem(name):
            raise ValueError(problem)
        return name

    @field_validator('license', 'compatibility', mode='before')
    @classmethod
    def _optional_text(cls, value: object, info: ValidationInfo) -> str | None:
        return None if value is None else _string(value, info.field_name)

    @field_validator('metadata', mode='before')
    @classmethod
    def _mapping(cls, value: object) -> dict[Any, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise ValueError('`metadata` must be a mapping of keys to values')
        return dict(cast('Mapping[Any, Any]', value))

    @field_validator('allowed_tools', mode='before')
    @classmethod
    def _tool_patterns(cls, value: object) -> tuple[str, ...]:
        if value is None:
            return ()
        if isinstance(value, str):
            return split_tool_patterns(value)
        if isinstance(value, list) and all(isinstance(item, str) for item in cast('list[object]', value)):
            return tuple(pattern for item in cast('list[str]', value) for pattern in split_tool_patterns(item))
        raise ValueError('`allowed-tools` must be a space-separated string or a list of strings')

    @field_validator('python_tools', mode='before')
    @classmethod
    def _import_paths(cls, value: object) -> tuple[str, ...]:
        if value is None:
            return ()
        if isinstance(value, list) and all(isinstance(item, str) for item in cast('list[object]', value)):
            return tuple(cast('list[str]', value))
        raise ValueError('`python-tools` must be a list of import paths such as "package.module:function"')


def split_tool_patterns(text: str) -> tuple[str, ...]:
    """The tool patterns of an `allowed-tools` value: separated by spaces (the Agent Skills format) or commas
    (Claude Code's `Read, Grep`), except inside parentheses, where a pattern's argument may hold both
    (`Bash(git add:*)`). An unclosed parenthesis runs to the end of the text. A list written as text, quoted in the
    YAML (`'["Read", "Bash(git:*)"]'` as JSON, or `"[Read, Bash(git:*)]"`), is read as the list it spells."""
    if (listed := _listed_patterns(text)) is not None:
        return listed
    patterns: list[str] = []
    current: list[str] = []
    depth = 0
    for character in text:
        if depth == 0 and (character == ',' or character.isspace()):
            patterns.append(''.join(current))
            current = []
            continue
        if character == '(':
            depth += 1
        elif character == ')' and depth > 0:
            depth -= 1
        current.append(character)
    patterns.append(''.join(current))
    return tuple(pattern for pattern in patterns if pattern)


def _listed_patterns(text: str) -> tuple[str, ...] | None:
    """The patterns of a list written as text (`'["Read", "Bash(git:*)"]'`); `None` if `text` is no such list."""
    inside = text.strip()
    if not (inside.startswith('[') and inside.endswith(']')):
        return None
    try:
        items = json.loads(inside)
    except ValueError:  # not JSON: a flow list's items, bare or quoted (`[Read, 'Bash(git:*)']`)
        return tuple(pattern.strip('\'"') for pattern in split_tool_patterns(inside[1:-1]) if pattern.strip('\'"'))
    if not isinstance(items, list) or not all(isinstance(item, str) for item in cast('list[object]', items)):
        return None
    return tuple(pattern for item in cast('list[str]', items) for pattern in split_tool_patterns(item))


def _string(value: object, field: str | None) -> str:
    if not isinstance(value, str):
        raise ValueError(f'`{field}` must be a string, not a YAML {type(value).__name__}')
    return value
