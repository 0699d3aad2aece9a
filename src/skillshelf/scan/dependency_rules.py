"""Dependencies a skill installs: from a raw URL or an unknown index instead of a registry, or under a name one
edit away from a popular package's (a typosquat: `reqeusts`, `crossenv`). Read from install commands (`pip install`,
`uv add`, `npm install`, `npx`, ...), `requirements.txt` files and PEP 723 headers; nothing is fetched."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..scripts.needs.node_source import package_of
from ..scripts.needs.python_source import requirement_need
from .finding import Severity
from .popular import POPULAR_NPM, POPULAR_PYPI
from .vocabulary import raw_address, url_host

__all__ = ('install_findings', 'requirement_findings', 'typosquat_of')

Found = tuple[str, Severity, str]
_PIP_VALUE_FLAGS = frozenset(
    {
        '-r',
        '--requirement',
        '-c',
        '--constraint',
        '-t',
        '--target',
        '--prefix',
        '--root',
        '-e',
        '--editable',
        '--python',
        '-p',
        '--platform',
        '--python-version',
        '--implementation',
        '--abi',
        '--src',
        '--upgrade-strategy',
        '--progress-bar',
        '--cache-dir',
        '--log',
    }
)
_INDEX_FLAGS = frozenset({'-i', '--index-url', '--extra-index-url', '-f', '--find-links', '--index'})
_NPM_VALUE_FLAGS = frozenset({'--registry', '--prefix', '-w', '--workspace', '--cache', '--tag'})
_LOCAL = re.compile(r'^(?:\.{0,2}/|~|\$)|\.(?:whl|tar\.gz|zip|tgz)$')
_MIN_LENGTH = 5
"""Names shorter than this sit one edit from too many real packages (`six`, `rich`) to say anything."""


def install_findings(tokens: list[str], where: str) -> Iterator[Found]:
    """What one shell command line installs that is worth a finding."""
    del where  # the same in a script and in Markdown: an install runs the package's code either way
    for words in _commands(tokens):
        ecosystem, arguments = _install(words)
        if ecosystem is None:
            continue
        yield from _arguments(ecosystem, arguments)


def requirement_findings(lines: str) -> Iterator[tuple[int, str, Severity, str]]:
    """The findings of a requirements file or a PEP 723 header's dependencies, by line (from 1)."""
    for number, line in enumerate(lines.splitlines(), 1):
        line = re.sub(r'(^|\s)#.*', '', line).strip()
        if line:
            for rule, severity, message in _arguments('pypi', line.split()):
                yield number, rule, severity, message


def typosquat_of(name: str, ecosystem: str) -> str | None:
    """The popular package `name` is one edit away from, or `None` (for a popular name itself too)."""
    popular = POPULAR_PYPI if ecosystem == 'pypi' else POPULAR_NPM
    if ecosystem == 'pypi':
        name = re.sub(r'[-_.]+', '-', name).lower()
    if name in popular:
        return None
    for known in popular:
        if len(known) >= _MIN_LENGTH and abs(len(known) - len(name)) <= 1 and _one_edit(name, known):
            return known
    return None


def _arguments(ecosystem: str, arguments: list[str]) -> Iterator[Found]:
    skip = False
    value_flags = _PIP_VALUE_FLAGS if ecosystem == 'pypi' else _NPM_VALUE_FLAGS
    for position, word in enumerate(arguments):
        if skip:
            skip = False
            continue
        flag, _, value = word.partition('=')
        if flag in _INDEX_FLAGS or flag == '--registry':
            index = value or (arguments[position + 1] if position + 1 < len(arguments) else '')
            skip = not value
            yield from _index(index)
            continue
        if word == '--trusted-host':
            skip = True
            yield 'dependency-source', 'warning', 'turns off TLS checks for a package index (--trusted-host)'
            continue
        if word.startswith('-'):
            skip = flag in value_flags and not value
            continue
        yield from _package(ecosystem, word)


