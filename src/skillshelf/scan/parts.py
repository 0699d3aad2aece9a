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
_INLINE = re.compile(
    r'`([^`\n]*?(?:\||\$\(|<\(|install|add |npx |uvx |bunx |pipx | -c | -e |curl|wget|base64|\bnc )[^`\n]*)`'
)
"""Inline code a rule can find something in (a pipe, a substitution, an install, a download or a decoder): most
inline code is a name or a path, and the search skips from backquote to backquote."""
_LANGUAGES: dict[str, PartKind] = {
    **dict.fromkeys(
        ('', 'sh', 'bash', 'shell', 'zsh', 'console', 'terminal', 'shell-session', 'shellsession'), 'shell'
    ),
    **dict.fromkeys(
        ('ksh', 'dash', 'fish', 'text', 'plaintext', 'txt', 'bat', 'cmd', 'dockerfile', 'makefile'), 'shell'
    ),
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
_PROMPTS = re.compile(r'^[ \t]*(?:[$%#>]|PS [^>\n]*>)[ \t]+', re.MULTILINE)


def _blocks(text: str) -> Iterator[tuple[int, int, int, int, str]]:
    """The fenced code blocks of a Markdown text, as `(start, body start, body end, end, info)`; one left open runs
    to the end, as CommonMark reads it. Fences are found with `str.find`, far faster than a regular expression."""
    fences = sorted(_fence_lines(text, '```') + _fence_lines(text, '~~~'))
    index = 0
    while index < len(fences):
        start, line_end, fence, info = fences[index]
        closing = next(
            (
                i
                for i in range(index + 1, len(fences))
                if fences[i][2][0] == fence[0] and len(fences[i][2]) >= len(fence) and not fences[i][3]
            ),
            None,
        )
        body_start = min(line_end + 1, len(text))
        if closing is None:
            yield start, body_start, len(text), len(text), info.lower()
            return
        yield start, body_start, fences[closing][0], fences[closing][1], info.lower()
        index = closing + 1


def _fence_lines(text: str, mark: str) -> list[tuple[int, int, str, str]]:
    """`(line start, line end, fence, info word)` of each line that opens with `mark` after at most 3 spaces."""
    found: list[tuple[int, int, str, str]] = []
    position = text.find(mark)
    while position != -1:
        line_start = text.rfind('\n', 0, position) + 1
        line_end = text.find('\n', position)
        line_end = len(text) if line_end == -1 else line_end
        if position - line_start <= 3 and not text[line_start:position].strip(' '):
            line = text[position:line_end]
            fence = line[: len(line) - len(line.lstrip(mark[0]))]
            rest = line[len(fence) :].strip()
            found.append(
                (line_start, line_end, fence, rest.split('{')[0].split()[0] if rest.split('{')[0].split() else '')
            )
        position = text.find(mark, line_end)
    return found


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
    prose: list[str] = []
    position = 0
    for start, body_start, body_end, end, info in _blocks(text):
        body = text[body_start:body_end]
        language = _LANGUAGES.get(info)
        if language == 'shell' and info in ('console', 'terminal', 'shell-session', 'shellsession', ''):
            body = _PROMPTS.sub('', body)
        if language is not None:
            yield Part(language, body, text.count('\n', 0, body_start) + 1)
        prose += [text[position:start], '\n' * text.count('\n', start, end)]
        position = end
    prose.append(text[position:])
    joined = ''.join(prose)
    if '<!--' in joined:
        for match in _COMMENT.finditer(joined):
            yield Part('comment', match[1], joined.count('\n', 0, match.start()) + 1)
        joined = _COMMENT.sub(lambda match: '\n' * match[0].count('\n'), joined)
    if '`' in joined:
        line, counted = 1, 0
        for match in _INLINE.finditer(joined):
            line += joined.count('\n', counted, match.start())
            counted = match.start()
            yield Part('inline', match[1].strip(), line)
    yield Part('prose', joined, 1)
