"""`run_skill_script`: the meta-tool that runs a script of a loaded skill in the run's workspace (with
`Skills(scripts=True)`).

The script must be one of the skill's files (or, for Python, its module); it runs from the skill's copy in the
workspace (see `workspace.materialise`), in the workspace's working directory, where what it writes stays for the
next call, the next run of the conversation and the application. Arguments are an argv list, never a shell string.
Whatever happens, the model gets a plain report to carry on with.
"""

from __future__ import annotations

import asyncio
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from pydantic_ai import RunContext
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.workspaces import Workspace, WorkspaceError, WorkspaceOutputLimitError, WorkspaceTimeoutError

from .._text import shown
from ..content import safe_relative_path
from ..errors import ResourceError, ScriptError, SkillError
from ..library import SkillLibrary
from ..scripts.distributions import distribution_of
from ..scripts.environment import SkillEnvironment
from ..scripts.errors import CommandStoppedError, WorkspaceFullError
from ..scripts.limits import ScriptLimits
from ..scripts.materialise import copy_skill
from ..scripts.node import node_path_for
from ..scripts.programs import missing_program, missing_program_warning
from ..scripts.python import missing_module_warning, python_for
from ..scripts.script import Script, ScriptResult, find_script, may_run_node, missing_module, script_command
from ..skill import Skill
from .meta_tools import unknown_skill_message
from .operations import Operation, meta_tool_tag
from .telemetry import record_script_result
from .workspace_errors import contained, stopped_at_limit, stopped_at_time_limit, workspace_problem

__all__ = ('MAX_ARGUMENTS', 'SCRIPT_TOOL_NAME', 'ScriptOptions', 'build_script_toolset', 'report', 'run_script')

SCRIPT_TOOL_NAME = 'run_skill_script'
MAX_ARGUMENTS = 100
"""A run takes at most this many arguments."""
MAX_INPUT_BYTES = 1024 * 1024
"""The model's input files for one run, in all."""
MAX_ARGUMENT_BYTES = 128 * 1024 - 1
"""One argument, in UTF-8: Linux refuses a longer one (`MAX_ARG_STRLEN`) with "Argument list too long"."""
MAX_ARGUMENTS_BYTES = 1024 * 1024
"""All arguments together, well under the usual 2 MiB `ARG_MAX`, which the environment shares."""
MAX_NAME_BYTES = 255
"""The UTF-8 bytes of one part of an input file's path (what Linux file systems take)."""
_SIGXFSZ_EXIT = 128 + 25
"""The exit status of a process killed for writing past its file-size limit."""


