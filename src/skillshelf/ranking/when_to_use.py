"""The "When to use" sections of a skill's body: where authors list the requests the skill is for.

The lexical index searches them like declared keywords (frontmatter `keywords`, `triggers`, ...), so they
weigh more than the rest of the body.
"""

from __future__ import annotations

import re

__all__ = ('HEADING', 'heading_titles', 'says_when_to_use', 'when_to_use_sections')


def when_to_use_sections(body: str, titles: str | None = None) -> list[str]:
    """The sections of a Markdown body whose heading says when to use the skill (`## When to use`,
    `## Triggers`, `## 触发条件`), with their subsections: authors list the requests the skill is for there,
    so they are searched like declared keywords. "When *not* to use" sections are left out.

    `titles` are the body's `heading_titles` when the caller has them (those of a text holding the body will do: they
    only rule out bodies without such a section)."""
    # A level-1 heading on the first line is the body's title ("# Trigger.dev"), but a deeper one opens a section
    # ("## Use this skill when"); the patterns look for "\n#", so give that one a line break to start on.
    if body.startswith('##'):
        body = '\n' + body
    # Most bodies have no such heading: one search over their joined headings rules them out before any split.
    if not says_when_to_use(heading_titles(body) if titles is None else titles):
        return []
    parts = HEADING.split(body)  # text before the first heading, then (level, title, text after it) per heading
    sections: list[str] = []
    level = 0
    for position in range(1, len(parts), 3):
        heading_level, title, section = len(parts[position]), parts[position + 1], parts[position + 2]
        if level and heading_level > level:
            sections.append(f'{title} {section}')
            continue
        title = title.lower()
        level = heading_level if says_when_to_use(title) and not _WHEN_NOT.search(title) else 0
        if level:
            sections.append(section)
    return sections


def heading_titles(body: str) -> str:
    """The titles of the Markdown headings of `body` (one on its first line included), lower-cased, one a line: what
    `says_when_to_use` and `negatives.says_when_not_to_use` read, so one scan of a body serves both."""
    titles = _TITLE.findall(body)
    if body.startswith('#') and (first := _FIRST_TITLE.match(body)) is not None:
        titles.insert(0, first[1])  # found apart: `'\n' + body` would copy every body the index reads
    return '\n'.join(titles).lower()


def says_when_to_use(titles: str) -> bool:
    """Whether heading `titles` (see `heading_titles`) include one over a "when to use" section; if not, the body
    has none."""
    return any(word in titles for word in _WHEN_TO_USE_WORDS) and _WHEN_TO_USE.search(titles) is not None


HEADING = re.compile(r'\n(#{1,6})[ \t]+([^\n]*)')
"""A Markdown heading after a line break: its `#`s and its title. `\\n#` is a literal prefix, which the regex engine
scans for quickly."""
_TITLE = re.compile(r'\n#{1,6}[ \t]+([^\n]*)')
"""`HEADING`'s title alone."""
_FIRST_TITLE = re.compile(r'#{1,6}[ \t]+([^\n]*)')
"""The title of a heading on a body's first line."""
_WHEN_TO_USE = re.compile(
    r'when to (?:use|invoke|activate|trigger|load|call|reach for)|use (?:this(?: skill)?|it|me) when'
    r'|^[\d.\s]*(?:triggers?|activation)\b|trigger (?:conditions|phrases|words)'
    r'|何时(?:使用|触发|调用)|触发(?:条件|场景|词)|(?:使用|适用)场景',
    re.MULTILINE,
)
"""A heading (lower-cased) over a section that says when to use the skill."""
_WHEN_TO_USE_WORDS = ('when to ', 'use ', 'trigger', 'activation', '何时', '触发', '场景')
"""One of these is in every match of `_WHEN_TO_USE`: looking for them first is cheaper than the search."""
_WHEN_NOT = re.compile(r"\bnot\b|n't|\bskip|\bavoid|不")
