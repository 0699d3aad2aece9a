"""The programs a shell script runs: the first word of each simple command, found with `shlex`.

Conservative on purpose: a word counts only where a command starts (at the start of a line, after `;`, `&&`,
`||`, `|`, `&`, `(`, `$(`, or a keyword such as `then` and `do`) and only when it names a program the plain way
(`jq`, not `$TOOL`, `./build.sh` or `"$DIR/run"`). A `$(...)` inside a quoted word is read as
commands too. Left out: shell keywords and builtins, the script's own functions, variable assignments,
here-document bodies, `case` patterns, backquotes and `bash -c` strings. A
program the script looks for first (`command -v node`, `which node`, `type node`, `hash node`) is optional. The
packages an `npm install` command names are kept too (`node_source`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field

from .node_source import npm_install_packages

__all__ = ('ShellFindings', 'command_lines', 'shell_commands', 'split_words', 'substitutions')

_NAME = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.+-]*')
_KEYWORDS_BEFORE_COMMAND = frozenset(
    {'if', 'then', 'else', 'elif', 'while', 'until', 'do', '!', '{', 'time', 'fi', 'done', 'esac', '}'}
)
"""Words after which a command starts."""
_SKIP_SEGMENT = frozenset({'for', 'select', 'case', '[[', ']]', 'in', 'function'})
"""Words that start something other than a command (a loop's variable, a test, a function's name)."""
_BUILTINS = frozenset(
    {
        '.',
        ':',
        '[',
        'alias',
        'bg',
        'bind',
        'break',
        'builtin',
        'caller',
        'cd',
        'compgen',
        'complete',
        'continue',
        'declare',
        'dirs',
        'disown',
        'echo',
        'enable',
        'eval',
        'exit',
        'export',
        'false',
        'fc',
        'fg',
        'getopts',
        'hash',
        'help',
        'history',
        'jobs',
        'kill',
        'let',
        'local',
        'logout',
        'mapfile',
        'popd',
        'printf',
        'pushd',
        'pwd',
        'read',
        'readarray',
        'readonly',
        'return',
        'set',
        'shift',
        'shopt',
        'source',
        'suspend',
        'test',
        'trap',
        'true',
        'type',
        'typeset',
        'ulimit',
        'umask',
        'unalias',
        'unset',
        'wait',
    }
)
_PASS_THROUGH = frozenset({'exec', 'command', 'nohup', 'env'})
"""Words that run the next word as the command (`exec node server.js`); `nohup` and `env` are programs too."""
_PROBES = frozenset({'which', 'type', 'hash'})
_SEPARATORS = frozenset({';', ';;', '&', '&&', '|', '||', '|&', '(', ')', '()', ';&', ';;&'})
_NEEDS_SHLEX = re.compile(r'[\'"\\#]')
_PLAIN_WORDS = re.compile(r'[();<>|&]+|[^\s();<>|&]+')
_HEREDOC = frozenset({'<<', '<<-'})
_FUNCTION = re.compile(
    r'^\s*(?:function\s+)?(?P<name>[A-Za-z_][\w.-]*)\s*\(\s*\)|^\s*function\s+(?P<bare>[A-Za-z_][\w.-]*)'
)
MAX_JOINED_LINES = 20
"""A quote left open is read on over at most this many lines before the line is given up."""
MAX_REREADS = 1000
"""Reading on past an open quote re-reads the line; a script gets this many re-reads in all (real ones need a few),
so a file of open quotes costs no more than a second."""
MAX_SHELL_BYTES = 128 * 1024
"""Only this much of a script is read: real shell scripts are far smaller (13 KiB is the largest in Anthropic's
skills), and a huge one would take long."""


@dataclass
class ShellFindings:
    """The programs one shell script runs."""

    commands: dict[str, bool] = field(default_factory=dict[str, bool])
    """Program → optional (every use is after a `command -v` style lookup of it in the same script)."""
    unread: int = 0
    """Lines that could not be split into words (an unbalanced quote), left out."""
    cut: bool = False
    """Whether the script is longer than `MAX_SHELL_BYTES` and only its start was read."""
    node_packages: list[str] = field(default_factory=list[str])
    """The npm packages it installs (`npm install -g pptxgenjs`), in order."""


def shell_commands(text: str) -> ShellFindings:
    """The programs the shell script `text` runs (see the module docstring)."""
    findings = ShellFindings(cut=len(text) > MAX_SHELL_BYTES)
    text = text[:MAX_SHELL_BYTES]
    functions = {match['name'] or match['bare'] for match in map(_FUNCTION.match, text.splitlines()) if match}
    scan = _Scan(functions)
    for _, tokens in command_lines(text, findings):
        scan.line(tokens)
    for command in scan.found:
        findings.commands[command] = command in scan.probed
    findings.node_packages = list(dict.fromkeys(scan.node_packages))
    return findings


class _Scan:
    """The programs of a script's lines, read one after the other (a `case` spans lines)."""

    def __init__(self, functions: set[str]) -> None:
        self.functions = functions
        self.found: list[str] = []
        self.probed: set[str] = set()
        self.node_packages: list[str] = []
        self.case_depth = 0

    def line(self, tokens: list[str], depth: int = 0) -> None:
        if self.case_depth and ')' in tokens and ('(' not in tokens or tokens.index(')') < tokens.index('(')):
            tokens = tokens[tokens.index(')') + 1 :]  # a `case` pattern: `start|stop)`
        for segment in _segments(tokens):
            words = _after_keywords(segment)
            self.case_depth += (words[:1] == ['case']) - (words[:1] == ['esac'] or segment[:1] == ['esac'])
            programs, probes = _programs(words)
            if words[:1] == ['npm']:
                self.node_packages += npm_install_packages(words[1:])
            self.probed.update(probes)
            self.found += [program for program in programs if program not in self.functions]
            for word in segment:
                for inner in substitutions(word) if depth < 3 else ():
                    split = split_words(inner)
                    if split is not None:
                        self.line(split, depth + 1)


