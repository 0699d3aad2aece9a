"""Flat frontmatter read without a YAML parser: lines of `key: value`, each a text, as YAML reads them.

Most frontmatter is a few such lines (`name: pdf`, `description: "Fill PDF forms."`), and parsing them with
libyaml is a third of reading a large library's skills. `flat_fields` reads only text whose meaning it is sure of,
and answers `None` for anything else, which the YAML loader then reads:

* every line is empty or `key: value`, starting at the line's first column (no indentation, so no nesting and
  no value continued on the next line); no tab, no carriage return, no character YAML does not print as it is
  (controls, the line and paragraph separators, the byte-order mark);
* a key is a plain word whose YAML type is text (not `yes`, `12` or `~`), each key once;
* a value is a plain scalar whose YAML type is text, or a single- or double-quoted one on its line, with
  no escape in double quotes other than `\\"` and `\\\\`. A plain value does not start with an indicator
  (`- ? : , [ ] { } # & * ! | > ' " % @` and the backquote), and holds neither `: ` nor ` #`, nor ends with `:`.

Types are decided by PyYAML's own resolver, the one the loader uses, so `yes`, `0x1f` or `2024-01-02` are never
read as text. `tests/library/test_fast_paths.py` checks the result against the loader on generated text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import cast

import yaml
from yaml.nodes import ScalarNode

__all__ = ('flat_fields',)

_KEY = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}:[ ]+')
"""A plain key of at most 128 characters (YAML gives up on keys past 1,024), its colon and the spaces after it."""
_DOUBLE_QUOTED = re.compile(r'[^"\\]*(?:\\["\\][^"\\]*)*')
"""What double quotes may hold here: no quote, and a backslash only before a quote or a backslash."""
_ESCAPE = re.compile(r'\\(["\\])')
_INDICATORS = frozenset('-?:,[]{}#&*!|>\'"%@` ')
"""What a plain scalar read here may not start with (some are allowed before a letter; the loader reads those)."""
_UNSURE = re.compile('[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]')
"""A character outside what YAML prints as it is (a tab or a control, a line or paragraph separator, the byte-order
mark, a lone surrogate): the loader reads such text."""
_resolve = cast('Callable[[type[ScalarNode], str, tuple[bool, bool]], str]', yaml.resolver.Resolver().resolve)  # pyright: ignore[reportUnknownMemberType]
_STR = 'tag:yaml.org,2002:str'
_PLAIN = (True, False)
"""The `implicit` flags of a plain scalar, for the resolver."""


def flat_fields(text: str) -> dict[str, str] | None:
    """The text fields of flat frontmatter `text` (see the module docstring), or `None` when `text` is anything
    else, or empty."""
    if _UNSURE.search(text) is not None:
        return None
    fields: dict[str, str] = {}
    lines = 0
    for line in text.split('\n'):
        if not line:
            continue
        lines += 1
        key_end = _KEY.match(line)
        if key_end is None:
            return None
        key, value = line[: line.index(':')], line[key_end.end() :].rstrip(' ')
        if not _is_text_key(key) or (value := _text(value)) is None:
            return None
        fields[key] = value
    return fields if lines and len(fields) == lines else None


def _text(value: str) -> str | None:
    """The text a value written on a key's line stands for, without the spaces around it, or `None` if it is
    not sure to be text."""
    if len(value) >= 2 and value[0] == value[-1] == '"':
        inner = value[1:-1]
        if '\\' not in inner:
            return None if '"' in inner else inner
        return None if _DOUBLE_QUOTED.fullmatch(inner) is None else _ESCAPE.sub(r'\1', inner)
    if len(value) >= 2 and value[0] == value[-1] == "'":
        inner = value[1:-1]
        return None if "'" in inner.replace("''", '') else inner.replace("''", "'")
    plain = (
        value != ''
        and value[0] not in _INDICATORS
        and ': ' not in value
        and ' #' not in value
        and not value.endswith(':')
        and _is_text(value)
    )
    return value if plain else None


@functools.lru_cache(maxsize=256)
def _is_text_key(key: str) -> bool:
    """`_is_text` of a key: a library's frontmatter uses a few keys (`name`, `description`, ...), each asked about
    once instead of in every file (two thirds of the resolver's calls at 2,651 skills)."""
    return _is_text(key)


def _is_text(plain: str) -> bool:
    """Whether YAML gives the plain scalar `plain` the type of text."""
    return _resolve(ScalarNode, plain, _PLAIN) == _STR
