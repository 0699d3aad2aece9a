"""`` !`command` `` in a skill's instructions (Claude Code's dynamic context): run when the skill loads, in the run's
workspace, and replaced by what it printed, so the model reads the branch, the diff or the date in the load reply
without a round trip. A fenced block opened with ```` ```! ```` runs its lines as one command.

Opt-in and for trusted skills only: with `Skills(body_commands=True)`, a skill the application vouches for (defined in
Python, or found in one of `trusted_directories`) has its commands run as its scripts would be (see `asking`): unasked
in a workspace that isolates the host or with `script_approval=False`, and on the host only when `preapproved_programs`
or the skill's own `allowed-tools` (`Bash(git status:*)`) allow the command, since no one can be asked while a skill
loads. Every other command is not run: the text says which command and why, so the model knows what it lacks (and may
run it itself, where its tools allow). Commands run before the arguments are put in, so an argument is never run.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.workspaces import Workspace, WorkspaceError, WorkspaceOutputLimitError, WorkspaceTimeoutError

from ..scripts.limits import ScriptLimits
from ..skill import Skill
from .approval import Preapproval, same_program
from .isolation import isolates
from .script_tool import ScriptOptions
from .simple_command import simple_command
from .workspace_errors import workspace_problem

__all__ = ('MAX_COMMANDS', 'Expanded', 'expand_commands', 'find_commands', 'render_commands')

MAX_COMMANDS = 20
"""Commands one skill's instructions may run when it loads; the others are not run."""
_INLINE = re.compile(r'(?<![\w$])!`([^`\n]+)`')
"""Claude Code's inline form: `!` right before a backtick, not inside a word or after `$`."""
_BLOCK = re.compile(r'^```![ \t]*\n(.*?)\n?```[ \t]*$', re.DOTALL | re.MULTILINE)
"""Claude Code's block form: a fence opened with ```` ```! ````, its lines one command."""


@dataclass(frozen=True)
class Expanded:
    """A skill's instructions with each command replaced by a placeholder, and what each placeholder stands for: put
    back after the arguments are substituted, so nothing a command printed is read as a placeholder of an argument."""

    text: str
    """The instructions, a placeholder where each command was."""
    inserts: dict[str, str] = field(default_factory=dict[str, str])
    """Each placeholder, and the command's output (or why it did not run)."""

    def restore(self, text: str) -> str:
        """`text` (the instructions with their arguments) with each placeholder replaced."""
        for placeholder, insert in self.inserts.items():
            text = text.replace(placeholder, insert)
        return text


async def render_commands(
    options: ScriptOptions, workspace: Workspace | None, skill: Skill[Any], text: str, substitute: Callable[[str], str]
) -> str:
    """`text`, a skill's instructions, with its commands run or refused (see `expand_commands`) and `substitute` (the
    arguments) applied to the rest: the `Commands` of `meta_tools`, bound to the capability's `options`."""
    expanded = await expand_commands(text, skill, workspace, options)
    return expanded.restore(substitute(expanded.text))


def find_commands(text: str) -> list[tuple[re.Match[str], str]]:
    """Each command of `text` in reading order: where it is written, and the command line."""
    found = [(match, match[1]) for match in _BLOCK.finditer(text)]
    blocks = [match.span() for match, _ in found]
    found += [
        (match, match[1])
        for match in _INLINE.finditer(text)
        if not any(start <= match.start() < end for start, end in blocks)
    ]
    return sorted(found, key=lambda item: item[0].start())


async def expand_commands(
    text: str, skill: Skill[Any], workspace: Workspace | None, options: ScriptOptions
) -> Expanded:
    """`text`, a skill's instructions, with each command run (or refused) as the module docstring says."""
    commands = find_commands(text)
    if not commands:
        return Expanded(text)
    token = secrets.token_hex(8)
    inserts: dict[str, str] = {}
    pieces: list[str] = []
    position = 0
    for index, (match, command) in enumerate(commands):
        placeholder = f'\x00{token}:{index}\x00'
        if index >= MAX_COMMANDS:
            inserts[placeholder] = _not_run(command, f'a skill runs at most {MAX_COMMANDS} commands when it loads')
        elif (refused := _refusal(command, skill, workspace, options)) is not None:
            inserts[placeholder] = _not_run(command, refused)
        else:
            assert workspace is not None  # a workspace is attached, or `_refusal` said so
            inserts[placeholder] = await _run(workspace, command, options.script_limits)
        pieces += [text[position : match.start()], placeholder]
        position = match.end()
    pieces.append(text[position:])
    return Expanded(''.join(pieces), inserts)


def _refusal(command: str, skill: Skill[Any], workspace: Workspace | None, options: ScriptOptions) -> str | None:
    """Why `command` of `skill` may not run when it loads, or `None` when it may (see the module docstring)."""
    if not options.body_commands:
        return 'the application runs the commands of skills only with `body_commands` on'
    if not skill.trusted:
        return 'this skill does not come from a source the application trusts'
    if workspace is None or not workspace.attached:
        return 'this run has no workspace to run it in'
    if _preapproved(command, skill, options.preapproved_programs):
        return None
    if options.script_approval is True:
        return 'the application approves every command, and no one can be asked while a skill loads'
    if options.script_approval is False or isolates(workspace):
        return None
    return (
        'it needs approval, and no one can be asked while a skill loads: the workspace is the machine the agent '
        'runs on, not a sandbox'
    )


def _preapproved(command: str, skill: Skill[Any], programs: Sequence[str]) -> bool:
    """Whether `command` runs unasked: one simple command of a program in `programs`, or allowed by the skill's own
    `allowed-tools` (a `Bash(...)` rule)."""
    simple = simple_command(command) if programs else None
    if simple is not None and same_program(simple.program) in {same_program(program) for program in programs}:
        return True
    return Preapproval(skill.allowed_tools).approves_command(command)


async def _run(workspace: Workspace, command: str, limits: ScriptLimits) -> str:
    """What `command` printed, cut to `limits`; or, when it failed, what happened."""
    try:
        done = await workspace.run(command, shell=True, timeout=limits.timeout)
    except WorkspaceTimeoutError:
        return _not_run(command, f'it was stopped after {limits.timeout:g} s', ran=True)
    except WorkspaceOutputLimitError:
        return _not_run(command, 'it printed more than the workspace takes', ran=True)
    except (WorkspaceError, OSError, ValueError) as error:
        return _not_run(command, workspace_problem(error))
    if done.exit_code != 0:
        said = _cut((done.stderr or done.stdout).strip(), limits, lambda shown, total: f' ({shown} of {total} bytes)')
        return _not_run(command, f'it exited with code {done.exit_code}' + (f': {said}' if said else ''), ran=True)
    return _cut(done.stdout.rstrip('\n'), limits, _cut_note)


def _cut(output: str, limits: ScriptLimits, note: Callable[[int, int], str]) -> str:
    data = output.encode('utf-8', 'replace')
    if len(data) <= limits.max_output_bytes:
        return output
    kept = data[: limits.max_output_bytes].decode('utf-8', 'ignore')
    return kept + note(len(kept.encode('utf-8')), len(data))


def _cut_note(shown: int, total: int) -> str:
    return f'\n[output cut: only the first {shown:,} of {total:,} bytes are shown]'


def _not_run(command: str, reason: str, *, ran: bool = False) -> str:
    return f'[the command `{command}` {"failed" if ran else "was not run"}: {reason}]'
