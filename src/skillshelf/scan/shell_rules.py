"""The command rules on shell text (a script, a code block, inline code): code fetched and run, payloads decoded
and run, credentials sent out, writes that make something run later, destructive commands, and (through
`dependency_rules`) what gets installed. The words come from the shell parser `skillshelf check` uses
(`scripts.needs.shell`); nothing is run.

Where a command stands decides how bad some findings are: a skill's script runs when the model calls it, while a
code block is an instruction the model reads and a person asked for (setting up a service, formatting a card). So
writes to places that start programs and commands that erase a device are critical in scripts and warnings in
Markdown; code fetched from an unknown host and run, a decoded payload run, erasing a home or root folder and
credentials sent out are critical anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ..scripts.needs.shell import command_lines, split_words
from .dependency_rules import install_findings
from .finding import Hit, Severity
from .shell_words import REDIRECTS, Stage, pipelines, written
from .vocabulary import (
    AUTOSTART,
    CREDENTIAL_STORE,
    GIT_HOOKS,
    OTHER_SKILLS,
    SHELL_PROFILE,
    interpreter,
    known_installer,
    urls_in,
    worth_reading,
)

__all__ = ('EmbeddedCode', 'Hit', 'Language', 'Where', 'shell_findings')

Where = Literal['script', 'markdown']
Language = Literal['python', 'javascript']
EmbeddedCode = Callable[[Language, str, int], list[Hit]]
"""The rules of another language, for code an interpreter is given on its command line (`python -c`, `node -e`) or
as a here-document (passed in, so the rule modules need not import each other)."""
_LANGUAGES: dict[str, Language] = {
    'node': 'javascript',
    'nodejs': 'javascript',
    'deno': 'javascript',
    'bun': 'javascript',
}
_CODE_FLAGS: dict[Language, tuple[str, ...]] = {
    'python': ('-c',),
    'javascript': ('-e', '--eval', '-p', '--print'),
}
"""The flags whose next word is code, by language (`python -c`, `node -e`, `bun --eval`)."""

_PRECIOUS = re.compile(  # folders whose deletion loses a machine or a user's files, not a build's
    r'^(?:/|~|\$\{?HOME\}?|/(?:home|root|etc|usr|var|boot|bin|sbin|lib|lib64|opt|System|Users|Library|srv)|[A-Za-z]:\\?)$'
)
_DEVICE = re.compile(r'^/dev/(?:sd|hd|nvme|mmcblk|disk|rdisk|xvd|vd|mapper/)')
_FORK_BOMB = re.compile(r':\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:')
_REVERSE_SHELL = re.compile(
    r'/dev/tcp/|/dev/udp/|\bnc\b[^\n|]*\s-e\s|\bmkfifo\b[^\n]*\bnc\b|socat\b[^\n]*exec:', re.IGNORECASE
)
_MAY_CONNECT = re.compile(r'/dev/[tu][cd]p|\bnc\b|socat')
_OUTPUT_FLAG = re.compile(r'^(?:-[a-zA-Z]*[oO]|--output|--output-document|>|>>)$')
"""Where a download or a decoder writes its file: `-o FILE`, `-sSLo FILE` (curl), `-qO FILE` (wget), `> FILE`."""
_FETCHES = re.compile(r'curl|wget|base64|xxd|openssl|iwr|irm|aria2c|fetch', re.IGNORECASE)
_HEREDOC = re.compile(r'<<-?\s*[\'"]?(\w+)')
_RUNS_SOMETHING = re.compile(
    r'curl|wget|/dev/tcp|\bnc\b|base64|python[0-9.]*\s+-c|nohup|\bbash\s+-i|\beval\b|https?://', re.IGNORECASE
)


@dataclass
class _Text:
    """What one text does across its lines: files it downloads or decodes, credential reads, sends."""

    where: Where
    embedded: EmbeddedCode | None
    hits: list[Hit] = field(default_factory=list[Hit])
    fetched: dict[str, tuple[int, list[str]]] = field(default_factory=dict[str, tuple[int, list[str]]])
    """A file written by a download or a decoder → the line and the URLs (none for a decoded payload)."""
    credential_line: int = 0
    """The first line that reads a credential store (0: none)."""
    send_line: int = 0
    """The first line that sends data to another machine (0: none)."""


def shell_findings(text: str, first_line: int, where: Where, embedded: EmbeddedCode | None = None) -> list[Hit]:
    """The command rules' findings in the shell text `text`, which starts on line `first_line` of its file."""
    if not worth_reading(text):
        return []
    state = _Text(where, embedded)
    for number, tokens in command_lines(_worth_parsing(text)):
        _line(state, tokens, first_line + number - 1, 0)
    if embedded is not None and '<<' in text:
        _code_fed_in(state, embedded, text, first_line)
    for match in _FORK_BOMB.finditer(text) if ':(' in text else ():
        state.hits.append(
            (
                first_line + text.count('\n', 0, match.start()),
                'destructive',
                'critical',
                'a fork bomb: it starts processes until the machine stops answering',
            )
        )
    for match in _REVERSE_SHELL.finditer(text) if _MAY_CONNECT.search(text) else ():
        state.hits.append(
            (
                first_line + text.count('\n', 0, match.start()),
                'exfiltration',
                'critical',
                'opens a shell or a raw connection to another machine (a reverse shell)',
            )
        )
    if state.credential_line and state.send_line and state.credential_line != state.send_line and where == 'script':
        state.hits.append(
            (
                state.credential_line,
                'exfiltration',
                'critical',
                f'reads a credential store here and sends data out on line {state.send_line}',
            )
        )
    return state.hits


