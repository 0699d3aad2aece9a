"""Whether a shell command line is one simple command, and its words: what a rule naming a program may approve.

`run_command` runs its line under `sh -c`, so `git status || rm -f notes.txt` is two programs. A rule that names a
program (`Bash(git status:*)`) can only speak for a line that runs that program alone, with words the rule sees as
the shell will pass them. `read_simple_command` proves that or refuses: it accepts only lines made of words, each
of plain characters (ASCII letters and digits, `_ @ % + = : , . / -`), single-quoted text (anything but a control
character), or double-quoted text without `$`, a backquote or a backslash, separated by spaces or tabs. Everything
else is refused, so no control operator (`;`, `&`, `|`, `&&`, `||`, a line break), no command or process
substitution, no redirection or here-doc, no `$` at all (parameter expansion could inject words), no pattern that
expands to file names (`*`, `?`, `[`), no `~`, no comment, no backslash escape, no subshell or group. The first
word may not hold `=` (an assignment before the command, `PAGER=sh git log`) nor be a reserved word (`if`,
`time`, ...). Within these rules every POSIX shell (dash, bash, busybox) reads the line the same way, as one
program run with exactly these words; a line outside them is not a simple command as far as approval goes.
"""

from __future__ import annotations

import shlex
import string
from dataclasses import dataclass

__all__ = ('NotASimpleCommand', 'SimpleCommand', 'read_simple_command', 'simple_command')

_PLAIN = frozenset(string.ascii_letters + string.digits + '_@%+=:,./-')
"""Characters no POSIX shell gives a meaning to outside quotes (`=` only in a first word, checked apart)."""
_SPECIAL_IN_DOUBLE_QUOTES = frozenset('$`\\')
_BLANKS = frozenset(' \t')
_RESERVED = frozenset(
    {'!', '{', '}', '[[', ']]', 'case', 'coproc', 'do', 'done', 'elif', 'else', 'esac', 'fi', 'for', 'function'}
    | {'if', 'in', 'select', 'then', 'time', 'until', 'while'}
)
"""Words a shell reads as syntax at the start of a command (POSIX's, and bash's own)."""
_WHY = {
    **dict.fromkeys(';&|', 'a control operator ({char!r}) that runs another command'),
    **dict.fromkeys('<>', 'a redirection ({char!r})'),
    '$': 'a `$` (a substitution or an expansion)',
    '`': 'a backquote (command substitution)',
    **dict.fromkeys('(){}', 'a subshell or group ({char!r})'),
    **dict.fromkeys('*?[]', 'a pattern that expands to file names ({char!r})'),
    '~': 'a `~` (home folder expansion)',
    '#': 'a `#` (a comment)',
    '\\': 'a backslash escape',
}


class NotASimpleCommand(ValueError):
    """The line is not provably one simple command; the message says why."""


@dataclass(frozen=True)
class SimpleCommand:
    """A command line that runs one program with fixed words, and nothing else."""

    words: tuple[str, ...]
    """The program and its arguments, as the shell passes them (quotes removed); never empty."""

    @property
    def program(self) -> str:
        """The program: the first word."""
        return self.words[0]

    @property
    def line(self) -> str:
        """The words as one canonical line (each quoted only where it must be), for matching rules against."""
        return shlex.join(self.words)


def simple_command(line: str) -> SimpleCommand | None:
    """`line` as one simple command, or `None` when it is not provably one (see the module docstring)."""
    try:
        return read_simple_command(line)
    except NotASimpleCommand:
        return None


def read_simple_command(line: str) -> SimpleCommand:
    """`line` as one simple command (see the module docstring).

    Raises:
        NotASimpleCommand: the line holds anything but plain or quoted words; the message says what.
    """
    for char in line:
        if char not in _BLANKS and (ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0):
            raise NotASimpleCommand(
                'it holds a line break, which starts another command'
                if char in '\n\r'
                else f'it holds the control character {char!r}'
            )
    words: list[str] = []
    word: list[str] | None = None  # None: between words
    index = 0
    while index < len(line):
        char = line[index]
        if char in _BLANKS:
            if word is not None:
                words.append(''.join(word))
                word = None
            index += 1
            continue
        word = [] if word is None else word
        if char in _PLAIN:
            word.append(char)
            index += 1
        elif char in '\'"':
            end = line.find(char, index + 1)
            if end < 0:
                raise NotASimpleCommand(f'a {char} quote is not closed')
            quoted = line[index + 1 : end]
            if char == '"' and (special := next((c for c in quoted if c in _SPECIAL_IN_DOUBLE_QUOTES), None)):
                raise NotASimpleCommand(f'it has {_why(special)} inside double quotes')
            word.append(quoted)
            index = end + 1
        else:
            raise NotASimpleCommand(f'it has {_why(char)}')
    if word is not None:
        words.append(''.join(word))
    if not words:
        raise NotASimpleCommand('it is empty')
    if not words[0]:
        raise NotASimpleCommand('its program is an empty word')
    if '=' in words[0]:
        raise NotASimpleCommand(f'it starts with an assignment ({words[0]!r})')
    if words[0] in _RESERVED:
        raise NotASimpleCommand(f'it starts with the shell keyword {words[0]!r}')
    return SimpleCommand(tuple(words))


def _why(char: str) -> str:
    return _WHY.get(char, 'the character {char!r}, which a shell may read specially').format(char=char)