@dataclass(frozen=True)
class ScriptOptions:
    """Whether the model may run the scripts of loaded skills, with what limits and whose approval; checked when
    created.

    Raises:
        SkillError: an option has the wrong type (the message names it).
    """

    scripts: bool = False
    """Let the model run the scripts of loaded skills with `run_skill_script`, in the run's workspace: the one the
    agent's capabilities give it (pydantic-ai's `LocalWorkspace`, a harness sandbox, `workspace=` on the run), else
    skillshelf's own bubblewrap sandbox (`SkillSandbox`), one folder per conversation."""
    script_approval: bool | None = None
    """Whether a script run waits for approval (pydantic-ai's deferred tool requests: a `HandleDeferredToolCalls` or
    `RequestInput` capability decides, or the run ends with `DeferredToolRequests`): `True` before every run (the
    agent must be able to take them), `False` never (the skills' scripts are trusted like your own code), `None`
    (the default) only where the workspace does not isolate the host, such as `LocalWorkspace`, and there a run no
    one can be asked about is refused. A loaded skill's `allowed-tools` (`Bash(python scripts/fill.py:*)`) and
    `preapproved_programs` let a run go unasked; see `capability.asking`."""
    preapproved_programs: Sequence[str] = ()
    """Programs that run without asking, in any workspace (`['python3', 'node', 'soffice']`): a `run_command` line
    that is one simple command of one of them (no `;`, `|`, `&&`, `$(...)`, redirection, ...), with any arguments,
    and a script run on one of them (`python3` and `python` are one program, as are `sh` and `bash`). An
    interpreter runs any code it is given (`python3 -c ...`): name one only where that is acceptable."""
    script_limits: ScriptLimits = field(default_factory=ScriptLimits)
    """How long a run (script or command) may take and how much of its output the model sees, in any workspace. What
    it may use of the machine is the workspace's: `SkillSandbox(limits=SandboxLimits(...))`."""
    environment: str | Path | None = None
    """The skills' environment (`skillshelf env SKILLS_DIR --venv FOLDER` makes it): its folder, or its interpreter.
    Scripts run on its Python, with its Node packages on `NODE_PATH`, in every workspace that shows it: a
    `LocalWorkspace`, the `SkillSandbox` `Skills` supplies (which runs on it), a sandbox that mounts it; another
    workspace keeps its own, with a `SkillWarning`. Default: none (the agent's own interpreter)."""
    body_commands: bool = False
    """Run the `` !`command` ``s in a trusted skill's instructions when it loads (Claude Code's dynamic context), in
    the run's workspace, and put what they print in their place; a command that may not run is replaced by why (see
    `capability.body_commands`). Trusted: defined in Python, or found in one of `trusted_directories`."""
    file_tools: bool = False
    """Give the model `read_file`, `write_file`, `edit_file`, `list_files` and `run_command` on the run's workspace
    (see `file_tools`), for an agent without file tools of its own. `run_command` waits for approval unless a loaded
    trusted skill's `allowed-tools` or `preapproved_programs` allows the command; when the agent cannot take
    approvals, it runs unasked in a workspace that isolates the host and is refused in one that does not."""

    skill_environment: SkillEnvironment | None = field(default=None, init=False, repr=False, compare=False)
    """The `environment` option, checked."""

    @property
    def workspace(self) -> bool:
        """Whether the run's workspace is used (scripts, file tools, or the commands of skills' instructions)."""
        return self.scripts or self.file_tools or self.body_commands

    def __post_init__(self) -> None:
        for option in ('scripts', 'file_tools', 'body_commands'):
            if not isinstance(getattr(self, option), bool):
                raise SkillError(f'the `{option}` option must be true or false, not {getattr(self, option)!r}')
        if not isinstance(cast(object, self.script_approval), (bool, type(None))):
            raise SkillError(f'the `script_approval` option must be true, false or null, not {self.script_approval!r}')
        object.__setattr__(self, 'preapproved_programs', _program_names(self.preapproved_programs))
        if not isinstance(cast(object, self.environment), (str, os.PathLike, type(None))):
            raise SkillError(f'the `environment` option must be a folder, not {self.environment!r}')
        if self.environment is not None:
            object.__setattr__(self, 'skill_environment', SkillEnvironment.at(self.environment))
        limits = cast(object, self.script_limits)
        if isinstance(limits, Mapping):  # from an agent spec
            try:
                limits = ScriptLimits(**cast('Mapping[str, Any]', limits))
            except TypeError as error:
                raise SkillError(f'the `script_limits` option: {error}') from None
            object.__setattr__(self, 'script_limits', limits)
        if not isinstance(limits, ScriptLimits):
            raise SkillError(f'the `script_limits` option must be ScriptLimits, not {limits!r}')


def _program_names(value: object) -> tuple[str, ...]:
    """The `preapproved_programs` option as program names, a single name given as a string included.

    Raises:
        SkillError: an entry is not a program's bare name.
    """
    names = cast('Sequence[object]', [value] if isinstance(value, str) else value)
    if not isinstance(names, (list, tuple)):
        raise SkillError(f'the `preapproved_programs` option must be a list of program names, not {value!r}')
    for name in names:
        if not isinstance(name, str) or not name or any(char in name for char in '/= ') or not name.isprintable():
            raise SkillError(
                'the `preapproved_programs` option names programs as a command line starts them (`python3`, '
                f'`soffice`), not paths, arguments or command lines: {name!r}'
            )
    return tuple(cast('Sequence[str]', names))


def build_script_toolset(
    library: SkillLibrary,
    capability_id: str,
    limits: ScriptLimits,
    search_offered: Callable[[], bool] = lambda: True,
    environment: SkillEnvironment | None = None,
) -> FunctionToolset[Any]:
    """The toolset holding `run_skill_script`, which runs scripts in the run's workspace within `limits`, on the
    skills' `environment` where the workspace shows it (`search_offered`: whether the model has `search_skills` now,
    for the hint of an unknown name)."""
    toolset = FunctionToolset[Any](id=f'{capability_id}.scripts', max_retries=3)

    @toolset.tool(metadata=meta_tool_tag(capability_id, Operation.RUN))
    async def run_skill_script(
        ctx: RunContext[Any],
        name: str,
        script: str,
        args: list[str] | None = None,
        files: dict[str, str] | None = None,
    ) -> str:
        """Run a script of a loaded skill in the workspace and return its exit code and output.

        It runs in the workspace's working directory, where files stay between runs: pass input and output file
        names in `args`. The skill's files are in the workspace too (its folder is named when it is loaded).

        Args:
            name: The skill's name.
            script: The script's path in the skill, as `load_skill` lists it (`scripts/x.py`), or a Python module
                (`scripts.x`, run as `python -m scripts.x`).
            args: Command-line arguments, one string each (no shell: quotes and `*` are passed as they are).
            files: Text files to write into the working directory first, by relative path (e.g.
                `{"data.csv": "a,b\\n1,2\\n"}`).
        """
        skill = library.get(name)
        if skill is None:
            return unknown_skill_message(library, name, search_offered())
        return await run_script(ctx.workspace, skill, script, args or [], files or {}, limits, environment)

    return toolset