def _code_fed_in(state: _Text, embedded: EmbeddedCode, text: str, first_line: int) -> None:
    """Code given to an interpreter as a here-document (`python3 - <<'EOF'`, `cat <<EOF | node`): the shell parser
    skips the document, so the rules of its language read it, as they read `python -c` code."""
    lines = text.split('\n')
    index = 0
    while index < len(lines):
        line, index = lines[index], index + 1
        opened = _HEREDOC.search(line)
        if opened is None:
            continue
        start = index
        while index < len(lines) and lines[index].strip() != opened[1]:
            index += 1
        words = split_words(line[: opened.start()] + line[opened.end() :].lstrip('\'"'))
        stages = [Stage(stage) for pipeline in pipelines(words or []) for stage in pipeline]
        languages: set[Language] = {
            language for stage in stages if stage.runs_input and (language := _language_of(stage.program)) is not None
        }
        for language in sorted(languages):
            state.hits.extend(embedded(language, '\n'.join(lines[start:index]), first_line + start))
        index += 1


def _language_of(program: str) -> Language | None:
    """The language `program` runs, among those with rules of their own (`python3.12`, `node`)."""
    return 'python' if program.startswith('python') else _LANGUAGES.get(program)


def _worth_parsing(text: str) -> str:
    """`text` with the lines no rule can find anything in blanked (kept as empty lines, so numbers hold), unless
    they continue a line that is kept, or follow a download or a decoder (a later line may run what it wrote):
    parsing is the slow part, and most lines of a code block say nothing."""
    kept: list[str] = []
    keep_next, heredoc, fetched = False, '', False
    for line in text.split('\n'):
        keep = keep_next or fetched or bool(heredoc) or worth_reading(line)
        fetched = fetched or (keep and _FETCHES.search(line) is not None)
        kept.append(line if keep else '')
        if heredoc and line.strip() == heredoc:
            heredoc = ''
        elif keep and (opened := _HEREDOC.search(line)):
            heredoc = opened[1]
        keep_next = keep and (line.endswith('\\') or line.count('"') % 2 == 1 or line.count("'") % 2 == 1)
    return '\n'.join(kept)


def _line(state: _Text, tokens: list[str], line: int, depth: int) -> None:
    """One logical line: its pipelines, their stages, and the code inside substitutions and `-c` strings."""
    credential = CREDENTIAL_STORE.search(' '.join(tokens)) is not None
    sends = False
    for pipeline in pipelines(tokens):
        stages = [Stage(words) for words in pipeline]
        _pipeline(state, stages, line, depth)
        sends = sends or any(stage.sends for stage in stages)
        credential = credential or any(stage.dumps_environment for stage in stages)
    if credential and sends:
        state.hits.append(
            (
                line,
                'exfiltration',
                'critical',
                'reads a credential store (keys, tokens, cookies or the environment) and sends it out in one command',
            )
        )
    elif credential:
        state.credential_line = state.credential_line or line
    elif sends:
        state.send_line = state.send_line or line
    state.hits.extend(
        (line, rule, severity, message) for rule, severity, message in install_findings(tokens, state.where)
    )


