"""The workspace variant of the durable test apps (`durable_dbos_app.py`, `durable_temporal_app.py`): a skill whose
script runs in the run's workspace, recovered after a crash.

The `tally` skill's `scripts/tally.py` appends its argument to `tally.log` in the working directory and prints how
many lines the log has. The conversation: the first run loads `tally` and runs the script (`first`), the second run
of the same workflow runs it again (`second`), and a later workflow, continuing the recovered conversation's
history, runs it a third time (`third`). `WORK/variant` names the workspace: `sandbox` (the `SkillSandbox` that
`Skills(scripts=True)` supplies when the agent has no workspace; its folders go under `$TMPDIR`, which the tests
point into `WORK`) or `local` (pydantic-ai's `LocalWorkspace` on `WORK/workspace`).

Every process started to run the script, or to write one of its files into the sandbox, is logged to
`WORK/launches.log` by an audit hook: the host's own count of script runs, beside the one in the workspace.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart

from skillshelf import Skills

__all__ = (
    'CONTINUED',
    'CONVERSATION',
    'COPIED_SCRIPT',
    'REPORTS',
    'TALLY_SCRIPT',
    'KilledRun',
    'launches',
    'log_launches',
    'sandbox_folders',
    'script_reports',
    'tally_capabilities',
    'tally_lines',
    'tally_responses',
    'variant_of',
    'worker_environment',
    'workspace_folder',
    'workspace_refs',
    'write_tally_skill',
)

SCRIPT_PATH = 'scripts/tally.py'
TALLY_SCRIPT = """\
import sys

with open('tally.log', 'a') as log:
    log.write(sys.argv[1] + '\\n')
with open('tally.log') as log:
    print(f'{sys.argv[1]}: the log has {len(log.read().splitlines())} lines')
"""
TALLY_SKILL = '---\nname: tally\ndescription: Keeps a tally in the workspace.\n---\nRun `scripts/tally.py NAME`.\n'
CONVERSATION = ['Count one.', 'Count two.']
"""The prompts of the first workflow: two runs of one conversation."""
CONTINUED = ['Count three.']
"""The prompt of the later workflow, which continues the first one's history."""


def write_tally_skill(work: Path, variant: str) -> None:
    """`WORK/skills/tally` and `WORK/variant` (and, for `local`, the workspace folder `WORK/workspace`)."""
    (work / 'skills' / 'tally' / 'scripts').mkdir(parents=True)
    (work / 'skills' / 'tally' / 'SKILL.md').write_text(TALLY_SKILL)
    (work / 'skills' / 'tally' / SCRIPT_PATH).write_text(TALLY_SCRIPT)
    (work / 'variant').write_text(variant)
    if variant == 'local':
        (work / 'workspace').mkdir()


def variant_of(work: Path) -> str | None:
    """The workspace variant this app runs (`sandbox` or `local`), or `None` for the weather scenario."""
    path = work / 'variant'
    return path.read_text().strip() if path.exists() else None


def tally_capabilities(work: Path, variant: str) -> list[AbstractCapability[Any]]:
    """The agent's capabilities before the durability ones: `Skills` with scripts, and for `local` a workspace."""
    if variant == 'local':  # on the host, a script run asks first unless the skills are trusted
        return [LocalWorkspace(work / 'workspace'), Skills(work / 'skills', scripts=True, script_approval=False)]
    return [Skills(work / 'skills', scripts=True)]  # Skills supplies its SkillSandbox (see Skills.for_agent)


def _run(label: str) -> ToolCallPart:
    return ToolCallPart('run_skill_script', {'name': 'tally', 'script': SCRIPT_PATH, 'args': [label]})


def tally_responses() -> list[list[ToolCallPart | TextPart]]:
    """The scripted model's responses, by request: load and run (`first`), answer; run (`second`), answer; and in the
    continued conversation, run (`third`), answer."""
    return [
        [ToolCallPart('load_skill', {'name': 'tally'})],
        [_run('first')],
        [TextPart('one')],
        [_run('second')],
        [TextPart('two')],
        [_run('third')],
        [TextPart('three')],
    ]


def workspace_refs(messages: list[ModelMessage]) -> list[str]:
    """The workspace ref of every response in `messages`, as `provider:id` (`-` for none)."""
    return [
        f'{message.workspace_ref.provider}:{message.workspace_ref.id}' if message.workspace_ref is not None else '-'
        for message in messages
        if isinstance(message, ModelResponse)
    ]


def log_launches(work: Path) -> None:
    """Log each process this one starts that runs `tally.py` (`<pid> run <label>`) or writes one of the skill's files
    into the sandbox (`<pid> write <path>`), to `WORK/launches.log`: an audit hook, so nothing the script or the
    workspace does can hide a launch."""
    log = work / 'launches.log'

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event != 'subprocess.Popen' or not isinstance(args[1], (list, tuple)):
            return
        argv = [str(arg) for arg in args[1]]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        scripts = [index for index, arg in enumerate(argv) if arg.endswith(SCRIPT_PATH)]
        if not scripts:
            return
        at = scripts[-1]
        following = argv[at + 1] if at + 1 < len(argv) else ''
        operation = argv[at - 1] if at > 0 else ''
        if operation in ('write', 'read', 'stat', 'exists'):
            line = f'{operation} {argv[at]}'
        elif os.path.basename(operation).startswith('python'):
            line = f'run {following}'
        else:  # the path as an argument of another program (the check of the skill's copy): not a run
            line = f'other {argv[at]}'
        with log.open('a') as file:
            file.write(f'{os.getpid()} {line}\n')

    sys.addaudithook(hook)


