"""Arguments for a skill, as Claude Code passes them: `/release-notes v2.1 --short` or `load_skill(name, arguments)`.

In the skill's instructions `$ARGUMENTS` becomes the whole argument text, `$ARGUMENTS[N]` and `$N` the N-th
argument (from 0; words split as a shell would, quotes kept together), and an argument that is not there becomes
empty text. Instructions without any placeholder get the arguments appended on a line of their own, so they are
never lost. Nothing else in the text is expanded.
"""

from __future__ import annotations

import re
import shlex

__all__ = ('substitute_arguments',)

_PLACEHOLDER = re.compile(r'\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS\b|\$(\d+)\b')


def substitute_arguments(instructions: str, arguments: str) -> str:
    """`instructions` with the placeholders replaced by `arguments` (see the module docstring)."""
    arguments = arguments.strip()
    if _PLACEHOLDER.search(instructions) is None:
        return f'{instructions.rstrip()}\n\nARGUMENTS: {arguments}' if arguments else instructions
    words = _split(arguments)

    def replace(match: re.Match[str]) -> str:
        index = match[1] or match[2]
        if index is None:
            return arguments
        position = int(index)
        return words[position] if position < len(words) else ''

    return _PLACEHOLDER.sub(replace, instructions)


def _split(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: split on spaces rather than refuse what the user typed
        return arguments.split()
