"""A skill's files cut into what each rule reads: a Markdown file's prose, its HTML comments, its fenced code
blocks (by language) and inline code; a script is one block of its language. Each part knows the line it starts
on, so a finding names the line of the file."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

__all__ = ('Part', 'PartKind', 'file_parts', 'language_of')

PartKind = Literal['prose', 'comment', 'shell', 'python', 'javascript', 'powershell', 'inline', 'requirements']

_FENCE = re.compile(r'^ {0,3}(?P<fence>`{3,}|~{3,})\s*(?P<info>[^\s`{]*)')
_COMMENT = re.compile(r'<!--(.*?)-->', re.DOTALL)
_INLINE = re.compile(r'(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)')
_LANGUAGES: dict[str, PartKind] = {
    **dict.fromkeys(('', 'sh', 'bash', 'shell', 'zsh', 'console', 'terminal', 'shell-session', 'shellsession'), 'shell'),
    **dict.fromkeys(('ksh', 'dash', 'fish', 'text', 'plaintext', 'txt', 'bat', 'cmd', 'dockerfile', 'makefile'), 'shell'),
    **dict.fromkeys(('python', 'py', 'python3', 'ipython', 'pycon'), 'python'),
    **dict.fromkeys(('javascript', 'js', 'node', 'mjs', 'cjs', 'typescript', 'ts', 'jsx', 'tsx'), 'javascript'),
    **dict.fromkeys(('powershell', 'ps1', 'pwsh', 'ps'), 'powershell'),
}
_SUFFIXES: dict[str, PartKind] = {
    **dict.fromkeys(('.sh', '.bash', '.zsh', '.ksh', '.command'), 'shell'),
    **dict.fromkeys(('.py', '.pyw'), 'python'),
    **dict.fromkeys(('.js', '.mjs', '.cjs', '.ts', '.mts', '.cts', '.jsx', '.tsx'), 'javascript'),
    **dict.fromkeys(('.ps1', '.psm1'), 'powershell'),
}
_SHEBANG: dict[str, PartKind] = {'sh': 'shell', 'bash': 'shell', 'zsh': 'shell', 'dash': 'shell', 'node': 'javascript'}
_PROMPT = re.compile(r'^\s*(?:[$%#>]|PS [^>]*>)\s+')


@dataclass(frozen=True)
class Part:
    """A piece of a file, read by the rules of its kind."""

    kind: PartKind
    """What it is: Markdown prose, an HTML comment, code of a language, inline code, a requirements file."""
    text: str
    """Its text."""
    line: int
    """The line of the file it starts on (from 1)."""


def language_of(path: str, text: str) -> PartKind | Literal['markdown'] | None:
    """How a file is read: as Markdown, as code of a language (by its suffix or its `#!` line), as a requirements
    file; `None` for a file no rule reads."""
    name = posixpath.basename(path).lower()
    suffix = posixpath.splitext(name)[1]
    if suffix in ('.md', '.markdown', '.mdx') or name == 'skill.md':
        return 'markdown'
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    if name.startswith('requirements') and suffix in ('.txt', '.in'):
        return 'requirements'
    if text.startswith('#!'):
        program = posixpath.basename(text[2:].split('\n', 1)[0].split()[-1] if text[2:].strip() else '')
        if program.startswith('python'):
            return 'python'
        return _SHEBANG.get(program)
    return None


def file_parts(path: str, text: str) -> Iterator[Part]:
    """The parts of the file `path` holding `text` (see the module docstring)."""
    kind = language_of(path, text)
    if kind == 'markdown':
        yield from markdown_parts(text)
    elif kind is not None:
        yield Part(kind, text, 1)


def markdown_parts(text: str) -> Iterator[Part]:
    """A Markdown text's fenced code blocks, HTML comments, inline code, and its prose (the rest, comments blanked)."""
    lines = text.split('\n')
    prose: list[str] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            prose.append(lines[index])
            index += 1
            continue
        fence, info = opening['fence'], opening['info'].lower()
        end = index + 1
        while end < len(lines) and not lines[end].lstrip().startswith(fence):
            end += 1
        body = lines[index + 1 : end]
        language = _LANGUAGES.get(info)
        if language == 'shell' and info in ('console', 'terminal', 'shell-session', 'shellsession', ''):
            body = [_PROMPT.sub('', line) for line in body]
        if language is not None:
            yield Part(language, '\n'.join(body), index + 2)
        prose.extend([''] * (end + 1 - index))  # keep line numbers
        index = end + 1
    joined = '\n'.join(prose[: len(lines)])
    for match in _COMMENT.finditer(joined):
        yield Part('comment', match[1], joined.count('\n', 0, match.start()) + 1)
    if '`' in joined:
        for number, line in enumerate(joined.split('\n'), 1):
            if '`' in line:
                for match in _INLINE.finditer(line):
                    yield Part('inline', match[2].strip(), number)
    yield Part('prose', _COMMENT.sub(lambda match: '\n' * match[0].count('\n'), joined), 1)
