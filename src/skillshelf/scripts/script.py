"""Running a skill's script in the run's workspace: which file (or Python module) and program, the command line, the
limits, and an account of the result the model can act on.

A script is named by its path in the skill (`scripts/fill.py`) or, for Python, by its module (`scripts.fill`, run as
`python -m scripts.fill`, as skills written for Claude Code say); either way it must be one of the skill's files. It
runs from the skill's copy in the workspace, in the workspace's working directory, with the skill's folder on
`PYTHONPATH` (so `from scripts.utils import ...` works both ways) and no shell: arguments are passed as they are.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from .._text import shown
from ..content import safe_relative_path
from ..errors import ResourceError, ScriptError

__all__ = (
    'INTERPRETERS',
    'Script',
    'ScriptResult',
    'find_script',
    'kind_from_shebang',
    'may_run_node',
    'missing_module',
    'script_command',
    'shebang_program',
)

INTERPRETERS = {'.py': 'python', '.sh': 'bash', '.bash': 'bash', '.js': 'node', '.mjs': 'node', '.cjs': 'node'}
"""The program of each script extension; another extension needs a `#!` line naming one of these."""
_BY_PROGRAM = {'python': 'python', 'python3': 'python', 'bash': 'bash', 'sh': 'bash', 'node': 'node'}
_MODULE = re.compile(r'(?:python3?\s+)?-m\s+(?P<module>\S+)|(?P<dotted>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)')
_MISSING = re.compile(r"ModuleNotFoundError: No module named '(?P<name>[^']+)'")


@dataclass(frozen=True)
class Script:
    """A script of a skill, as it will run."""

    path: str
    """The script's file, relative to the skill folder."""
    module: str | None = None
    """The Python module to run with `-m`, when the script was named as one."""

    @property
    def kind(self) -> str:
        """The program family: `python`, `bash` or `node` (from the extension; see `interpreter`)."""
        return INTERPRETERS.get(PurePosixPath(self.path).suffix.lower(), '')


@dataclass(frozen=True)
class ScriptResult:
    """What became of one run."""

    exit_code: int | None
    """The exit status (128 + N: killed by signal N); `None` if the run was stopped (see `stopped`)."""
    stdout: str
    """The start of what it printed, at most `ScriptLimits.max_output_bytes` of stdout and stderr together."""
    stderr: str
    """The start of its error output."""
    output_bytes: int
    """How many bytes of output it wrote in all (as far as the workspace said)."""
    stopped: str | None = None
    """Why it was stopped before it ended: `'timeout'`, `'output'` (more than the workspace takes), or a limit of the
    workspace's own (`CommandStoppedError.stopped`): `'disk'` or `'files'` (it filled the workspace past its size or
    its number of files, `SandboxLimits.max_workspace_bytes` or `max_workspace_files` in `SkillSandbox`), `'memory'`
    (its processes together used more than one command may, `max_command_memory_bytes`); `exit_code` is set if it had
    ended by itself."""

    @property
    def timed_out(self) -> bool:
        """Whether the run was stopped at its time limit."""
        return self.stopped == 'timeout'


def find_script(requested: str, files: Sequence[str]) -> Script:
    """The script `requested` names among a skill's `files`: a path (`scripts/fill.py`, `./scripts/fill.py`,
    `${CLAUDE_SKILL_DIR}/scripts/fill.py`, `scripts/fill` when that names no file but `scripts/fill.py` is one) or a
    Python module (`scripts.fill`, `python -m scripts.fill`).

    Raises:
        ResourceError: it names no file of the skill (the message lists its scripts), or is not a plain relative path.
    """
    text = requested.strip()
    for prefix in ('${CLAUDE_SKILL_DIR}/', '${SKILL_DIR}/'):
        text = text.removeprefix(prefix)
    if (match := _MODULE.fullmatch(text)) is not None:
        module = match['module'] or match['dotted']
        base = module.replace('.', '/')
        for candidate in (f'{base}.py', f'{base}/__main__.py'):
            if candidate in files:
                return Script(candidate, module)
    relative = safe_relative_path(text).as_posix()
    if relative in files:
        return Script(relative)
    if f'{relative}.py' in files:  # as skills' own docs write it: `python scripts/check_fillable_fields <file.pdf>`
        return Script(f'{relative}.py')
    raise ResourceError(f'{shown(requested)} is not a file of the skill. {_scripts_of(files)}')


def script_command(
    script: Script, folder: str, first_line: str, args: Sequence[str], python: str, node_path: str | None = None
) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that run `script` of the skill copied at `folder` (in the workspace) with `args`;
    `first_line` is the script's first line (for a `#!`), `python` the command that runs Python, `node_path` where
    Node finds globally installed packages (`NODE_PATH`, see `node`).

    Raises:
        ScriptError: the script's kind is not one that can be run.
    """
    env = {'PYTHONPATH': folder, 'PYTHONDONTWRITEBYTECODE': '1', 'SKILL_DIR': folder, 'CLAUDE_SKILL_DIR': folder}
    if node_path is not None:
        env['NODE_PATH'] = node_path
    if script.module is not None:
        return [python, '-m', script.module, *args], env
    kind = script.kind or kind_from_shebang(script.path, first_line)
    program = python if kind == 'python' else kind
    return [program, posixpath.join(folder, script.path), *args], env


def may_run_node(script: Script, first_line: str) -> bool:
    """Whether `script` is one that loads Node packages or starts `node`: a node or shell script (a Python script
    rarely does, and looking for npm's folder costs a command in a sandbox)."""
    if script.module is not None:
        return False
    try:
        return (script.kind or kind_from_shebang(script.path, first_line)) in ('node', 'bash')
    except ScriptError:
        return False


def missing_module(stderr: str) -> str | None:
    """The Python module a run failed to import (`ModuleNotFoundError`), or `None`."""
    found = _MISSING.findall(stderr)
    return found[-1] if found else None


def kind_from_shebang(path: str, first_line: str) -> str:
    """The program family a `#!` line names (`python`, `bash`, `node`).

    Raises:
        ScriptError: it names none of them.
    """
    program = shebang_program(first_line) or ''
    kind = _BY_PROGRAM.get(program) or ('python' if program.startswith('python3') else None)
    if kind is None:
        raise ScriptError(
            f'{shown(path)} cannot be run: only Python (.py), bash (.sh) and node (.js) scripts are, or '
            'scripts whose first line (#!) names one of them'
        )
    return kind


def shebang_program(first_line: str) -> str | None:
    """The program a `#!` line names, without its folder (`#!/usr/bin/env node` and `#!/usr/local/bin/node` are
    both `node`), or `None` when there is no `#!` line."""
    words = first_line[2:].split() if first_line.startswith('#!') else []
    if words and os.path.basename(words[0]) == 'env':
        words = [word for word in words[1:] if not word.startswith('-') and '=' not in word]
    return os.path.basename(words[0]) or None if words else None


def _scripts_of(files: Sequence[str]) -> str:
    scripts = [path for path in files if PurePosixPath(path).suffix.lower() in INTERPRETERS]
    if not scripts:
        return 'It has no scripts.'
    return f'Its scripts are: {", ".join(scripts[:30])}{" ..." if len(scripts) > 30 else ""}.'