COPIED_SCRIPT = f'.skillshelf/skills/tally/{SCRIPT_PATH}'
"""The script's copy in the workspace, where `load_skill` put it."""
REPORTS = [f'{label}: the log has {count} lines' for count, label in enumerate(('first', 'second', 'third'), 1)]
"""What the script prints at each run, when each run sees the lines of the runs before it."""


def workspace_folder(work: Path, variant: str, ref: str) -> Path:
    """The host folder of the workspace `ref` (`provider:id`) names."""
    provider, identifier = ref.split(':', 1)
    if variant == 'local':
        assert provider == 'local', ref
        return Path(identifier)
    assert provider == 'skillshelf', ref
    return work / 'tmp' / f'skillshelf-workspaces-{os.getuid()}' / identifier / 'workspace'


def sandbox_folders(work: Path) -> list[Path]:
    """Every workspace folder the sandbox created under `WORK/tmp`."""
    return sorted((work / 'tmp').glob('skillshelf-workspaces-*/*/workspace'))


def launches(work: Path) -> list[tuple[int, str]]:
    """The logged launches (see `log_launches`), as `(pid, what)`."""
    log = work / 'launches.log'
    lines = log.read_text().splitlines() if log.exists() else []
    return [(int(pid), what) for pid, what in (line.split(' ', 1) for line in lines)]


def tally_lines(folder: Path) -> list[str]:
    """The lines the script runs appended to the workspace's `tally.log`."""
    log = folder / 'tally.log'
    return log.read_text().splitlines() if log.exists() else []


def script_reports(seen: list[dict[str, Any]]) -> list[str]:
    """The output lines of every `run_skill_script` return the model saw at its last request."""
    returns = [content for name, content in seen[-1]['returns'] if name == 'run_skill_script']
    return [content.split('Output:\n', 1)[1] for content in returns]


@dataclass(frozen=True)
class KilledRun:
    """What a run killed around a script left in its workspace, and the checks that its recovery continued there."""

    work: Path
    variant: str
    kill_at: int
    killed: set[int]
    """The processes that had started before the kill."""
    folder: Path
    """The run's workspace folder."""
    copied_mtime_ns: int
    """When load_skill wrote the skill's script into the workspace."""

    @classmethod
    def observe(cls, work: Path, variant: str, kill_at: int) -> KilledRun:
        """The state after the kill: one workspace holding the skill's copy, and the log of the runs before it."""
        folders = sandbox_folders(work) if variant == 'sandbox' else [work / 'workspace']
        assert len(folders) == 1  # the run's workspace, with the skill's copy in it
        assert tally_lines(folders[0]) == (['first'] if kill_at == 3 else [])
        copied = (folders[0] / COPIED_SCRIPT).stat().st_mtime_ns
        return cls(work, variant, kill_at, {pid for pid, _ in launches(work)}, folders[0], copied)

    def check_recovered(self, result: dict[str, Any]) -> None:
        """The recovered conversation (`result`, what the app printed) continued in the killed run's workspace and
        ran each script once."""
        assert result['output'] == ['one', 'two', 'three']
        # Every response of the conversation, before the crash, after it and in the later workflow, names one
        # workspace: the folder the killed run created.
        refs = result['refs']
        assert refs == [refs[0]] * 7
        assert workspace_folder(self.work, self.variant, refs[0]) == self.folder
        if self.variant == 'sandbox':
            assert sandbox_folders(self.work) == [self.folder]  # no second folder was created on recovery
        # Each script run happened once: the workspace's log and the host's record of launches agree.
        assert tally_lines(self.folder) == ['first', 'second', 'third']
        runs = [(pid in self.killed, what) for pid, what in launches(self.work) if what.startswith('run ')]
        first = [(True, 'run first')] if self.kill_at == 3 else [(False, 'run first')]
        assert runs == [*first, (False, 'run second'), (False, 'run third')]
        # Each later run saw the lines written before it, the one before the crash included.
        assert script_reports(result['seen']) == REPORTS
        # The skill's copy from the killed run's load_skill was reused, not written again.
        assert (self.folder / COPIED_SCRIPT).stat().st_mtime_ns == self.copied_mtime_ns
        writes = [what for pid, what in launches(self.work) if pid not in self.killed and what.startswith('write')]
        assert writes == []


def worker_environment(work: Path) -> dict[str, str]:
    """The environment of an app process: `TMPDIR` in `WORK`, so the sandbox's folders are the test's."""
    (work / 'tmp').mkdir(exist_ok=True)
    return {**os.environ, 'TMPDIR': str(work / 'tmp')}
