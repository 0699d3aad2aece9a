"""`allowed-tools` as pre-approval: while a skill is loaded, the calls it lists run without asking anyone.

pydantic-ai defers a call that needs approval (a tool registered with `requires_approval=True`, one that raises
`ApprovalRequired`, and, with `Skills(script_approval=True)`, every `run_skill_script`) to the application as
`DeferredToolRequests`. `Skills.handle_deferred_tool_calls` approves, inline, the calls a loaded skill's
`allowed-tools` pre-approves; the others reach the application as before. With no approvals configured, nothing
changes: a tool that needs none is never deferred.

An `allowed-tools` entry is either a tool name (`get_forecast`; `*` matches any characters, so `github_*` covers
an MCP server's prefixed tools) or a Claude Code `Bash` rule, which pre-approves the skill's own script runs:

- `Bash` or `Bash(*)`: any script of the skill;
- `Bash(python scripts/fill.py:*)` or `Bash(python scripts/fill.py *)`: that script with any arguments, or none;
- `Bash(python scripts/fill.py --check)`: that exact command line; `*` inside a rule matches any characters.

A run's command line is the interpreter's name (`python`, `bash` or `node`, from the extension), the script's path
in the skill folder and the arguments, separated by single spaces; a rule may leave the interpreter out, and may
write `python3` for `python`, `sh` for `bash`, or start the path with `./` or `${CLAUDE_SKILL_DIR}/`. Claude Code's
own tools (`Read`, `Grep`, `WebFetch(...)`, ...) name nothing in a pydantic-ai agent and are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cached_property
from pathlib import PurePosixPath
from typing import Any, cast

from pydantic_ai import ApprovalRequired
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved

from ..content import safe_relative_path
from ..errors import ResourceError
from ..library import SkillLibrary
from .operations import Operation, Tag
from .script_tool import SCRIPT_TOOL_NAME

__all__ = (
    'Preapproval',
    'ask_before_script',
    'preapproved',
    'preapproving_skill',
    'script_command',
    'script_command_of',
)

_INTERPRETERS = {'.py': 'python', '.sh': 'bash', '.bash': 'bash', '.js': 'node', '.mjs': 'node', '.cjs': 'node'}
_INTERPRETER_SPELLINGS = {'python3': 'python', 'sh': 'bash'}
_PATH_PREFIXES = ('${CLAUDE_SKILL_DIR}/', '${SKILL_DIR}/', './')
_BASH_RULE = re.compile(r'Bash(?:\((?P<rule>.*)\))?', re.DOTALL)


def ask_before_script(tag: Tag | None, args: dict[str, Any], loaded: Sequence[str], *, approved: bool) -> None:
    """With `script_approval`, make a loaded skill's script run wait for approval (unless it was approved).

    Raises:
        ApprovalRequired: the call is a script run of a loaded skill that was not approved yet.
    """
    if (
        tag is not None
        and tag.operation is Operation.RUN
        and not approved
        and args.get('name') in loaded
        and (command := script_command_of(args)) is not None  # else the tool refuses the path
    ):
        raise ApprovalRequired(metadata={'skill': args['name'], 'command': command})


def preapproved(
    requests: DeferredToolRequests, loaded: Sequence[str], library: SkillLibrary
) -> DeferredToolResults | None:
    """Approvals for the calls awaiting approval that a loaded skill's `allowed-tools` pre-approves; `None` when it
    pre-approves none (the application decides the others)."""
    approvals: dict[str, ToolApproved] = {}
    answered_by: dict[str, str] = {}
    for call in requests.approvals:
        if (skill := preapproving_skill(call, loaded, library)) is not None:
            approvals[call.tool_call_id] = ToolApproved()
            answered_by[call.tool_call_id] = f'allowed-tools of skill {skill!r}'
    return requests.build_results(approvals=approvals, answered_by=answered_by) if approvals else None


def preapproving_skill(call: ToolCallPart, loaded: Sequence[str], library: SkillLibrary) -> str | None:
    """The loaded skill whose `allowed-tools` pre-approves `call`: for a script run, the script's own skill."""
    args = call.args_as_dict()
    if call.tool_name == SCRIPT_TOOL_NAME:
        name, command = args.get('name'), script_command_of(args)
        if not isinstance(name, str) or name not in loaded or command is None:
            return None
        return name if _preapproval(library, name).approves_script(command) else None
    return next((name for name in loaded if _preapproval(library, name).approves_tool(call.tool_name)), None)