async def run_script(
    workspace: Workspace,
    skill: Skill[Any],
    requested: str,
    args: list[str],
    files: dict[str, str],
    limits: ScriptLimits,
    environment: SkillEnvironment | None = None,
) -> str:
    """Run `requested`, a script of `skill`, in `workspace` with `args`, after writing `files` there, on the skills'
    `environment` where the workspace shows it; the report for the model (see `report`)."""
    if not workspace.attached:
        return (
            f'Cannot run {shown(requested)}: this run has no workspace to run scripts in. Tell the user that the agent '
            'needs one (a LocalWorkspace or SkillSandbox capability).'
        )
    if len(args) > MAX_ARGUMENTS:
        return f'Too many arguments ({len(args)}); at most {MAX_ARGUMENTS}.'
    if (problem := _arguments_problem(args)) is not None:
        return f'Cannot run {shown(requested)} of {skill.name!r}: {problem}'
    try:
        found = await asyncio.to_thread(_find, skill, requested)
        first_line = await asyncio.to_thread(_first_line, skill, found)
        copied = await copy_skill(workspace, skill)
        await _write_inputs(workspace, files)
        python = await python_for(workspace, environment)
        node_path = await node_path_for(workspace, environment) if may_run_node(found, first_line) else None
        argv, env = script_command(found, copied.folder, first_line, args, python, node_path)
        result = await _run(workspace, argv, env, limits)
    except (ResourceError, ScriptError) as error:
        return f'Cannot run {shown(requested)} of {skill.name!r}: {error}'
    except (WorkspaceError, OSError, ValueError) as error:
        return f'Cannot run {shown(requested)} of {skill.name!r}: {workspace_problem(error)}.'
    record_script_result(result)
    program = None
    if (module := missing_module(result.stderr)) is not None:
        warnings.warn(missing_module_warning(skill.name, found.path, module, workspace, python), stacklevel=2)
    elif (program := missing_program(result.stderr)) is not None:  # even a script that carried on without it
        warnings.warn(missing_program_warning(skill.name, found.path, program, workspace), stacklevel=2)
    return report(found.path, result, limits, module, contained(workspace), program)


def report(
    script: str,
    result: ScriptResult,
    limits: ScriptLimits,
    missing: str | None = None,
    kills_every_process: bool = False,
    missing_program: str | None = None,
) -> str:
    """The model's account of one run, in a workspace that kills every process a command started at its time limit
    or not (see `workspace_errors.contained`), that lacked the Python module `missing` or the program
    `missing_program`, if it did."""
    if result.timed_out:
        lines = [f'{script} was stopped after {limits.timeout:g} s: {stopped_at_time_limit(kills_every_process)}.']
    elif result.stopped == 'output':
        lines = [f'{script} was stopped: it wrote more output than the workspace takes.']
    elif result.stopped is not None:
        ended = 'was stopped' if result.exit_code is None else f'exited with code {result.exit_code}'
        lines = [f'{script} {ended}: {stopped_at_limit(result.stopped)}']
    else:
        lines = [f'{script} exited with code {result.exit_code}.']
        if result.exit_code == _SIGXFSZ_EXIT:
            lines.append(
                'It was killed for writing a file past the size one file may have (or past the room left in the '
                'workspace).'
            )
    if result.stdout:
        lines += ['Output:', result.stdout.rstrip('\n')]
    if result.stderr:
        lines += ['Errors:', result.stderr.rstrip('\n')]
    if not result.stdout and not result.stderr:
        lines.append('It printed nothing.')
    shown_bytes = len(result.stdout.encode('utf-8', 'replace')) + len(result.stderr.encode('utf-8', 'replace'))
    if result.output_bytes > shown_bytes:
        lines.append(
            f'[output cut: only the first {shown_bytes:,} of {result.output_bytes:,} bytes are shown; '
            'print less, or write to a file and print a summary]'
        )
    if missing is not None:
        distribution = distribution_of(missing)
        package = f' (installed as the package {distribution!r})' if distribution else ''
        lines.append(
            f'The script needs the Python module {missing!r}{package}, which the environment that runs scripts does '
            'not have. Do not retry it: tell the user the module is missing there, or carry on without this script.'
        )
    if missing_program is not None:
        lines.append(
            f'{script} runs the program {missing_program!r}, which this environment does not have. Do not retry it: '
            'tell the user the program is missing there, or carry on without this script.'
        )
    return '\n'.join(lines)


