"""Who may invoke a skill: the `disable-model-invocation` and `user-invocable` fields, read so that they fail closed.

Authors write these flags in many ways: `true`, `"true"`, `yes`, `1`, `on`. YAML makes only some of them booleans,
and reading `"true"` as "not true" would hand a skill meant for the user alone to the model. So each is read as
what it spells (`true`/`yes`/`on`/`1` and `false`/`no`/`off`/`0`, in any case), and a value that spells neither
(`maybe`, `2`, a list) is read as the restrictive choice: the model may not invoke the skill, or the user may not.
Every value that is not a YAML boolean is reported where the skill is read (a `SkillFormatWarning`, an error
with `strict`), so the author can write `true` or `false`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._text import one_line, shown

__all__ = ('INVOCATION_FLAGS', 'flag_problems', 'invocation_flag', 'read_flag')

INVOCATION_FLAGS: dict[str, bool] = {'disable-model-invocation': True, 'user-invocable': False}
"""Each flag, and the value that restricts who may invoke the skill (taken when a value spells neither)."""
_DEFAULTS = {'disable-model-invocation': False, 'user-invocable': True}
_TRUE = frozenset({'true', 'yes', 'on', '1'})
_FALSE = frozenset({'false', 'no', 'off', '0'})


def read_flag(value: object) -> bool | None:
    """`value` as a boolean when it spells one (`True`, `1`, `'yes'`, `'Off'` ...), else `None`."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    return None


def invocation_flag(metadata: Mapping[str, Any], key: str) -> bool:
    """The flag `key` (one of `INVOCATION_FLAGS`) of a skill's `metadata`: its default when absent or empty, what
    it spells, or the restrictive value when it spells neither."""
    value = metadata.get(key)
    if value is None:
        return _DEFAULTS[key]
    flag = read_flag(value)
    return INVOCATION_FLAGS[key] if flag is None else flag


def flag_problems(fields: Mapping[str, Any]) -> list[str]:
    """What is wrong with the invocation flags among `fields` (frontmatter), and how each was read: one note per
    flag that is set to anything but a YAML boolean."""
    problems: list[str] = []
    for key, restrictive in INVOCATION_FLAGS.items():
        value = fields.get(key)
        if value is None or isinstance(value, bool):
            continue
        written = shown(value, 40) if isinstance(value, str) else one_line(repr(value), 40)
        flag = read_flag(value)
        if flag is not None:
            problems.append(f'`{key}` is {written}, not a YAML boolean; read as {str(flag).lower()} (write it so)')
            continue
        who = 'the model may not load the skill' if key == 'disable-model-invocation' else 'users may not invoke it'
        problems.append(
            f'`{key}` is {written}, which is neither true nor false; read as {str(restrictive).lower()}, so {who} '
            '(write true or false)'
        )
    return problems
