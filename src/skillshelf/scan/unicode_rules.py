"""Invisible and direction-changing characters: text a person reviewing a skill does not see, but the model reads.

Unicode's own categories decide (`unicodedata`): format characters (`Cf`: zero-width spaces and joiners, bidi
controls, tag characters) and the variation selectors of the supplement plane. What legitimate text needs is let
through: a byte-order mark at the start, zero-width joiners inside emoji and the scripts that use them (Persian,
Indic), tag characters that spell a subdivision flag (🏴 + tags), and the marks of right-to-left text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from .finding import Severity

__all__ = ('hidden_characters',)

_OVERRIDES = frozenset('\u202d\u202e')
"""Left-to-right and right-to-left override: they reorder what a reader sees (Trojan Source)."""
_BIDI = frozenset('\u202a\u202b\u202c\u2066\u2067\u2068\u2069')
"""Embeddings and isolates: needed in right-to-left text, suspicious elsewhere."""
_MARKS = frozenset('\u200e\u200f\u061c')
"""Left-to-right, right-to-left and Arabic letter marks."""
_JOINERS = frozenset('\u200c\u200d')
_RTL_LETTER = re.compile('[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]')
_RUN = 3
"""A run of this many invisible characters in a row carries a message (one character per bit or letter)."""
_SUSPECT = re.compile(
    '[\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\ufff9-\ufffb\U000e0000-\U000e01ef]'
)


def hidden_characters(text: str, first_line: int = 1) -> Iterator[tuple[int, Severity, str]]:
    """`(line, severity, message)` for each line of `text` holding characters a reader does not see."""
    if text.isascii() or _SUSPECT.search(text) is None:
        return
    for number, line in enumerate(text.split('\n'), first_line):
        if _SUSPECT.search(line) is None:
            continue
        found = _judge(line, at_start=number == 1)
        if found is not None:
            yield number, *found


def _judge(line: str, *, at_start: bool) -> tuple[Severity, str] | None:
    """The worst thing about one line's invisible characters, or `None` when each is where legitimate text puts
    it."""
    rtl = _RTL_LETTER.search(line) is not None
    run, longest, hidden, worst = 0, 0, set[str](), None
    for index, char in enumerate(line):
        if not _invisible(char):
            run = 0
            continue
        if _legitimate(line, index, char, rtl=rtl, at_start=at_start):
            run = 0
            continue
        run += 1
        longest = max(longest, run)
        hidden.add(char)
        if char in _OVERRIDES or (char in _BIDI and not rtl):
            worst = 'direction'
        elif 0xE0000 <= ord(char) <= 0xE007F:
            worst = worst or 'tags'
    if not hidden:
        return None
    names = ', '.join(sorted(f'U+{ord(char):04X} {unicodedata.name(char, "unnamed")}' for char in hidden)[:3])
    if worst == 'direction':
        return 'critical', f'a direction-changing character ({names}) reorders what a reader sees of this line'
    if worst == 'tags' or longest >= _RUN:
        return 'critical', (
            f'{longest} invisible characters in a row ({names}): text a reviewer cannot see but the model reads'
        )
    return 'warning', f'an invisible character ({names}) in the text'


def _invisible(char: str) -> bool:
    code = ord(char)
    return unicodedata.category(char) == 'Cf' or 0xE0100 <= code <= 0xE01EF or code in (0x115F, 0x1160, 0x3164)


def _legitimate(line: str, index: int, char: str, *, rtl: bool, at_start: bool) -> bool:
    """Whether an invisible character is where legitimate text uses it."""
    if char == '\ufeff':
        return at_start and index == 0
    if char == '\u00ad':  # a soft hyphen shows where a word breaks
        return True
    if char in _JOINERS or char == '\ufe0f':
        before, after = line[index - 1 : index], line[index + 1 : index + 2]
        return (
            bool(before)
            and bool(after)
            and not _invisible(before)
            and not _invisible(after)
            and (not before.isascii() or not after.isascii())
        )
    if char in _MARKS or char in _BIDI:
        return rtl
    if 0xE0020 <= ord(char) <= 0xE007F:  # a subdivision flag: 🏴, tag letters, cancel tag
        start = index
        while start > 0 and 0xE0020 <= ord(line[start - 1]) <= 0xE007F:
            start -= 1
        return start > 0 and line[start - 1] == '\U0001f3f4'
    return False
