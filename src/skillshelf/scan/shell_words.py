"""The words of a shell command line as the rules read them: pipelines and their stages (`Stage`: the program
after `sudo`, `env` and the like, its arguments, the code in its substitutions), and the files a stage writes."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..scripts.needs.shell import substitutions as command_substitutions
from .vocabulary import DECODERS, DOWNLOADERS, interpreter

__all__ = ('REDIRECTS', 'Stage', 'pipelines', 'substitutions', 'written')

_CHAIN = frozenset({';', '&&', '||', '&', ';;', '\n'})
_PIPE = frozenset({'|', '|&'})
_WRAPPERS = frozenset(
    {
        'sudo',
        'doas',
        'env',
        'exec',
        'command',
        'nohup',
        'time',
        'nice',
        'timeout',
        'xargs',
        'builtin',
        '{',
        '(',
        '!',
        'then',
        'do',
        'else',
    }
)
_RUNNERS = frozenset({'uv', 'poetry', 'pipenv', 'pdm', 'hatch', 'rye', 'conda', 'pixi'})
"""Tools whose `run` runs the command after it in a project's environment (`uv run python -`)."""
_SENDS = frozenset({'nc', 'ncat', 'netcat', 'socat', 'telnet', 'scp', 'sftp', 'ftp', 'mail', 'sendmail', 'mutt'})
_CURL_SEND = re.compile(r'^(?:-d|--data\S*|-F|--form\S*|-T|--upload-file|--json)$|^-[a-zA-Z]*[dFT]$')
REDIRECTS = frozenset({'>', '>>', '>|', '&>', '&>>', '1>', '1>>'})


class Stage:
    """One simple command of a pipeline: its program (after `sudo`, `env`, `uv run` and the like) and its words."""

    def __init__(self, tokens: list[str]) -> None:
        words, inner = _outsidesubstitutions(tokens)
        self.words = words
        index = 0
        while index < len(words) and (
            words[index] in _WRAPPERS
            or (words[index] in _RUNNERS and words[index + 1 : index + 2] == ['run'])
            or (words[index] == 'run' and index and words[index - 1] in _RUNNERS)
            or re.match(r'^[A-Za-z_]\w*=', words[index])
            or (words[index].startswith('-') and index and (words[index - 1] in _WRAPPERS or words[index - 1] == 'run'))
        ):
            index += 1
        self.program = words[index].rsplit('/', 1)[-1].lower() if index < len(words) else ''
        self.args = words[index + 1 :]
        self.inner = [*inner, *(text for word in words for text in substitutions(word))]

    @property
    def downloads(self) -> bool:
        """Whether it fetches a URL (`curl`, `wget`, `iwr`, ...)."""
        return self.program in DOWNLOADERS

    @property
    def decodes(self) -> bool:
        """Whether it turns an encoded payload back into bytes (`base64 -d`, `xxd -r`, `openssl base64 -d`, ...)."""
        flags = {arg for arg in self.args if arg.startswith('-')}
        if self.program in ('base64', 'base32'):
            return bool(flags & {'-d', '--decode', '-D', '-di', '-id'})
        if self.program == 'openssl':
            return '-d' in flags and ('base64' in self.args or 'enc' in self.args)
        if self.program == 'xxd':
            return any(flag.startswith('-r') for flag in flags)
        if self.program == 'gpg':
            return bool(flags & {'-d', '--decrypt'})
        return self.program in DECODERS - {'base64', 'base32', 'openssl', 'xxd', 'gpg'}

    @property
    def runs_input(self) -> bool:
        """Whether it runs the code on its standard input (`sh`, `python3 -`, `bash -s -- args`)."""
        if not interpreter(self.program) or self.program in ('source', '.', 'eval'):
            return False
        operands = [arg for arg in self.args if not arg.startswith('-') or arg == '-']
        flags = [arg for arg in self.args if arg.startswith('-') and arg != '-']
        if any(flag in ('-c', '-e', '-m', '-pe', '-ne', '--eval', '-Command', '-p') for flag in flags):
            return False
        return not operands or operands[0] in ('-', '/dev/stdin') or '-s' in flags

    @property
    def sends(self) -> bool:
        """Whether it sends data to another machine (`curl -d/-F/-T`, `wget --post-file`, `nc`, `scp host:`, ...)."""
        if self.program == 'curl':
            upper = [arg.upper() for arg in self.args]
            return any(_CURL_SEND.match(arg) for arg in self.args) or any(
                method in upper for method in ('POST', 'PUT', '-XPOST', '-XPUT')
            )
        if self.program == 'wget':
            return any(arg.startswith(('--post-data', '--post-file', '--body-')) for arg in self.args)
        if self.program in ('scp', 'rsync', 'sftp'):
            return any(re.match(r'^[\w.-]+@[\w.-]+:|^[\w-]+\.[\w.-]+:', arg) for arg in self.args[-1:])
        return self.program in _SENDS

    @property
    def dumps_environment(self) -> bool:
        """Whether it prints every environment variable (`env`, `printenv`, `$(env)`): tokens and keys with them."""
        bare = [word for word in self.words if word != 'sudo']
        return bare in (['env'], ['printenv'], ['export', '-p']) or any(
            re.match(r'^\s*(?:env|printenv|set)\s*$', inner) for inner in self.inner
        )


