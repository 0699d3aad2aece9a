"""`allowed-tools` as pre-approval: while a skill is loaded, the calls it lists run without asking anyone.

pydantic-ai defers a call that needs approval (a tool registered with `requires_approval=True`, one that raises
`ApprovalRequired`, and the commands and script runs `capability.asking` makes wait) to the application as
`DeferredToolRequests`. `Skills.handle_deferred_tool_calls` approves, inline, the calls a loaded skill's
`allowed-tools` pre-approves; the others reach the application as before (or, when it takes no approvals,
`capability.asking` answers skillshelf's own). A tool that needs no approval is never deferred.

An `allowed-tools` entry is either a tool name (`get_forecast`; `*` matches any characters, so `github_*` covers
an MCP server's prefixed tools) or a Claude Code `Bash` rule, which pre-approves the skill's own script runs:

- `Bash` or `Bash(*)`: any script of the skill;
- `Bash(python scripts/fill.py:*)` or `Bash(python scripts/fill.py *)`: that script with any arguments, or none;
- `Bash(python scripts/fill.py --check)`: that exact command line; `*` inside a rule matches any characters.

A run's command line is the interpreter's name (`python`, `bash` or `node`, from the extension), the script's path
in the skill folder and the arguments, separated by single spaces (a word quoted as a shell would need it); a rule
may leave the interpreter out, and may write `python3` for `python`, `sh` for `bash`, or start the path with `./` or
`${CLAUDE_SKILL_DIR}/`. Claude Code's own tools (`Read`, `Grep`, `WebFetch(...)`, ...) name nothing in a pydantic-ai
agent and are ignored.

A `run_command` line runs under `sh -c`, so the rules pre-approve it only when it is simple commands joined by
`;`, `&&`, `||` or `|` (`capability.simple_command`: no `&`, line break, substitution, redirection, `$`, ...) and a
rule matches the words of each, `Bash` and `Bash(*)` included: under `Bash(git status:*)`, `git status --short`
runs unasked and `git status || rm -f notes.txt` waits for the application. A script run passes its arguments as
they are, with no shell, so it is one command by construction.
"""

from __future__ import annotations

import inspect
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cached_property
from typing import Any, cast

from pydantic_ai import ApprovalRequired
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved

from ..errors import ResourceError, ScriptError
from ..library import SkillLibrary
from ..scripts.script import find_script, kind_from_shebang
from ..skill import Skill
from .file_tools import COMMAND_TOOL_NAME
from .operations import Operation, Tag
from .script_tool import SCRIPT_TOOL_NAME
from .simple_command import NotASimpleCommand, read_commands

__all__ = (
    'Preapproval',
    'ScriptCall',
    'answered',
    'ask_before_command',
    'ask_before_script',
    'preapproved',
    'preapproving_skill',
    'same_program',
    'script_call',
)

_PROGRAMS = frozenset({'python', 'bash', 'node'})
_INTERPRETER_SPELLINGS = {'python3': 'python', 'sh': 'bash'}
_PATH_PREFIXES = ('${CLAUDE_SKILL_DIR}/', '${SKILL_DIR}/', './')
_BASH_RULE = re.compile(r'Bash(?:\((?P<rule>.*)\))?', re.DOTALL)
_RECORDS_ANSWERER = 'answered_by' in inspect.signature(DeferredToolRequests.build_results).parameters
"""Whether this pydantic-ai records who answered a deferred call (`answered_by`); 2.62 and earlier do not."""


def ask_before_script(tag: Tag | None, args: dict[str, Any], library: SkillLibrary, *, approved: bool) -> None:
    """Make a script run wait for approval unless it was approved (called where `capability.asking` says it asks).

    Asked whatever the run's load state is now: a model that loads a skill and runs its script in one response must
    not slip past the question because the skill was not loaded yet when it was asked.

    Raises:
        ApprovalRequired: the call is a script run of a skill (the tool refuses a path that names none of its files).
    """
    if tag is None or tag.operation is not Operation.RUN or approved:
        return
    name = args.get('name')
    skill = library.get(name) if isinstance(name, str) else None
    if skill is not None and (call := script_call(skill, args)) is not None:
        raise ApprovalRequired(metadata={'skill': skill.name, 'command': call.command})


