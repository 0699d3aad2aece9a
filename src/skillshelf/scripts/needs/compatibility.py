"""What a `compatibility` field says a skill needs, where it says so plainly.

The field is free text (`Requires Python >= 3.10, git and the gh CLI`); only what reads the same way in any
sentence is taken from it: a Python version with `>=` or `+`, well-known programs by their usual names, a word
followed by `CLI`, and the packages after `pip install`. Everything else is shown verbatim for a person to read.
"""

from __future__ import annotations

import re

from .model import Need
from .python_source import COMMAND_NAME, requirement_need

__all__ = ('COMPATIBILITY', 'compatibility_needs')

COMPATIBILITY = 'SKILL.md compatibility'
"""Where a need read from the `compatibility` field is said to be found."""
_PYTHON = re.compile(
    r'\bPython\s*(?:version\s*)?(?P<op>>=|≥|>|==)?\s*(?P<version>3(?:\.\d+){1,2})\s*'
    r'(?P<plus>\+|or\s+(?:later|newer|higher|above|greater))?',
    re.IGNORECASE,
)
_PROGRAMS: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = tuple(
    (re.compile(pattern), command, alternatives)
    for pattern, command, alternatives in (
        (r'\bNode\.?js\b|\bNodeJS\b|\bnodejs\b|\bNode\s+\d', 'node', ()),
        (r'\bnpm\b', 'npm', ()),
        (r'\bnpx\b', 'npx', ()),
        (r'\bpnpm\b', 'pnpm', ()),
        (r'\bbun\b|\bBun\b', 'bun', ()),
        (r'\bdeno\b|\bDeno\b', 'deno', ()),
        (r'\bgit\b|\bGit\b(?!\s*Hub|\s*Lab)', 'git', ()),
        (r'\bgh\b', 'gh', ()),
        (r'\bdocker\b|\bDocker\b', 'docker', ()),
        (r'\bjq\b', 'jq', ()),
        (r'\buv\b', 'uv', ()),
        (r'\bpandoc\b|\bPandoc\b', 'pandoc', ()),
        (r'\bffmpeg\b|\bFFmpeg\b', 'ffmpeg', ()),
        (r'\bcurl\b', 'curl', ()),
        (r'\bwget\b', 'wget', ()),
        (r'\bLibreOffice\b|\bsoffice\b', 'soffice', ('libreoffice',)),
        (r'\b[Pp]oppler\b|\bpdftoppm\b', 'pdftoppm', ()),
        (r'\bImageMagick\b|\bmagick\b', 'magick', ('convert',)),
        (r'\b[Tt]esseract\b', 'tesseract', ()),
        (r'\bkubectl\b', 'kubectl', ()),
        (r'\b[Tt]erraform\b', 'terraform', ()),
        (r'\bgcloud\b', 'gcloud', ()),
        (r'\bAWS CLI\b|\baws\b', 'aws', ()),
        (r'\bsqlite3\b', 'sqlite3', ()),
        (r'\bpsql\b', 'psql', ()),
        (r'\bripgrep\b|\brg\b', 'rg', ()),
    )
)
"""Programs known by name: the pattern (case-sensitive, so `git` the program and not the word in `GitHub`), the
command, and other commands that will do."""
_CLI = re.compile(r'(?:`(?P<ticked>[^`\s]+)`|\b(?P<word>[a-z][\w.+-]*))\s+(?:CLI|command[- ]line tool)\b')
_PIP = re.compile(r'\bpip3?\s+install\s+(?P<args>(?:[^;,)\n`.]|\.(?=\S))+)')
"""`pip install` and its words up to the end of the sentence (a `.` before a space), a comma or a bracket."""
_NOT_NAMES = frozenset(
    {'a', 'an', 'the', 'any', 'its', 'your', 'their', 'this', 'that', 'own', 'installed', 'authenticated', 'official'}
)
"""Words before `CLI` that are not its name (`an authenticated CLI`)."""
_PROSE = frozenset({'and', 'or', 'then', 'to', 'for', 'if', 'with', 'first', 'also', 'plus', 'in'})
"""Words that end the packages after `pip install` (`pip install x and y` reads `x` only: prose, not a command)."""


def compatibility_needs(text: str) -> list[Need]:
    """The needs `text`, a `compatibility` field, states plainly (see the module docstring)."""
    needs: list[Need] = []
    for match in _PYTHON.finditer(text):
        operator = (match['op'] or ('>=' if match['plus'] else '')).replace('≥', '>=')
        if operator:
            needs.append(Need('python', 'python', f'{operator}{match["version"]}'))
    named: dict[str, tuple[str, ...]] = {}
    for pattern, command, alternatives in _PROGRAMS:
        if pattern.search(text):
            named[command] = alternatives
    for match in _CLI.finditer(text):
        word = match['ticked'] or match['word']
        if COMMAND_NAME.fullmatch(word) and word.lower() not in _NOT_NAMES:
            named.setdefault(word.lower() if match['word'] else word, ())
    needs += [Need('command', command, alternatives=alternatives) for command, alternatives in named.items()]
    for match in _PIP.finditer(text):
        for word in match['args'].split():
            if word.lower() in _PROSE:
                break
            need = requirement_need(word.strip('\'"')) if not word.startswith('-') else None
            if need is not None:
                needs.append(need)
    return needs
