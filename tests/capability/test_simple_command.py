"""`read_simple_command` and `read_commands`: which command lines are simple commands (one, or joined by `;`, `&&`,
`||` or `|`), with which words, and why the others are not.

The proof that an accepted line really runs as one program with these words, under real shells, is the property in
`tests/hostile/test_compound_commands.py`; these are the cases spelled out.
"""

from __future__ import annotations

import re

import pytest

from skillshelf.capability.approval import Preapproval
from skillshelf.capability.simple_command import NotASimpleCommand, read_commands, read_simple_command, simple_command


@pytest.mark.parametrize(
    ('line', 'words'),
    [
        ('git status', ('git', 'status')),
        ('  git   status\t--short  ', ('git', 'status', '--short')),
        ('git log --format=%H -n 3', ('git', 'log', '--format=%H', '-n', '3')),
        ("git commit -m 'fix: the $PATH; rm -rf / && `x`'", ('git', 'commit', '-m', 'fix: the $PATH; rm -rf / && `x`')),
        ('git commit -m "one | two > three"', ('git', 'commit', '-m', 'one | two > three')),
        ("""git a'b'"c"d""", ('git', 'abcd')),
        ("git add ''", ('git', 'add', '')),
        (
            'python3 scripts/fill.py a=b x,y user@host:path',
            ('python3', 'scripts/fill.py', 'a=b', 'x,y', 'user@host:path'),
        ),
        ('./scripts/build.sh', ('./scripts/build.sh',)),
        (
            "soffice --convert-to 'pdf' 'Annual report (final).docx'",
            ('soffice', '--convert-to', 'pdf', 'Annual report (final).docx'),
        ),
        ('git "status" "é ü 你好"', ('git', 'status', 'é ü 你好')),
        ('git "it\'s"', ('git', "it's")),
    ],
)
def test_a_simple_command_gives_its_words(line: str, words: tuple[str, ...]) -> None:
    assert read_simple_command(line).words == words


@pytest.mark.parametrize(
    ('line', 'why'),
    [
        ('git status || rm -f notes.txt', "a control operator ('||')"),
        ('git status && rm -f notes.txt', "a control operator ('&&')"),
        ('git status; rm -f notes.txt', "a control operator (';')"),
        ('git status | sh', "a control operator ('|')"),
        ('git status & rm -f notes.txt', 'a `&`, which leaves a program running in the background'),
        ('git status &', 'a `&`, which leaves a program running in the background'),
        ('git status\nrm -f notes.txt', 'a line break'),
        ('git status\r\nrm -f notes.txt', 'a line break'),
        ('git status $(rm -f notes.txt)', 'a `$`'),
        ('git status "$(rm -f notes.txt)"', 'a `$` (a substitution or an expansion) inside double quotes'),
        ('git status `rm -f notes.txt`', 'a backquote'),
        ('git status "`rm -f notes.txt`"', 'a backquote (command substitution) inside double quotes'),
        ('git status <(rm -f notes.txt)', "a redirection ('<')"),
        ('git status > notes.txt', "a redirection ('>')"),
        ('git status 2>notes.txt', "a redirection ('>')"),
        ('git status <<EOF\nx\nEOF', 'a line break'),
        ('git status <<<x', "a redirection ('<')"),
        ('git status $HOME', 'a `$`'),
        ('git status ${x:-y}', 'a `$`'),
        ('git status "$HOME"', 'a `$`'),
        ("git status $'\\x3b'", 'a `$`'),
        ('FOO=bar git status', "it starts a command with an assignment ('FOO=bar')"),
        ('PAGER=sh git log', "it starts a command with an assignment ('PAGER=sh')"),
        ('(git status)', "a subshell or group ('(')"),
        ('{ git status; }', "a subshell or group ('{')"),
        ('git status *', "a pattern that expands to file names ('*')"),
        ('git status file?.txt', "a pattern that expands to file names ('?')"),
        ('git status [ab]', "a pattern that expands to file names ('[')"),
        ('git status ~/x', 'a `~`'),
        ('git status #; rm', 'a `#`'),
        ('git status \\; rm -f notes.txt', 'a backslash'),
        ('git status "a\\"; rm -f notes.txt; "', 'a backslash escape inside double quotes'),
        ("git status 'unclosed", "a ' quote is not closed"),
        ('git status "unclosed', 'a " quote is not closed'),
        ('', 'it is empty'),
        (' \t ', 'it is empty'),
        ("'' git status", 'its program is an empty word'),
        ('if git status', "the shell keyword 'if'"),
        ('time git status', "the shell keyword 'time'"),
        ('%1', "it starts a command with '%1', which bash reads as a job"),
        ("git status && '%'", "it starts a command with '%', which bash reads as a job"),
        ('! git status', "the character '!'"),
        ('git status\x00', "the control character '\\x00'"),
        ('git status\x1b[2J', "the control character '\\x1b'"),
        ('git stätus', "the character 'ä'"),
    ],
)
def test_anything_else_is_not_a_simple_command_and_the_message_says_why(line: str, why: str) -> None:
    with pytest.raises(NotASimpleCommand, match=re.escape(why)):
        read_simple_command(line)
    assert simple_command(line) is None


