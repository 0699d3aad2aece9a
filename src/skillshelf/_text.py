"""Shortening text for messages, catalogs and tables: one rule everywhere."""

from __future__ import annotations

import re

__all__ = ('hide_passwords', 'one_line', 'shown', 'without_paths')

SHOWN_CHARACTERS = 80
"""How much of a model-supplied argument a message repeats back."""


def one_line(text: str, width: int) -> str:
    """`text` on one line, cut at a word boundary with `…` when it is longer than `width` characters."""
    line = ' '.join(text.split())
    if len(line) <= width:
        return line
    cut = line[: width - 1].rsplit(' ', 1)[0]
    return cut.rstrip(' ,.;:') + '…'


def shown(text: str, limit: int = SHOWN_CHARACTERS) -> str:
    """`text` quoted for a message: `repr` escapes what cannot be sent (control characters, lone surrogates), and
    anything longer than `limit` characters is cut, so a message never echoes an enormous argument back."""
    if len(text) <= limit:
        return repr(text)
    return f'{text[: limit - 1]!r}… ({len(text):,} characters)'


_FOLDERS_OF_ABSOLUTE_PATH = re.compile(r'(?<![\w.~:/\\-])(?:[A-Za-z]:|~)?[\\/](?:[^\s\'"`()<>\\/]+[\\/])+')
"""The folders of an absolute path (`/home/me/skills/` of `/home/me/skills/deploy`, `C:\\skills\\`), up to its last
part."""


def without_paths(text: str) -> str:
    """`text` with every absolute path cut to its last part (`/home/me/skills/deploy/SKILL.md` becomes `SKILL.md`):
    for reasons written for the application (a skipped skill's, say) that the model reads too, since the model needs
    no map of the host's file system."""
    return _FOLDERS_OF_ABSOLUTE_PATH.sub('', text)


_URL_PASSWORD = re.compile(r'(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s/@:]*:)(?P<password>[^\s/]*)@')


def hide_passwords(text: str, *secrets: str | None) -> str:
    """`text` with the password of every URL in it (`scheme://user:password@host`) and each of `secrets` shown as
    `***`: what a database URL puts in a message, an error from its driver or a `repr` must never reach a log."""
    hidden = _URL_PASSWORD.sub(lambda found: f'{found["head"]}***@', text)
    for secret in secrets:
        if secret:
            hidden = hidden.replace(secret, '***')
    return hidden
