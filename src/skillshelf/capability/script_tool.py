"""`run_skill_script`: the meta-tool that runs a script bundled with a loaded skill (only with `Skills(scripts=...)`).

The script must be a file beneath the skill folder discovery accepted, read by the same rules as
`read_skill_resource`; arguments are an argv list, never a shell string. The runner (sandboxed by default, see
`skillshelf.scripts`) enforces the limits; whatever happens, the model gets a plain report to carry on with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from pydantic_ai.toolsets import FunctionToolset

from .._text import shown
from ..content import safe_relative_path
from ..errors import ResourceError, ScriptError, SkillError
from ..library import SkillLibrary
from ..scripts.bubblewrap import BubblewrapRunner
from ..scripts.interpreter import choose_interpreter
from ..scripts.runner import ScriptRequest, ScriptResult, ScriptRunner
from .meta_tools import unknown_skill_message
from .operations import Operation, meta_tool_tag
from .telemetry import record_script_result

__all__ = ('SCRIPT_TOOL_NAME', 'ScriptOptions', 'build_script_toolset', 'report', 'script_runner')

SCRIPT_TOOL_NAME = 'run_skill_script'
MAX_ARGUMENTS = 100


def build_script_toolset(library: SkillLibrary, capability_id: str, runner: ScriptRunner) -> FunctionToolset[Any]:
    """The toolset holding `run_skill_script`, which runs scripts through `runner`."""
    toolset = FunctionToolset[Any](id=f'{capability_id}.scripts', max_retries=3)

    @toolset.tool_plain(metadata=meta_tool_tag(capability_id, Operation.RUN))
    async def run_skill_script(
        name: str, script: str, args: list[str] | None = None, files: dict[str, str] | None = None
    ) -> str:
        """Run a script that belongs to a loaded skill and return its exit code and output (stdout and stderr).

        Each run starts in a new, empty work directory, its current directory; the skill folder is read-only.
        Nothing persists between runs: give input as `files`, and read results from the output.

        Args:
            name: The skill's name.
            script: The script's path relative to the skill folder, as listed by `load_skill` (e.g. `scripts/x.py`).
            args: Command-line arguments, one string each (no shell: quotes and `*` are passed as they are).
            files: Text files to create in the work directory before the run, by relative path (e.g.
                `{"data.csv": "a,b\\n1,2\\n"}`); pass their names in `args`.
        """
        skill = library.get(name)
        if skill is None:
            return unknown_skill_message(library, name)
        if skill.skill_file is None:
            return f'The skill {name!r} is defined in Python: it has no scripts to run.'
        arguments = args or []
        if len(arguments) > MAX_ARGUMENTS:
            return f'Too many arguments ({len(arguments)}); at most {MAX_ARGUMENTS}.'
        try:
            relative = safe_relative_path(script)
            interpreter = choose_interpreter(relative, skill.read_resource(relative.as_posix()))
            request = ScriptRequest(name, skill.skill_file.folder, relative, interpreter, tuple(arguments), files or {})
            result = await runner.run(request)
        except (ResourceError, ScriptError) as error:
            return f'Cannot run {shown(script)} of {name!r}: {error}.'
        record_script_result(result)
        return report(relative.as_posix(), result, runner)

    return toolset


def report(script: str, result: ScriptResult, runner: ScriptRunner) -> str:
    """The model's account of one run."""
    limits = getattr(runner, 'limits', None)
    if result.timed_out:
        seconds = f' after {limits.timeout:g} s' if limits is not None else ''
        lines = [f'{script} was stopped{seconds}: it reached the time limit, and every process it started was killed.']
    elif result.exit_code is not None and result.exit_code < 0:
        lines = [f'{script} was killed by signal {-result.exit_code}.']
    else:
        lines = [f'{script} exited with code {result.exit_code}.']
    shown_bytes = len(result.output.encode('utf-8', 'replace'))
    lines += ['Output:', result.output.rstrip('\n')] if result.output else ['It printed nothing.']
    if result.output_bytes > shown_bytes:
        lines.append(
            f'[output cut: only the first {shown_bytes:,} of {result.output_bytes:,} bytes are shown; '
            'print less, or write to a file and print a summary]'
        )
    if result.files:
        listed = ', '.join(f'{path} ({size:,} bytes)' for path, size in result.files.items())
        lines.append(f'Files left in the work directory (deleted after the run): {listed}.')
    return '\n'.join(lines)


@dataclass(frozen=True)
class ScriptOptions:
    """Whether the model may run the scripts of loaded skills, where, and with whose approval; checked when created.

    Raises:
        SkillError: an option has the wrong type, or `scripts=True` where bubblewrap is not installed.
    """

    scripts: bool | ScriptRunner = False
    """Let the model run the scripts of loaded skills with `run_skill_script`: `True` runs each in a bubblewrap
    sandbox (`BubblewrapRunner`); or pass a runner (`LocalRunner()` runs them unsandboxed, for trusted skills only).
    With scripts on, `${SKILL_DIR}` in a skill's instructions becomes its folder as scripts see it."""
    script_approval: bool = False
    """Ask before each script run (pydantic-ai's deferred tool requests: the run ends with `DeferredToolRequests`,
    or a `HandleDeferredToolCalls` capability decides), unless the loaded skill's `allowed-tools` pre-approves it
    (`Bash(python scripts/fill.py:*)`; see `capability.approval`)."""
    runner: ScriptRunner | None = field(default=None, init=False, compare=False)
    """What runs the scripts: `None` with scripts off."""

    def __post_init__(self) -> None:
        if not isinstance(cast(object, self.script_approval), bool):
            raise SkillError(f'the `script_approval` option must be true or false, not {self.script_approval!r}')
        object.__setattr__(self, 'runner', script_runner(self.scripts))


def script_runner(option: object) -> ScriptRunner | None:
    """The runner the `scripts` option of `Skills` asks for: none, the bubblewrap sandbox, or the one given.

    Raises:
        SkillError: the option is not a bool or a runner, or `True` where bubblewrap is not installed.
    """
    if option is False:
        return None
    if option is True:
        return BubblewrapRunner()
    if isinstance(option, ScriptRunner):
        return option
    raise SkillError(f'the `scripts` option must be true, false or a script runner, not {option!r}')