@pytest.mark.parametrize(
    ('line', 'commands', 'operators'),
    [
        ('git status', [('git', 'status')], ()),
        ('git status && git diff', [('git', 'status'), ('git', 'diff')], ('&&',)),
        (
            'git status||git diff;git log|head -n 3',
            [('git', 'status'), ('git', 'diff'), ('git', 'log'), ('head', '-n', '3')],
            ('||', ';', '|'),
        ),
        ("git commit -m 'a && b' ; git log", [('git', 'commit', '-m', 'a && b'), ('git', 'log')], (';',)),
    ],
)
def test_simple_commands_joined_by_operators_give_each_commands_words(
    line: str, commands: list[tuple[str, ...]], operators: tuple[str, ...]
) -> None:
    found = read_commands(line)
    assert ([command.words for command in found.commands], found.operators) == (commands, operators)


@pytest.mark.parametrize(
    ('line', 'why'),
    [
        ('git status & git diff', 'a `&`'),
        ('git status |& git diff', 'a `&`'),
        ('git status &> out.txt', 'a `&`'),
        ('git status &&& git diff', 'a `&`'),
        ('git status ;', "an empty command beside ';'"),
        ('; git status', "an empty command beside ';'"),
        ('git status ;; git diff', "an empty command beside ';'"),
        ('git status || | git diff', "an empty command beside '|'"),
        ('git status && FOO=1 git diff', "it starts a command with an assignment ('FOO=1')"),
        ('git status && if git diff', "it starts a command with the shell keyword 'if'"),
        ('git status && ! git diff', "the character '!'"),
        ('git status && git diff $(rm -f x)', 'a `$`'),
        ('git status &&\ngit diff', 'a line break'),
    ],
)
def test_a_list_with_anything_else_is_refused(line: str, why: str) -> None:
    with pytest.raises(NotASimpleCommand, match=re.escape(why)):
        read_commands(line)


@pytest.mark.parametrize(
    ('rules', 'line', 'approved'),
    [
        (['Bash(git status:*)'], 'git status', True),
        (['Bash(git status:*)'], 'git status --short', True),
        (['Bash(git status:*)'], "git status -- 'my notes.txt'", True),
        (['Bash(git status:*)'], 'git status || rm -f notes.txt', False),
        (['Bash(git status:*)'], 'git status\nrm -f notes.txt', False),
        (['Bash(git status:*)'], 'git status $(rm -f notes.txt)', False),
        (['Bash(git status:*)'], 'git statusx', False),
        (['Bash(git status:*)'], "git 'status --short'", False),  # one word: not what the rule names
        (['Bash(git status:*)'], "'git status'", False),  # a program named `git status`
        (['Bash(git status --short)'], 'git status --short', True),
        (['Bash(git status --short)'], 'git status --short --long', False),
        (['Bash(git status --short)'], 'git \'status\' "--short"', True),  # the same words, quoted
        (['Bash(python scripts/fill.py:*)'], 'python3 scripts/fill.py a', True),
        (['Bash(python scripts/fill.py:*)'], 'python3 scripts/fill.py a; rm -f x', False),
        # each command of a list is checked: every one must match a rule
        (['Bash(git status:*)'], 'git status && git status --short', True),
        (['Bash(git status:*)'], 'git status ; git status --short | git status', True),
        (['Bash(git status:*)'], 'git status | sh', False),
        (['Bash(git status:*)', 'Bash(head:*)'], 'git status | head -n 3', True),
        (['Bash(git status:*)', 'Bash(head:*)'], 'git status | head -n 3 && rm -f x', False),
        (['Bash(git status:*)'], 'git status & git status', False),
        # a rule that names no program matches every command, but still only simple ones: the rest is asked
        (['Bash'], 'rm -f notes.txt', True),
        (['Bash'], 'git status || rm -f notes.txt', True),
        (['Bash'], 'git status > notes.txt', False),
        (['Bash(*)'], 'git status `rm -f notes.txt`', False),
        (['Bash(*)'], 'PAGER=sh git log', False),
        (['Read', 'git'], 'git status', False),  # a tool name is not a command rule
    ],
)
def test_command_rules_approve_only_simple_commands_each_of_which_they_match(
    rules: list[str], line: str, approved: bool
) -> None:
    assert Preapproval(tuple(rules)).approves_command(line) is approved