def ask_before_command(tag: Tag | None, args: dict[str, Any], *, approved: bool) -> None:
    """Make every `run_command` call wait for approval (unless it was approved); a loaded trusted skill's
    `allowed-tools` may answer it (see `preapproved`).

    Raises:
        ApprovalRequired: the call is a `run_command` not approved yet.
    """
    if tag is not None and tag.operation is Operation.COMMAND and not approved:
        raise ApprovalRequired(metadata={'command': str(args.get('command', ''))})


def preapproved(
    requests: DeferredToolRequests, loaded: Sequence[str], library: SkillLibrary, owners: Mapping[str, str]
) -> DeferredToolResults | None:
    """Approvals for the calls awaiting approval that a loaded skill's `allowed-tools` pre-approves; `None` when it
    pre-approves none (the application decides the others). `owners` maps each skill tool to its skill."""
    approvals: dict[str, ToolApproved] = {}
    answered_by: dict[str, str] = {}
    for call in requests.approvals:
        if (skill := preapproving_skill(call, loaded, library, owners)) is not None:
            approvals[call.tool_call_id] = ToolApproved()
            answered_by[call.tool_call_id] = f'allowed-tools of skill {skill!r}'
    return answered(requests, approvals, answered_by)


def answered(
    requests: DeferredToolRequests, approvals: dict[str, Any], answered_by: dict[str, str]
) -> DeferredToolResults | None:
    """The results of the calls `approvals` answers (`None` if none), saying who answered where pydantic-ai records it."""
    if not approvals:
        return None
    if _RECORDS_ANSWERER:
        return requests.build_results(approvals=approvals, answered_by=answered_by)
    return requests.build_results(approvals=approvals)


def same_program(word: str) -> str:
    """`word` as rules name its program: `python3` is `python`, `sh` is `bash`."""
    return _INTERPRETER_SPELLINGS.get(word, word)


def preapproving_skill(
    call: ToolCallPart, loaded: Sequence[str], library: SkillLibrary, owners: Mapping[str, str] | None = None
) -> str | None:
    """The loaded skill whose `allowed-tools` pre-approves `call`: for a script run, the script's own skill; for a
    shell command (`run_command`) or another tool of the agent, a trusted skill (see `Skill.trusted`), or the skill
    the tool belongs to (`owners`: tool → skill)."""
    args = call.args_as_dict()
    if call.tool_name == SCRIPT_TOOL_NAME:
        name = args.get('name')
        skill = library.get(name) if isinstance(name, str) and name in loaded else None
        if skill is None or (run := script_call(skill, args)) is None:
            return None
        return skill.name if Preapproval(skill.allowed_tools).approves_script(run) else None
    skills = [skill for name in loaded if (skill := library.get(name)) is not None]
    if call.tool_name == COMMAND_TOOL_NAME:
        command = str(args.get('command', ''))
        return next((skill.name for skill in skills if skill.trusted and _rules(skill).approves_command(command)), None)
    owner = (owners or {}).get(call.tool_name)
    return next(
        (
            skill.name
            for skill in skills
            if (skill.trusted or owner == skill.name) and _rules(skill).approves_tool(call.tool_name)
        ),
        None,
    )


@dataclass(frozen=True)
class ScriptCall:
    """A script run as `allowed-tools` rules see it: the program, the script (or `-m module`) and the arguments."""

    interpreter: str
    """`python`, `bash` or `node` (from the script's extension or `#!` line); empty when it has neither."""
    target: str
    """The script's path in the skill, or `-m <module>`."""
    args: tuple[str, ...] = ()
    """The arguments, as given."""

    @property
    def command(self) -> str:
        """The command line: program, script, arguments, separated by single spaces (quoted where a shell needs)."""
        return shlex.join([*([self.interpreter] if self.interpreter else []), *self._target_words, *self.args])

    @property
    def without_interpreter(self) -> str:
        """The command line without its program, for rules that leave it out."""
        return shlex.join([*self._target_words, *self.args])

    @property
    def _target_words(self) -> list[str]:
        return self.target.split(' ', 1) if self.target.startswith('-m ') else [self.target]