def _pipeline(state: _Text, stages: list[Stage], line: int, depth: int) -> None:
    urls = urls_in(' '.join(word for stage in stages for word in stage.words))
    for position, stage in enumerate(stages):
        before = stages[:position]
        if stage.runs_input and any(earlier.downloads for earlier in before):
            state.hits.append(_remote(line, urls, f'pipes a download into {stage.program}'))
        if stage.runs_input and any(earlier.decodes for earlier in before):
            state.hits.append(
                (
                    line,
                    'decoded-code',
                    'critical',
                    f'decodes a payload and pipes it into {stage.program}, hiding what runs',
                )
            )
        _substituted(state, stage, line, depth)
        _file_fetched(state, stage, line, urls)
        _destructive(state, stage, line)
        _persistence(state, stage, line)


def _remote(line: int, urls: list[str], how: str) -> Hit:
    if known_installer(urls):
        return (line, 'remote-code', 'warning', f'{how}: the install script of {", ".join(urls)} runs unread')
    shown = ', '.join(urls) or 'a URL held in a variable'
    return (line, 'remote-code', 'critical', f'{how}: code from {shown} runs without anyone reading it')


def _substituted(state: _Text, stage: Stage, line: int, depth: int) -> None:
    """Code in `$(...)`, `<(...)` or a `-c` string: run as shell (and, for an interpreter, as the code it runs)."""
    runs = interpreter(stage.program) or stage.program in ('source', '.', 'eval')
    for inner in stage.inner:
        words = split_words(inner)
        if words is None or depth > 3:
            continue
        inner_stages = [Stage(part) for pipeline in pipelines(words) for part in pipeline]
        if runs and any(inner_stage.downloads for inner_stage in inner_stages):
            state.hits.append(_remote(line, urls_in(inner), f'runs a download with {stage.program}'))
        if runs and any(inner_stage.decodes for inner_stage in inner_stages):
            state.hits.append(
                (
                    line,
                    'decoded-code',
                    'critical',
                    f'decodes a payload and runs it with {stage.program}, hiding what runs',
                )
            )
        _line(state, words, line, depth + 1)
    flags = stage.args
    language = _language_of(stage.program)
    for position, arg in enumerate(flags[:-1]):
        if depth > 3:
            break
        code = flags[position + 1]
        if language is not None and arg in _CODE_FLAGS[language] and state.embedded is not None:
            state.hits.extend(state.embedded(language, code, line))
        elif arg == '-c' and stage.program in ('sh', 'bash', 'zsh', 'dash', 'ksh') and (words := split_words(code)):
            _line(state, words, line, depth + 1)


def _file_fetched(state: _Text, stage: Stage, line: int, urls: list[str]) -> None:
    """A file written by a download or a decoder, and a later command that runs it."""
    args = stage.args
    output = None
    if stage.downloads or stage.decodes:
        for position, arg in enumerate(args[:-1]):
            if _OUTPUT_FLAG.match(arg) and args[position + 1] != '-':
                output = args[position + 1]
        if output is not None:
            state.fetched[output.rsplit('/', 1)[-1]] = (line, urls if stage.downloads else [])
        return
    ran = (
        [stage.program, *[arg for arg in args if not arg.startswith('-')][:1]]
        if interpreter(stage.program)
        else [stage.program]
    )
    for word in ran:
        name = word.rsplit('/', 1)[-1]
        if name in state.fetched and name:
            fetched_line, fetched_urls = state.fetched.pop(name)
            if fetched_urls:
                state.hits.append(_remote(line, fetched_urls, f'runs {name}, downloaded on line {fetched_line}'))
            else:
                state.hits.append(
                    (line, 'decoded-code', 'critical', f'runs {name}, decoded from a payload on line {fetched_line}')
                )