def substitutions(word: str, openers: tuple[str, ...] = ('$(',)) -> list[str]:
    """The commands of the substitutions opened by `openers` inside a word (`"$(uname -s)"`), those of the first
    opener first; an unclosed one runs to the end of the word."""
    found: list[str] = []
    for opener in openers:
        start = word.find(opener)
        while start != -1:
            depth, index = 1, start + len(opener)
            while index < len(word) and depth:
                depth += {'(': 1, ')': -1}.get(word[index], 0)
                index += 1
            found.append(word[start + len(opener) : index - 1 if depth == 0 else index])
            start = word.find(opener, index)
    return found


def command_lines(text: str, findings: ShellFindings | None = None) -> Iterator[tuple[int, list[str]]]:
    """The words of each logical line (continued lines joined, a quote spanning lines read on), each with the number
    of the line it starts on, here-document bodies left out; lines that cannot be split are counted in `findings`."""
    lines = text.splitlines()
    index = 0
    rereads = MAX_REREADS
    while index < len(lines):
        line, index = lines[index], index + 1
        start = index
        while line.endswith('\\') and index < len(lines):
            line, index = line[:-1] + ' ' + lines[index], index + 1
        tokens = split_words(line)
        joined = 0
        while tokens is None and index < len(lines) and joined < MAX_JOINED_LINES and rereads:
            line, index, joined, rereads = line + '\n' + lines[index], index + 1, joined + 1, rereads - 1
            tokens = split_words(line)
        if tokens is None:
            if findings is not None:
                findings.unread += 1
            continue
        yield start, tokens
        for position, token in enumerate(tokens[:-1]):
            if token in _HEREDOC:
                end = tokens[position + 1].lstrip('-')  # `<<-EOF` splits as `<<`, `-EOF`
                while index < len(lines) and lines[index].strip() != end:
                    index += 1
                index += 1


def split_words(line: str) -> list[str] | None:
    """The words of `line` as `shlex` splits them (runs of `();<>|&` are words of their own), `None` at an open
    quote. A line without quotes, escapes or `#` is split the same way by a regular expression, ten times faster."""
    if not _NEEDS_SHLEX.search(line):
        return _PLAIN_WORDS.findall(line)
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = '#'
    try:
        return list(lexer)
    except ValueError:  # an open quote
        return None


def _segments(tokens: list[str]) -> Iterator[list[str]]:
    segment: list[str] = []
    for token in tokens:
        if token in _SEPARATORS:  # `$(date)` splits as `$`, `(`, `date`, `)`: the substitution is a segment too
            yield segment
            segment = []
        else:
            segment.append(token)
    yield segment


def _after_keywords(segment: list[str]) -> list[str]:
    """The words of a simple command after the keywords and assignments before it."""
    start = 0
    while start < len(segment) and (segment[start] in _KEYWORDS_BEFORE_COMMAND or _is_assignment(segment[start])):
        start += 1
    return segment[start:]


def _programs(words: list[str]) -> tuple[list[str], list[str]]:
    """The programs a simple command runs (`nohup node x.js`: both), and the programs it looks up."""
    if not words or words[0] in _SKIP_SEGMENT:
        return [], []
    first, rest = words[0], [word for word in words[1:] if not word.startswith('-')]
    if first == 'command' and words[1:2] in (['-v'], ['-V']):
        return [], rest
    if first in _PROBES:
        return ([first] if first == 'which' else []), rest
    if first in _PASS_THROUGH:
        inner, probes = _programs([word for word in rest if not _is_assignment(word)])
        return ([first] if first in ('nohup', 'env') else []) + inner, probes
    if first in _BUILTINS or not _NAME.fullmatch(first):
        return [], []
    return [first], []


def _is_assignment(word: str) -> bool:
    return re.match(r'[A-Za-z_]\w*(\[[^\]]*\])?\+?=', word) is not None
