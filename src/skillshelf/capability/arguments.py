"""Arguments for a skill, as Claude Code passes them: `/release-notes v2.1 --short` or `load_skill(name, arguments)`.

The placeholders are Claude Code's (https://code.claude.com/docs/en/skills, "Available string substitutions"):
`$ARGUMENTS` (also `${ARGUMENTS}`) is the whole argument text, `$ARGUMENTS[N]` and `$N` the N-th argument (from 0;
words split as a shell would, quotes kept together). Substitution is made safe for text that only looks like a
placeholder, since skills are full of shell, awk, prices and spreadsheet formulas:

- Without arguments nothing is substituted: the instructions arrive as written (`$5.00` stays `$5.00`, and a
  `$ARGUMENTS` the model loaded without arguments stays a visible blank for it to fill from the conversation).
- A placeholder whose argument was not given stays as written, as in Claude Code (`$2` with one argument).
- `$N` is a placeholder only as a word of its own: not inside a fenced code block (where shell and awk live:
  `awk '{print $1}'`), not right after a letter, digit or `$` (`$B$6` in a formula), and not before `.5` or `,000`
  (`$5.00`, `$1,000`). An inline code span is substituted (`` `gh issue view $0` `` is a command to run). The
  spelled-out forms `$ARGUMENTS[N]` and `$ARGUMENTS` are substituted everywhere, code blocks included.
- A backslash keeps a placeholder literal (`\\$1.00` reads `$1.00`), as in Claude Code; a doubled backslash does not.
- When no placeholder received an argument, or a `$N` in a code block was left as written, the arguments are
  appended on a line of their own (`ARGUMENTS: ...`), so they are never lost.
"""

from __future__ import annotations

import re
import shlex

__all__ = ('code_blocks', 'substitute_arguments')

_PLACEHOLDER = re.compile(
    # A single backslash keeps what Claude Code would substitute literal (`\$1.00`), even where skillshelf would not.
    r'(?<!\\)\\(?P<escaped>\$(?:ARGUMENTS\[\d+\]|\{ARGUMENTS\}|ARGUMENTS(?!\w)|\d+))'
    r'|\$ARGUMENTS\[(?P<indexed>\d+)\]'
    r'|\$\{ARGUMENTS\}'
    r'|\$ARGUMENTS(?!\w)'
    r'|(?<![\w$])\$(?P<position>\d+)(?!\w|[.,]\d)'
)
_FENCE = re.compile(r'^[ \t]{0,3}(?P<fence>`{3,}|~{3,})')


def substitute_arguments(instructions: str, arguments: str, *, append: bool = True) -> str:
    """`instructions` with the placeholders replaced by `arguments` (see the module docstring); without `append`,
    arguments no placeholder took are not appended (a forked skill gets them as its prompt instead)."""
    arguments = arguments.strip()
    if not arguments:
        return _PLACEHOLDER.sub(lambda match: match['escaped'] or match[0], instructions)
    words = _split(arguments)
    code = code_blocks(instructions)
    used = kept_in_code = False

    def replace(match: re.Match[str]) -> str:
        nonlocal used, kept_in_code
        if match['escaped'] is not None:
            return match['escaped']
        index = match['indexed'] or match['position']
        if match['position'] is not None and _inside(match.start(), code):
            kept_in_code = kept_in_code or int(match['position']) < len(words)
            return match[0]
        if index is None:
            used = True
            return arguments
        position = int(index)
        if position >= len(words):
            return match[0]
        used = True
        return words[position]

    text = _PLACEHOLDER.sub(replace, instructions)
    if not append or (used and not kept_in_code):
        return text
    return f'{text.rstrip()}\n\nARGUMENTS: {arguments}'


def code_blocks(text: str) -> list[tuple[int, int]]:
    """Where `text` holds fenced code blocks, as `(start, end)` offsets in order: from an opening fence (three or
    more backticks or tildes) to the closing one, or to the end of the text."""
    blocks: list[tuple[int, int]] = []
    offset = 0
    fence: str | None = None
    block_start = 0
    for line in text.splitlines(keepends=True):
        opening = _FENCE.match(line)
        if fence is None and opening is not None:
            fence, block_start = opening['fence'], offset
        elif fence is not None and opening is not None and _closes(fence, opening['fence'], line):
            blocks.append((block_start, offset + len(line)))
            fence = None
        offset += len(line)
    if fence is not None:
        blocks.append((block_start, offset))
    return blocks


def _closes(fence: str, candidate: str, line: str) -> bool:
    """Whether `line`, opening with `candidate`, closes a block opened by `fence`: the same character, at least as
    many, and nothing else on the line."""
    return candidate.startswith(fence) and not line.strip().lstrip(fence[0])


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def _split(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: split on spaces rather than refuse what the user typed
        return arguments.split()