def _destructive(state: _Text, stage: Stage, line: int) -> None:
    program, args = stage.program, stage.args
    flags = ''.join(arg.lstrip('-') for arg in args if arg.startswith('-') and not arg.startswith('--'))
    operands = [arg.rstrip('/').removesuffix('/*') or '/' for arg in args if not arg.startswith('-')]
    device = 'critical' if state.where == 'script' else 'warning'
    if (
        program == 'rm'
        and ('r' in flags.lower() or '--recursive' in args)
        and (bad := [o for o in operands if _PRECIOUS.match(o)])
    ):
        state.hits.append((line, 'destructive', 'critical', f'deletes {bad[0]} and everything under it'))
    elif program == 'rm' and '--no-preserve-root' in args:
        state.hits.append((line, 'destructive', 'critical', 'deletes with --no-preserve-root'))
    elif program == 'find' and operands[:1] and _PRECIOUS.match(operands[0]) and ('-delete' in args or 'rm' in args):
        state.hits.append((line, 'destructive', 'critical', f'deletes files found under {operands[0]}'))
    elif program in ('chmod', 'chown') and 'r' in flags.lower() and any(_PRECIOUS.match(o) for o in operands[1:]):
        state.hits.append(
            (line, 'destructive', 'critical', f'changes the permissions of every file under {operands[-1]}')
        )
    elif program.startswith(('mkfs', 'mke2fs', 'wipefs')) or (
        program == 'shred' and any(_DEVICE.match(o) for o in operands)
    ):
        state.hits.append((line, 'destructive', device, f'erases a disk or partition ({program})'))
    elif program == 'dd' and any(arg.startswith('of=') and _DEVICE.match(arg[3:]) for arg in args):
        state.hits.append((line, 'destructive', device, 'writes over a disk device with dd'))
    elif (
        program == 'git'
        and args[:1] == ['push']
        and any(a in ('-f', '--force') or a.startswith('+') for a in args)
        and any(re.search(r'(?:^|[:+])(?:main|master)$', a) for a in args)
    ):
        state.hits.append((line, 'destructive', 'warning', 'force-pushes to main or master, rewriting shared history'))
    for position, word in enumerate(stage.words[:-1]):
        if word in REDIRECTS and _DEVICE.match(stage.words[position + 1]):
            state.hits.append((line, 'destructive', device, f'writes over the disk device {stage.words[position + 1]}'))


def _hook_written(target: str) -> str | None:
    """What writing `target` does when it is a shell profile or a git hook (both run what is added to them later,
    without asking); `None` otherwise."""
    if SHELL_PROFILE.search(target):
        return f'writes the shell profile {target}: every new shell runs what it adds'
    if GIT_HOOKS.search(target):
        return f'writes the git hook {target}, which runs at every commit or push'
    return None


def _persistence(state: _Text, stage: Stage, line: int) -> None:
    """Writes to shell profiles, crontabs, autostart folders, git hooks and other skills' folders."""
    targets = written(stage)
    content = ' '.join(stage.words)
    script = state.where == 'script'
    if (stage.program == 'crontab' and any(arg == '-' or not arg.startswith('-') for arg in stage.args)) or (
        stage.program == 'crontab' and not stage.args
    ):
        severity: Severity = 'critical' if script or _RUNS_SOMETHING.search(content) else 'warning'
        state.hits.append(
            (
                line,
                'persistence',
                severity,
                'installs a crontab: a command that runs on a schedule, long after this task',
            )
        )
    for target in targets:
        if AUTOSTART.search(target):
            severe = (
                script
                or re.search(r'authorized_keys|sudoers|ld\.so\.preload', target)
                or _RUNS_SOMETHING.search(content)
            )
            state.hits.append(
                (
                    line,
                    'persistence',
                    'critical' if severe else 'warning',
                    f'writes {target}, which runs or lets in something at login, boot or on a schedule',
                )
            )
        elif (hook := _hook_written(target)) is not None:
            severe = _RUNS_SOMETHING.search(content) is not None
            state.hits.append((line, 'persistence', 'critical' if severe else 'warning', hook))
        elif OTHER_SKILLS.search(target):
            severe = target.endswith(('SKILL.md', '.sh', '.py')) or '*' in target or '>>' in stage.words
            state.hits.append(
                (
                    line,
                    'other-skills',
                    'critical' if severe else 'warning',
                    f"writes {target}: another skill, or the agent's own configuration",
                )
            )