def _index(url: str) -> Iterator[Found]:
    if not url or url.startswith('$'):
        return
    host = url_host(url)
    if raw_address(url):
        yield (
            'dependency-source',
            'critical',
            f'installs packages from {url}, an index named by IP address or without TLS',
        )
    elif host not in (
        'pypi.org',
        'files.pythonhosted.org',
        'registry.npmjs.org',
        'download.pytorch.org',
        'test.pypi.org',
    ):
        yield 'dependency-source', 'warning', f'installs packages from the index {url} rather than the public registry'


def _package(ecosystem: str, word: str) -> Iterator[Found]:
    if '://' in word or word.startswith(('git+', 'git@', 'github:')):
        url = word.split('@', 1)[1] if word.count('://') and ' @ ' in word else word
        if raw_address(url.removeprefix('git+')):
            yield 'dependency-source', 'critical', f'installs {word}: code from an address named by IP or without TLS'
        else:
            yield (
                'dependency-source',
                'warning',
                f'installs {word} straight from a URL rather than a registry, unpinned and unreviewed',
            )
        return
    if _LOCAL.search(word):
        return
    if ecosystem == 'pypi':
        need = requirement_need(word)
        name = need.name if need is not None else None
    else:
        versionless = word[:1] + word[1:].split('@', 1)[0]
        name = package_of(versionless)
    if name is None:
        return
    known = typosquat_of(name, ecosystem)
    if known is not None:
        registry = 'PyPI' if ecosystem == 'pypi' else 'npm'
        yield (
            'typosquat',
            'critical',
            f'installs {name!r} from {registry}, one letter away from the popular {known!r}: a typosquat runs its own code at install',
        )


def _commands(tokens: list[str]) -> Iterator[list[str]]:
    command: list[str] = []
    for token in tokens:
        if token in (';', '&&', '||', '|', '&', '(', ')', '|&'):
            yield command
            command = []
        else:
            command.append(token)
    yield command


def _install(words: list[str]) -> tuple[str | None, list[str]]:
    """The ecosystem and the arguments of an install command, or `(None, [])`."""
    while words and (words[0] in ('sudo', 'env', 'command', 'exec') or '=' in words[0]):
        words = words[1:]
    if not words:
        return None, []
    program = words[0].rsplit('/', 1)[-1]
    rest = words[1:]
    if program.startswith('python') and rest[:2] == ['-m', 'pip']:
        program, rest = 'pip', rest[2:]
    if program == 'uv' and rest[:1] == ['pip']:
        program, rest = 'pip', rest[1:]
    if program in ('pip', 'pip3', 'pipx') and rest[:1] == ['install']:
        return 'pypi', rest[1:]
    if (program == 'uv' and rest[:1] in (['add'], ['tool'])) or (program == 'poetry' and rest[:1] == ['add']):
        return 'pypi', rest[2:] if rest[:2] == ['tool', 'install'] else rest[1:]
    if program in ('uvx', 'pipx') and rest:
        return 'pypi', rest[1:2] if program == 'pipx' and rest[0] == 'run' else rest[:1]
    if program in ('npm', 'pnpm', 'yarn', 'bun') and rest[:1] in (['install'], ['i'], ['add']):
        return 'npm', rest[1:]
    if program in ('npx', 'bunx'):
        operands = [word for word in rest if not word.startswith('-')]
        return 'npm', operands[:1]
    return None, []


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` and `b` differ by exactly one insertion, deletion, substitution or swap of neighbours."""
    if a == b:
        return False
    if len(a) == len(b):
        diffs = [index for index in range(len(a)) if a[index] != b[index]]
        return len(diffs) == 1 or (
            len(diffs) == 2 and diffs[1] == diffs[0] + 1 and a[diffs[0]] == b[diffs[1]] and a[diffs[1]] == b[diffs[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    index = 0
    while index < len(short) and short[index] == long[index]:
        index += 1
    return short[index:] == long[index + 1 :]
