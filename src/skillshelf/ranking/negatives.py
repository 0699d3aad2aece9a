"""Where authors say when *not* to use a skill: "When NOT to use" sections of a body, and "Not for X" or "Don't use
for Y" in a description.

Indexed with the rest, that text would draw the very requests it turns away ("not for creative writing tasks" is the
best match for "creative writing tasks"). The lexical index takes it out of the skill's own fields and counts its
matches against the skill instead (see `SkillIndex.scores`).
"""

from __future__ import annotations

import re

from .when_to_use import HEADING, heading_titles

__all__ = ('says_when_not_to_use', 'split_body', 'split_description')


def split_description(description: str) -> tuple[str, str]:
    """`description` without the clauses that say what the skill is not for, and those clauses.

    A clause runs from its cue ("not for", "do not use", "不适用") to the end of its sentence.
    """
    if not _may_have_cue(description) or not _CUE.search(description):
        return description, ''
    kept: list[str] = []
    excluded: list[str] = []
    for sentence in _SENTENCE_END.split(description):
        cue = _CUE.search(sentence)
        kept.append(sentence if cue is None else sentence[: cue.start()])
        if cue is not None:
            excluded.append(sentence[cue.start() :])
    return ' '.join(kept), ' '.join(excluded)


def _may_have_cue(description: str) -> bool:
    """Whether `_CUE` could match `description`: most descriptions have none of the words its matches contain, and
    looking for those is a twentieth of the cost of a search that finds nothing. In ASCII text `IGNORECASE` is ASCII
    case; other text is searched whatever it holds (`IGNORECASE` also matches `ſ` to `s`, `ı` and `İ` to `i`)."""
    if not description.isascii():
        return True
    lowered = description.lower()
    return any(word in lowered for word in _CUE_WORDS)


def split_body(body: str, titles: str | None = None) -> tuple[str, str]:
    """`body` without its sections whose heading says when not to use the skill (`## When NOT to use`,
    `## Do not use for`, `## 不适用场景`), subsections included, and those sections; `titles` are the body's
    `heading_titles` when the caller has them."""
    if not says_when_not_to_use(heading_titles(body) if titles is None else titles):
        return body, ''
    body = '\n' + body  # a heading on the first line opens a section too
    kept: list[str] = []
    excluded: list[str] = []
    level = 0  # the level of the negative section being read, 0 outside one
    position = 0
    for heading in HEADING.finditer(body):
        heading_level, title = len(heading.group(1)), heading.group(2).lower()
        (excluded if level else kept).append(body[position : heading.start()])
        position = heading.start()
        if level and heading_level > level:
            continue
        level = heading_level if _NOT_HEADING.search(title) else 0
    (excluded if level else kept).append(body[position:])
    return ''.join(kept), ''.join(excluded)


def says_when_not_to_use(titles: str) -> bool:
    """Whether heading `titles` (see `when_to_use.heading_titles`) include one over a "when not to use" section; if
    not, `split_body` keeps the body whole."""
    return any(word in titles for word in _NOT_HEADING_WORDS) and _NOT_HEADING.search(titles) is not None


_NOT_HEADING = re.compile(
    r"when (?:not|n't) to (?:use|invoke|trigger|load|call)|(?:do not|don't|never) (?:use|trigger|invoke)"
    r'|when to (?:skip|avoid)|^[\d.\s]*not for\b|anti-?triggers?|(?:does|is) not (?:for|do|cover)|out of scope'
    r'|不适用|不要(?:使用|用)|何时不',
    re.MULTILINE,
)
"""A heading (lower-cased) over a section that says when not to use the skill."""
_NOT_HEADING_WORDS = ('not ', "n't ", 'never ', 'to skip', 'to avoid', 'anti', 'out of scope', '不')
"""One of these is in every match of `_NOT_HEADING`: looking for them first is cheaper than the search."""
_SENTENCE_END = re.compile(r'(?<=[.!?;。！？；])\s*|\n+')
_CUE = re.compile(
    # The lookahead names the first letter of every match, which lets the regex engine skip to the next candidate
    # instead of trying each alternative at every position: a search twice as fast, on every description.
    r'(?=[dnas不])'
    r"(?:\b(?:do not|don't|never|avoid)\s+(?:use|using|trigger|invoke|call|load|activate|apply)\b"
    r'|\bnot\s+(?:for|intended|meant|suitable|designed|when|to be used|used for)\b'
    r'|\bskip (?:this|it)?\s*(?:for|when|if)\b'
    r'|不适用|不适合|不要(?:使用|用|触发)|不用于|不负责|不处理|不触发)',
    re.IGNORECASE,
)
"""Where a clause saying what the skill is not for begins."""
_CUE_WORDS = ('not', "n't", 'never', 'avoid', 'skip')
"""One of these is in every match of `_CUE` in ASCII text, lower-cased (see `_may_have_cue`)."""
