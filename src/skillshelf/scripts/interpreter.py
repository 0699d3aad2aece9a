"""Which program runs a script: from its extension, else from its shebang line."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import PurePosixPath

from .._text import shown
from ..errors import ScriptError

_BY_EXTENSION = {'.py': 'python', '.sh': 'bash', '.bash': 'bash', '.js': 'node', '.mjs': 'node', '.cjs': 'node'}
_BY_PROGRAM = {'python': 'python', 'python3': 'python', 'bash': 'bash', 'sh': 'bash', 'node': 'node'}


def choose_interpreter(script: PurePosixPath, text: str) -> tuple[str, ...]:
    """The command that runs `script` (whose text starts with `text`): `.py` runs on this agent's Python,
    `.sh` on bash, `.js` on node; another extension needs a shebang naming one of them.

    Raises:
        ScriptError: the kind of script is unknown, or its interpreter is not installed.
    """
    kind = _BY_EXTENSION.get(script.suffix.lower()) or _from_shebang(script, text)
    if kind == 'python':
        return (sys.executable,)
    found = shutil.which(kind)
    if found is None:
        raise ScriptError(f'{shown(str(script))} needs {kind}, which is not installed where scripts run')
    return (found,)


def _from_shebang(script: PurePosixPath, text: str) -> str:
    first = text.split('\n', 1)[0]
    words = first[2:].split() if first.startswith('#!') else []
    if words and os.path.basename(words[0]) == 'env':
        words = [word for word in words[1:] if not word.startswith('-')]
    program = os.path.basename(words[0]) if words else ''
    kind = _BY_PROGRAM.get(program) or ('python' if program.startswith('python3') else None)
    if kind is None:
        raise ScriptError(
            f'{shown(str(script))} cannot be run: only Python (.py), bash (.sh) and node (.js) scripts are, or '
            'scripts whose first line (#!) names one of them'
        )
    return kind
