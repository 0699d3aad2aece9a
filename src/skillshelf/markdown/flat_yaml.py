"""Reading the common frontmatter, one-line `key: text` fields, without a YAML parser.

Many `SKILL.md` frontmatters are just lines such as `name: pdf-forms` and `description: "Fill in PDF
forms."`. Reading those with a regular expression is several times faster than building them with YAML,
which matters when a library holds 100k skills. Anything else, or anything YAML might read as something
other than the same strings (`on`, `2024-01-01`, `a: b: c`, a comment, an escape other than `\\"` and
`\\\\`, a tab, a line break YAML knows and Python does not), is left to the YAML loader, so both agree.
"""

from __future__ import annotations

import re
from typing import cast

from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

__all__ = ('flat_mapping',)


def flat_mapping(text: str) -> dict[str, str] | None:
    """The fields of `text` if each of its lines is a one-line `key: text` field, as YAML would read them;
    `None` when YAML has to decide (then parse `text` with YAML)."""
    fields: dict[str, str] = {}
    for line in text.split('\n'):
        if not line:
            continue
        # Python's printable characters are a subset of YAML's, without the tab (libyaml and PyYAML's Python
        # loader read tabs differently), the byte-order mark and the line breaks Python does not split at.
        match = _FIELD.fullmatch(line) if line.isprintable() else None
        if match is None:
            return None
        key, double_quoted, single_quoted, plain = match.groups()
        if key in fields or not _is_text(key):
            return None  # a repeated key is an error YAML reports
        if double_quoted is not None:
            fields[key] = _ESCAPED.sub(r'\1', double_quoted) if '\\' in double_quoted else double_quoted
        elif plain is None:
            fields[key] = single_quoted
        elif _MAPPING_OR_COMMENT.search(plain) or not _is_text(plain):
            return None
        else:
            fields[key] = plain
    return fields or None  # YAML reads an empty text as no mapping at all


_FIELD = re.compile(
    r"""(?P<key>[A-Za-z_][\w-]{0,127}):\ +
    (?:"(?P<double>[^"\\]*(?:\\["\\][^"\\]*)*)"  # double-quoted; of the escapes, \" and \\ only
      |'(?P<single>[^']*)'                            # single-quoted, without the '' escape
      |(?P<plain>[^\s\-?:,\[\]{}\#&*!|>'"%@`].*?)     # plain, starting with no indicator
    )\ *""",
    re.VERBOSE,
)
"""One field on one line: a plain key, `:`, and a quoted or plain value (trailing blanks are not part of it)."""

_ESCAPED = re.compile(r'\\(["\\])')
"""The two escapes read here, as in JSON strings: `\\"` and `\\\\`."""

_MAPPING_OR_COMMENT = re.compile(r':(?: |$)| #')
"""Inside a plain value, `: ` starts a mapping (an error there) and ` #` a comment: YAML decides those."""

_RESOLVER = Resolver()


def _is_text(plain: str) -> bool:
    """Whether YAML reads this plain scalar as a string (not `true`, `null`, `12`, `2024-01-01`...)."""
    tag = cast(str, _RESOLVER.resolve(ScalarNode, plain, (True, False)))  # pyright: ignore[reportUnknownMemberType]
    return tag == 'tag:yaml.org,2002:str'
