"""Which programs a shell command line runs, with which words, when that can be proved: what `Bash(...)` rules judge.

`run_command` runs its line under `sh -c`, so `git status || rm -f notes.txt` is two programs. A rule that names a
program (`Bash(git status:*)`) can only speak for a line whose every program it sees, with the words the shell will
pass. `read_commands` proves what those are or refuses. It accepts only simple commands joined by `;`, `&&`, `||`
or `|`, each made of words of plain characters (ASCII letters and digits, `_ @ % + = : , . / -`), single-quoted text
(anything but a control character) or double-quoted text without `$`, a backquote or a backslash, separated by
spaces or tabs. Everything else is refused: `&` (a program left running in the background), a line break, command
or process substitution, a redirection or here-doc, any `$` (parameter expansion could inject words), a pattern
that expands to file names (`*`, `?`, `[`), `~`, a comment, a backslash escape, a subshell or group. A command's
first word may not hold `=` (an assignment before it, `PAGER=sh git log`), start with `%` (bash reads it as a job
to bring back) or be a reserved word (`if`, `time`, ...). Within these rules every POSIX shell (dash, bash, busybox) reads the line the same way: each command runs
one program with exactly its words, and nothing else runs.
"""

from __future__ import annotations

import shlex
import string
from dataclasses import dataclass

__all__ = (
    'OPERATORS',
    'CommandList',
    'NotASimpleCommand',
    'SimpleCommand',
    'read_commands',
    'read_simple_command',
    'simple_command',
)

OPERATORS = (';', '&&', '||', '|')
"""What may join two simple commands in a line `read_commands` accepts."""
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
    '&': 'a `&`, which leaves a program running in the background',
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
    """The line is not provably simple commands joined by `OPERATORS` (or, for `read_simple_command`, one simple
    command); the message says why."""


@dataclass(frozen=True)
class SimpleCommand:
    """One program run with fixed words."""

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


@dataclass(frozen=True)
class CommandList:
    """Simple commands joined by `OPERATORS`: which of them run depends on the others' exit codes, but no other
    program runs."""

    commands: tuple[SimpleCommand, ...]
    """The commands, in the order written; never empty."""
    operators: tuple[str, ...]
    """What joins each command to the next (one fewer than the commands)."""


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
    found = read_commands(line)
    if found.operators:
        raise NotASimpleCommand(f'it has a control operator ({found.operators[0]!r}) that runs another command')
    return found.commands[0]


def read_commands(line: str) -> CommandList:
    """The simple commands `line` runs, and the operators joining them (see the module docstring).

    Raises:
        NotASimpleCommand: the line holds anything else; the message says what.
    """
    for char in line:
        if char not in _BLANKS and (ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0):
            raise NotASimpleCommand(
                'it holds a line break, which starts another command'
                if char in '\n\r'
                else f'it holds the control character {char!r}'
            )
    commands: list[SimpleCommand] = []
    operators: list[str] = []
    words: list[str] = []
    word: list[str] | None = None  # None: between words
    index = 0
    while index < len(line):
        char = line[index]
        if char in _BLANKS or char in ';&|':
            if word is not None:
                words.append(''.join(word))
                word = None
            if char in _BLANKS:
                index += 1
                continue
            operator = line[index : index + 2] if line[index : index + 2] in ('&&', '||') else char
            if operator == '&':
                raise NotASimpleCommand(f'it has {_why(char)}')
            commands.append(_command(words, operator))
            operators.append(operator)
            words = []
            index += len(operator)
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
    commands.append(_command(words, operators[-1] if operators else None))
    return CommandList(tuple(commands), tuple(operators))


def _command(words: list[str], operator: str | None) -> SimpleCommand:
    """The simple command of `words`, which `operator` ends or follows."""
    if not words:
        raise NotASimpleCommand(f'it has an empty command beside {operator!r}' if operator else 'it is empty')
    if not words[0]:
        raise NotASimpleCommand('its program is an empty word')
    if '=' in words[0]:
        raise NotASimpleCommand(f'it starts a command with an assignment ({words[0]!r})')
    if words[0].startswith('%'):
        raise NotASimpleCommand(f'it starts a command with {words[0]!r}, which bash reads as a job (`fg`)')
    if words[0] in _RESERVED:
        raise NotASimpleCommand(f'it starts a command with the shell keyword {words[0]!r}')
    return SimpleCommand(tuple(words))


def _why(char: str) -> str:
    return _WHY.get(char, 'the character {char!r}, which a shell may read specially').format(char=char)
