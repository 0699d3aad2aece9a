"""Skill names that look alike: a folder named `dеplоy` (Cyrillic е and о) must not sit quietly beside `deploy`.

Two names are confusable when they have the same skeleton, after Unicode Technical Standard #39: each character
is replaced by the prototype of its class of look-alikes in Unicode's `confusables.txt` (as packaged by
`confusable-homoglyphs`), preferring an ASCII letter, so `ԁеplоy` and `dep1oy` both have the skeleton `deploy`.
In ASCII names only digits that pass for letters (`1` for `l`, `0` for `o`) change. An underscore counts as a
hyphen: skillshelf accepts both as word separators (see `markdown.names`), and `data_analysis` beside
`data-analysis` would be two skills a model or a user cannot tell apart.
"""

from __future__ import annotations

import unicodedata
from functools import cache, lru_cache

__all__ = ('skeleton',)


@lru_cache(maxsize=1 << 18)
def skeleton(name: str) -> str:
    """The form `name` shares with every name that looks like it (see the module docstring); remembered, since a
    library checks every name again whenever one of its sources changed."""
    folded = name.casefold().replace('_', '-')
    if folded.isascii():  # most names: the table is loaded (70 ms) only for the first name that is not ASCII
        return folded.translate(_ASCII_PROTOTYPES)
    prototypes = _prototypes()
    decomposed = unicodedata.normalize('NFD', folded)
    return unicodedata.normalize('NFD', ''.join(prototypes.get(character, character) for character in decomposed))


_ASCII_PROTOTYPES = str.maketrans({'1': 'l', 'I': 'l', 'O': '0', '`': "'", '|': 'l'})
"""`_prototypes()` for the ASCII characters it changes (a test checks that they agree); NFD leaves ASCII as it is."""


@cache
def _prototypes() -> dict[str, str]:
    """Character → the prototype of its look-alike class: its ASCII member where it has one."""
    from confusable_homoglyphs.confusables import confusables_data  # type: ignore[import-untyped]

    data: dict[str, list[dict[str, str]]] = confusables_data  # pyright: ignore[reportUnknownVariableType]
    prototypes: dict[str, str] = {}
    for character, homoglyphs in data.items():
        members = {character, *(glyph['c'] for glyph in homoglyphs if len(glyph['c']) == 1)}
        # Letters before digits: `l` stands for its class, not `1`.
        ascii_members = sorted(
            (member for member in members if member.isascii() and (member.islower() or member.isdigit())),
            key=lambda member: (member.isdigit(), member),
        )
        prototype = ascii_members[0] if ascii_members else min(members)
        if prototype != character:
            prototypes[character] = prototype
    return prototypes