def _arguments_problem(args: list[str]) -> str | None:
    """Why the operating system would refuse `args` (a NUL byte ends a C string; Linux caps each argument and all of
    them together), said so the model can pass the data another way; `None` when they are fine."""
    total = 0
    for index, argument in enumerate(args):
        if '\x00' in argument:
            return f'argument {index} contains a NUL byte, which no program can receive; pass such data in `files`.'
        size = len(argument.encode('utf-8', 'surrogatepass'))
        if size > MAX_ARGUMENT_BYTES:
            return (
                f'argument {index} is {size:,} bytes; one argument may have at most {MAX_ARGUMENT_BYTES:,}. Write '
                'the data to a file with `files` and pass its name.'
            )
        total += size
    if total > MAX_ARGUMENTS_BYTES:
        return (
            f'the arguments are {total:,} bytes together; at most {MAX_ARGUMENTS_BYTES:,}. Write the data to files '
            'with `files` and pass their names.'
        )
    return None


def _find(skill: Skill[Any], requested: str) -> Script:
    return find_script(requested, skill.content.list_files())


def _first_line(skill: Skill[Any], script: Script) -> str:
    """The script's first line, for a `#!` (at most 256 bytes of it are read)."""
    try:
        head = skill.content.read_bytes(script.path, 1 << 26)[:256]
    except ResourceError:
        return ''
    return head.decode('utf-8', 'replace').split('\n', 1)[0]


async def _write_inputs(workspace: Workspace, files: dict[str, str]) -> None:
    """The model's input files, written into the working directory.

    Raises:
        ScriptError: a path is not a plain relative path, or the files are too large together.
    """
    size = sum(len(text.encode('utf-8', 'surrogatepass')) for text in files.values())
    if size > MAX_INPUT_BYTES:
        raise ScriptError(f'the input files are {size:,} bytes; the limit is {MAX_INPUT_BYTES:,}')
    for requested, text in files.items():
        try:
            relative = safe_relative_path(requested).as_posix()
            if (problem := _name_problem(relative)) is not None:
                raise ResourceError(problem)
        except ResourceError as error:
            raise ScriptError(f'cannot write the input file {shown(requested)}: {error}') from None
        try:
            await workspace.write_bytes(relative, text.encode('utf-8', 'replace'))
        except (OSError, ValueError) as error:  # the workspace refused the name
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            raise ScriptError(f'cannot write the input file {shown(requested)}: {reason}') from None


def _name_problem(relative: str) -> str | None:
    """Why `relative` cannot name a file on a Linux file system, or `None`."""
    try:
        parts = [part.encode('utf-8') for part in relative.split('/')]
    except UnicodeEncodeError:
        return 'the name is not valid text (it holds an unpaired surrogate)'
    if any(len(part) > MAX_NAME_BYTES for part in parts):
        return f'a part of the path is over {MAX_NAME_BYTES} bytes long, more than a file system takes'
    return None


async def _run(workspace: Workspace, argv: list[str], env: dict[str, str], limits: ScriptLimits) -> ScriptResult:
    """One run within `limits`, its output cut to what the model is shown."""
    try:
        done = await workspace.run(argv, env=env, timeout=limits.timeout)
    except WorkspaceTimeoutError as error:
        return _cut(None, error.stdout, error.stderr, limits, 'timeout')
    except WorkspaceOutputLimitError as error:
        return _cut(None, error.stdout, error.stderr, limits, 'output')
    except CommandStoppedError as error:
        if isinstance(error, WorkspaceFullError) and not error.ran:
            raise  # full before it started: nothing ran
        return _cut(error.exit_code, error.stdout, error.stderr, limits, error.stopped)
    return _cut(done.exit_code, done.stdout, done.stderr, limits)


def _cut(
    exit_code: int | None, stdout: str, stderr: str, limits: ScriptLimits, stopped: str | None = None
) -> ScriptResult:
    """The result with at most `limits.max_output_bytes` of output, stdout first."""
    data = (stdout.encode('utf-8', 'replace'), stderr.encode('utf-8', 'replace'))
    kept_out = data[0][: limits.max_output_bytes]
    kept_err = data[1][: max(0, limits.max_output_bytes - len(kept_out))]
    decoded = (kept_out.decode('utf-8', 'ignore'), kept_err.decode('utf-8', 'ignore'))
    return ScriptResult(exit_code, decoded[0], decoded[1], len(data[0]) + len(data[1]), stopped)