def script_call(skill: Skill[Any], args: dict[str, Any]) -> ScriptCall | None:
    """The script run a `run_skill_script` call of `skill` asks for, or `None` when its script names none of the
    skill's files (or its arguments are not a list)."""
    requested, arguments = args.get('script'), cast('object', args.get('args') or [])
    if not isinstance(requested, str) or not isinstance(arguments, list):
        return None
    words = tuple(str(argument) for argument in cast('list[object]', arguments))
    try:
        found = find_script(requested, skill.content.list_files())
    except ResourceError:
        return None
    if found.module is not None:
        return ScriptCall('python', f'-m {found.module}', words)
    return ScriptCall(found.kind or _shebang_kind(skill, found.path), found.path, words)


def _shebang_kind(skill: Skill[Any], path: str) -> str:
    try:
        first_line = skill.content.read_bytes(path, 1 << 26)[:256].decode('utf-8', 'replace').split('\n', 1)[0]
        return kind_from_shebang(path, first_line)
    except (ResourceError, ScriptError):
        return ''


def _rules(skill: Skill[Any]) -> Preapproval:
    return Preapproval(skill.allowed_tools)


@dataclass(frozen=True)
class Preapproval:
    """What one skill's `allowed-tools` pre-approves."""

    patterns: tuple[str, ...]
    """The `allowed-tools` entries, as split by the frontmatter reader."""

    def approves_tool(self, tool_name: str) -> bool:
        """Whether a call of `tool_name` (any tool of the agent) is pre-approved."""
        return any(fnmatchcase(tool_name, pattern) for pattern in self._tool_patterns)

    def approves_script(self, call: ScriptCall) -> bool:
        """Whether running the skill's script as `call` is pre-approved: a rule that names a program matches the
        whole command line, one that does not matches it without its program."""
        if self.approves_tool(SCRIPT_TOOL_NAME):
            return True
        return any(
            rule.fullmatch(call.command if names_program else call.without_interpreter)
            for rule, names_program in self._script_rules
        )

    def approves_command(self, command: str) -> bool:
        """Whether the shell command line `command` is pre-approved: it must be simple commands joined by `;`, `&&`,
        `||` or `|` (see `simple_command`; a substitution, a redirection or a `$` never is), and a `Bash(...)` rule
        must match the words of each, as a canonical line."""
        try:
            commands = read_commands(command)
        except NotASimpleCommand:
            return False
        return all(self._approves_words(simple.words) for simple in commands.commands)

    def _approves_words(self, words: tuple[str, ...]) -> bool:
        line = shlex.join([same_program(words[0]), *words[1:]])
        return any(rule.fullmatch(line) for rule, _ in self._script_rules)

    @cached_property
    def _tool_patterns(self) -> tuple[str, ...]:
        return tuple(pattern for pattern in self.patterns if _BASH_RULE.fullmatch(pattern) is None)

    @cached_property
    def _script_rules(self) -> tuple[tuple[re.Pattern[str], bool], ...]:
        rules: list[tuple[re.Pattern[str], bool]] = []
        for pattern in self.patterns:
            if (match := _BASH_RULE.fullmatch(pattern)) is not None:
                rules.append(_compile_rule(match['rule'] if match['rule'] is not None else '*'))
        return tuple(rules)


def _compile_rule(rule: str) -> tuple[re.Pattern[str], bool]:
    """A `Bash(...)` rule as a regular expression over command lines, and whether it names the program."""
    words = rule.split()
    any_arguments = bool(words) and (words[-1] == '*' or words[-1].endswith(':*'))
    if any_arguments:
        words[-1] = words[-1].removesuffix('*').removesuffix(':')
        words = [word for word in words if word]
    if words:
        words[0] = same_program(words[0])
    if not words:
        return re.compile('.*', re.DOTALL), False
    names_program = words[0] in _PROGRAMS
    words = [_strip_path_prefix(word) for word in words]
    body = r'\ '.join('.*'.join(re.escape(part) for part in word.split('*')) for word in words)
    return re.compile(body + (r'(?:\ .*)?' if any_arguments else ''), re.DOTALL), names_program


def _strip_path_prefix(word: str) -> str:
    for prefix in _PATH_PREFIXES:
        if word.startswith(prefix):
            return word[len(prefix) :]
    return word