def written(stage: Stage) -> list[str]:
    """The files a command writes: redirections, `tee`, the last operand of `cp`, `mv`, `ln`, `install`, `sed -i`."""
    words, args = stage.words, [arg for arg in stage.args if not arg.startswith('-')]
    targets = [words[position + 1] for position, word in enumerate(words[:-1]) if word in REDIRECTS]
    if stage.program == 'tee':
        targets += args
    elif (stage.program in ('cp', 'mv', 'ln', 'install', 'rsync') and len(args) >= 2) or (
        stage.program in ('sed', 'perl') and any(arg.startswith(('-i', '-pi')) for arg in stage.args) and args
    ):
        targets.append(args[-1])
    elif stage.program == 'git' and 'core.hooksPath' in stage.args:
        targets.append('core.hooksPath')
    return targets


def pipelines(tokens: list[str]) -> Iterator[list[list[str]]]:
    """The pipelines of a line (split at `;`, `&&`, `||`, `&`), each a list of stages (split at `|`); an unquoted
    substitution (`$(...)`, `<(...)`) stays inside its stage."""
    pipeline: list[list[str]] = []
    stage: list[str] = []
    depth = 0
    for token in _joined_openers(tokens):
        if token in _OPENERS:
            depth += 1
        elif token == ')' and depth:
            depth -= 1
        if depth == 0 and token in _CHAIN:
            yield [*pipeline, stage]
            pipeline, stage = [], []
        elif depth == 0 and token in _PIPE:
            pipeline.append(stage)
            stage = []
        else:
            stage.append(token)
    yield [*pipeline, stage]


_OPENERS = frozenset({'$(', '<(', '>('})


def _joined_openers(tokens: list[str]) -> list[str]:
    """`$`, `(` (as the parser splits an unquoted `$(`) as one word `$(`."""
    joined: list[str] = []
    for token in tokens:
        if token == '(' and joined and joined[-1] == '$':
            joined[-1] = '$('
        else:
            joined.append(token)
    return joined


def _outsidesubstitutions(tokens: list[str]) -> tuple[list[str], list[str]]:
    """A stage's words outside unquoted substitutions, and the text of each substitution."""
    words: list[str] = []
    inner: list[str] = []
    current: list[str] = []
    depth = 0
    for token in tokens:
        if token in _OPENERS:
            depth += 1
            if depth == 1:
                words.append(token)
                continue
        elif token == ')' and depth:
            depth -= 1
            if depth == 0:
                inner.append(' '.join(current))
                current = []
                continue
        (current if depth else words).append(token)
    if current:
        inner.append(' '.join(current))
    return words, inner


def substitutions(word: str) -> list[str]:
    """The commands of the `$(...)`, `<(...)` and backquoted substitutions inside a word."""
    return [*command_substitutions(word, ('$(', '<(')), *re.findall(r'`([^`]+)`', word)]
