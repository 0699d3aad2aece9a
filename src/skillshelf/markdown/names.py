"""The naming rules: what may name a skill in skillshelf, and what the Agent Skills format allows in a `SKILL.md`.

One rule for every place a name is checked (a Python skill, a `SKILL.md`, a command file, a user's `/name`, lint), so
they cannot disagree. skillshelf accepts lower-case letters and digits joined by single hyphens or underscores:
pydantic-ai users name things in snake_case (`Skill('data_analysis', ...)`). The format itself
(https://agentskills.io/specification) allows hyphens only, so a `SKILL.md` name with an underscore loads but is
reported as a deviation (`spec_name_problem`). Names that differ only in `-` and `_` count as one name (see
`library.confusables`), so `data_analysis` and `data-analysis` can never both be offered.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = (
    'MAX_NAME_LENGTH',
    'MAX_QUALIFIED_NAME_LENGTH',
    'name_problem',
    'qualified_name_problem',
    'spec_name_problem',
)

MAX_NAME_LENGTH = 64
MAX_QUALIFIED_NAME_LENGTH = 2 * MAX_NAME_LENGTH + 1
"""A plugin's skill: `plugin:skill`, two names and a colon."""

_NAME_CHARACTERS = re.compile(r'(?:[^\W_]|[-_])+')
"""Letters and digits of any script (what `str.isalnum` accepts), hyphens and underscores."""
_PLAIN_NAME = re.compile(r'[a-z0-9]+(?:[-_][a-z0-9]+)*')
"""A valid name of ASCII letters and digits, as nearly every name is: checked in one match (a name is checked several
times as a skill is read)."""
_DOUBLED_SEPARATOR = re.compile(r'[-_]{2}')
_INVISIBLE_LETTERS = re.compile('[\u115f\u1160\u3164\uffa0]')
"""The Hangul fillers: letters to Unicode (so `str.isalnum` accepts them) that draw nothing, so `'\u115fa'` would
look like `'a'` in a catalog. The other invisible characters (zero-width spaces, bidirectional controls) are not
letters and fail the character rule anyway."""


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a skill, or `None`: lower-case letters and digits (of any script) joined by single
    hyphens or underscores (`pdf-forms`, `data_analysis`), at most 64 characters, NFKC-normalised."""
    if len(name) <= MAX_NAME_LENGTH and _PLAIN_NAME.fullmatch(name):
        return None  # passes every rule of `_broken_rule`: ASCII is NFKC-normalised, and the pattern is the rest
    return _broken_rule(name)


def qualified_name_problem(name: str) -> str | None:
    """Why `name` cannot name a skill, or `None`: a name (see `name_problem`), or a plugin's skill, `plugin:skill`, two
    names joined by one colon, as Claude Code names the skills of its plugins (see `sources.plugins`)."""
    plugin, colon, skill = name.partition(':')
    if not colon:
        return name_problem(name)
    for part in (plugin, skill):
        if (problem := name_problem(part)) is not None:
            return f'{problem} (in the plugin skill name {name!r})'
    return None


def _broken_rule(name: str) -> str | None:
    """The first naming rule `name` breaks, checked one by one."""
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
    if name.startswith('_') or name.endswith('_'):
        return f'the name {name!r} starts or ends with an underscore'
    if '--' in name:
        return f'the name {name!r} has consecutive hyphens'
    if _DOUBLED_SEPARATOR.search(name):
        return f'the name {name!r} has consecutive separators; join words with one hyphen (or underscore)'
    if (invisible := _INVISIBLE_LETTERS.search(name)) is not None:
        code = f'U+{ord(invisible[0]):04X}'
        return f'the name {name!r} has an invisible character ({code}), so it would look like another name'
    if not _NAME_CHARACTERS.fullmatch(name):
        return f'the name {name!r} may only contain lower-case letters, digits and single hyphens (or underscores)'
    return None


def spec_name_problem(name: str) -> str | None:
    """Why `name` breaks the Agent Skills format's naming rule (`name_problem`, and hyphens only), or `None`."""
    if (problem := name_problem(name)) is not None:
        return problem
    if '_' in name:
        return (
            f'the name {name!r} has underscores, which the Agent Skills format does not allow in a SKILL.md; '
            f'use hyphens ({name.replace("_", "-")!r})'
        )
    return None