def script_command_of(args: dict[str, Any]) -> str | None:
    """A `run_skill_script` call's command line, or `None` when its script path is not a safe relative path."""
    script, arguments = args.get('script'), cast('object', args.get('args') or [])
    if not isinstance(script, str) or not isinstance(arguments, list):
        return None
    try:
        relative = safe_relative_path(script).as_posix()
    except ResourceError:
        return None
    return script_command(relative, [str(argument) for argument in cast('list[object]', arguments)])


def _preapproval(library: SkillLibrary, name: str) -> Preapproval:
    skill = library.get(name)
    return Preapproval(skill.allowed_tools if skill is not None else ())


def script_command(script: str, args: Sequence[str]) -> str:
    """The command line a script run is matched and shown as: interpreter, script path, arguments."""
    interpreter = _INTERPRETERS.get(PurePosixPath(script).suffix.lower())
    return ' '.join([*([interpreter] if interpreter else []), script, *args])


@dataclass(frozen=True)
class Preapproval:
    """What one skill's `allowed-tools` pre-approves."""

    patterns: tuple[str, ...]
    """The `allowed-tools` entries, as split by the frontmatter reader."""

    def approves_tool(self, tool_name: str) -> bool:
        """Whether a call of `tool_name` (any tool of the agent) is pre-approved."""
        return any(fnmatchcase(tool_name, pattern) for pattern in self._tool_patterns)

    def approves_script(self, command: str) -> bool:
        """Whether running the skill's script as `command` (see `script_command`) is pre-approved."""
        if self.approves_tool(SCRIPT_TOOL_NAME):
            return True
        interpreter, _, without_interpreter = command.partition(' ')
        candidates = (command, without_interpreter) if interpreter in _INTERPRETERS.values() else (command,)
        return any(rule.fullmatch(candidate) for rule in self._script_rules for candidate in candidates)

    @cached_property
    def _tool_patterns(self) -> tuple[str, ...]:
        return tuple(pattern for pattern in self.patterns if _BASH_RULE.fullmatch(pattern) is None)

    @cached_property
    def _script_rules(self) -> tuple[re.Pattern[str], ...]:
        rules: list[re.Pattern[str]] = []
        for pattern in self.patterns:
            if (match := _BASH_RULE.fullmatch(pattern)) is not None:
                rules.append(_compile_rule(match['rule'] if match['rule'] is not None else '*'))
        return tuple(rules)


def _compile_rule(rule: str) -> re.Pattern[str]:
    """A `Bash(...)` rule as a regular expression over command lines."""
    words = rule.split()
    any_arguments = bool(words) and (words[-1] == '*' or words[-1].endswith(':*'))
    if any_arguments:
        words[-1] = words[-1].removesuffix('*').removesuffix(':')
        words = [word for word in words if word]
    if words:
        words[0] = _INTERPRETER_SPELLINGS.get(words[0], words[0])
    if not words:
        return re.compile('.*', re.DOTALL)
    words = [_strip_path_prefix(word) for word in words]
    body = r'\ '.join('.*'.join(re.escape(part) for part in word.split('*')) for word in words)
    return re.compile(body + (r'(?:\ .*)?' if any_arguments else ''), re.DOTALL)


def _strip_path_prefix(word: str) -> str:
    for prefix in _PATH_PREFIXES:
        if word.startswith(prefix):
            return word[len(prefix) :]
    return word
