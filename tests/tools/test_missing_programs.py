"""A program a script runs that the workspace lacks is explained like a missing module: one plain sentence for the
model (which program, which script, do not retry), a `SkillWarning` for the developer naming the workspace and how to
add the program; and `load_skill` says up front what the workspace lacks for the skill."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.workspaces import (
    LocalWorkspaceBackend,
    Workspace,
    WorkspaceBackend,
    WorkspaceError,
    WorkspaceRef,
    WrapperWorkspace,
)

from skillshelf import Skills, SkillSandbox, SkillWarning
from skillshelf.scripts.lacking import Lack, lacking_note
from skillshelf.scripts.programs import missing_program

from sandbox_support import needs_bwrap
from scripted_model import Script, call, tool_returns
from skill_files import write_skill

TOOL = 'definitely-not-installed-tool'
PYTHON_CALLER = f"import subprocess\nsubprocess.run(['{TOOL}', '--convert', 'in.docx'], check=True)\n"
SHELL_CALLER = f'set -e\necho converting\n{TOOL} --convert in.docx\necho never\n'


def skill_with(root: Path, scripts: dict[str, str]) -> Path:
    """A library holding the skill `converter` with these `scripts/`."""
    files = {f'scripts/{name}': text for name, text in scripts.items()}
    write_skill(root / 'lib', 'converter', 'Convert documents.', description='Converts documents.', files=files)
    return root / 'lib'


def run(library: Path, workspace: AbstractCapability[Any], script: str | None = None) -> tuple[str, str | None]:
    """A real run that loads `converter` and, with `script`, runs it: the load reply and the script's report."""
    steps = [[call('load_skill', name='converter')]]
    if script is not None:
        steps.append([call('run_skill_script', name='converter', script=script)])
    model = Script(steps)
    messages = (
        Agent(model.model(), capabilities=[workspace, Skills(library, scripts=True, script_approval=False)])
        .run_sync('go')
        .all_messages()
    )
    [loaded] = tool_returns(messages, 'load_skill')
    ran = tool_returns(messages, 'run_skill_script')
    return str(loaded), (str(ran[0]) if ran else None)


def sentence(script: str) -> str:
    return (
        f"{script} runs the program '{TOOL}', which this environment does not have. Do not retry it: tell the user "
        'the program is missing there, or carry on without this script.'
    )


def test_a_python_script_starting_a_missing_program_gets_a_sentence_not_just_a_traceback(tmp_path: Path) -> None:
    library = skill_with(tmp_path, {'convert.py': PYTHON_CALLER})
    (tmp_path / 'work').mkdir()
    with pytest.warns(SkillWarning, match=f"runs the program '{TOOL}'") as caught:
        _, report = run(library, LocalWorkspace(tmp_path / 'work'), 'scripts/convert.py')
    assert report is not None
    assert report.startswith('scripts/convert.py exited with code 1.')
    assert f"FileNotFoundError: [Errno 2] No such file or directory: '{TOOL}'" in report
    assert report.endswith(sentence('scripts/convert.py'))
    [warning] = [str(item.message) for item in caught if 'runs the program' in str(item.message)]
    assert warning == (
        f"skill 'converter': scripts/convert.py runs the program '{TOOL}', which the workspace that runs scripts "
        "(LocalWorkspace) lacks; install it on this machine, on the PATH the agent's process has. `skillshelf check` "
        'lists what each skill needs'
    )


@needs_bwrap
def test_a_shell_script_missing_a_program_in_the_sandbox_names_the_sandbox(tmp_path: Path) -> None:
    library = skill_with(tmp_path, {'convert.sh': SHELL_CALLER})
    with pytest.warns(SkillWarning, match=f"runs the program '{TOOL}'") as caught:
        _, report = run(library, SkillSandbox(tmp_path / 'ws'), 'scripts/convert.sh')
    assert report is not None
    assert report.startswith('scripts/convert.sh exited with code 127.\nOutput:\nconverting\nErrors:\n')
    assert f'{TOOL}: command not found' in report
    assert report.endswith(sentence('scripts/convert.sh'))
    [warning] = [str(item.message) for item in caught if 'runs the program' in str(item.message)]
    assert warning.endswith(
        '(SkillSandbox) lacks; install it on this machine system-wide (under /usr), where SkillSandbox sees programs. '
        '`skillshelf check` lists what each skill needs'
    )


@needs_bwrap
def test_a_program_this_machine_has_outside_the_sandbox_view_gets_a_mount_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / 'opt-tools'
    tools.mkdir()
    program = tools / TOOL
    program.write_text('#!/bin/sh\necho converted\n')
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv('PATH', f'{tools}{os.pathsep}{os.environ["PATH"]}')  # the agent's PATH has it; the sandbox's not
    carrying_on = SHELL_CALLER.removeprefix('set -e\n')  # the script goes on without it, and exits 0
    library = skill_with(tmp_path, {'convert.sh': carrying_on})
    with pytest.warns(SkillWarning, match=f"runs the program '{TOOL}'") as caught:
        _, report = run(library, SkillSandbox(tmp_path / 'ws'), 'scripts/convert.sh')
    assert report is not None
    assert report.startswith('scripts/convert.sh exited with code 0.\nOutput:\nconverting\nnever')
    assert report.endswith(sentence('scripts/convert.sh'))
    [warning] = [str(item.message) for item in caught if 'runs the program' in str(item.message)]
    assert f'this machine has it at {program}, which SkillSandbox does not show: add SkillSandbox(mounts=' in warning
    assert repr(str(tools)) in warning


def test_a_script_that_only_prints_the_words_is_never_said_to_lack_a_program(tmp_path: Path) -> None:
    caller = f"print('{TOOL}: command not found')\n"  # the words, printed by a script that then succeeds
    library = skill_with(tmp_path, {'quote.py': caller})
    (tmp_path / 'work').mkdir()
    _, report = run(library, LocalWorkspace(tmp_path / 'work'), 'scripts/quote.py')
    assert report == f'scripts/quote.py exited with code 0.\nOutput:\n{TOOL}: command not found'


@pytest.mark.parametrize(
    ('stderr', 'program'),
    [
        (
            '  File "/usr/lib/python3.12/subprocess.py", line 1955, in _execute_child\n'
            '    raise child_exception_type(errno_num, err_msg, err_filename)\n'
            "FileNotFoundError: [Errno 2] No such file or directory: 'soffice'\n",
            'soffice',
        ),
        ('sh: 1: soffice: not found\n', 'soffice'),
        ('/bin/sh: 1: pdftoppm: not found\n', 'pdftoppm'),
        ('/work/.skills/x/scripts/run.sh: line 3: jq: command not found\n', 'jq'),
        ('bash: magick: command not found\n', 'magick'),
        ('zsh: command not found: node\n', 'node'),
        ("/usr/bin/env: 'node': No such file or directory\n", 'node'),
        ('bash: jq: command not found\nbash: yq: command not found\n', 'yq'),  # the last: the one that ended the run
        # not a program: a data file the script could not open, a path it got wrong, a message about something else
        (
            '  File "/work/x.py", line 2, in <module>\n    open("in.docx")\n'
            "FileNotFoundError: [Errno 2] No such file or directory: 'in.docx'\n",
            None,
        ),
        ('sh: 1: ./build.sh: not found\n', None),
        ('Error: the setting: not found\n', None),
    ],
)
def test_missing_programs_are_found_in_what_the_run_printed(stderr: str, program: str | None) -> None:
    assert missing_program(stderr) == program


# --- what load_skill says up front ---------------------------------------------------------------------------------

LOADED_NOTE = (
    f"This workspace lacks what some of its scripts need: the program '{TOOL}' (scripts/convert.py, "
    "scripts/convert.sh); the Python module 'no_such_module_abc' (scripts/convert.py). Scripts that need them will "
    'fail here: tell the user before you start, and do not retry them.'
)
NEEDY_SCRIPTS = {
    'convert.py': PYTHON_CALLER + 'import no_such_module_abc\n',
    'convert.sh': SHELL_CALLER,
    'optional.py': (  # guarded: the script copes without them, so they are not said to be lacking
        'try:\n    import other_module_abc\nexcept ImportError:\n    other_module_abc = None\n'
        "import shutil\nif shutil.which('optional-tool-abc'):\n    pass\n"
    ),
    'present.sh': 'sh -c true\nls\n',  # programs every workspace here has
}


def test_load_skill_says_up_front_what_a_local_workspace_lacks(tmp_path: Path) -> None:
    library = skill_with(tmp_path, NEEDY_SCRIPTS)
    (tmp_path / 'work').mkdir()
    loaded, _ = run(library, LocalWorkspace(tmp_path / 'work'))
    header, body = loaded.split('\n\n', 1)
    assert header.splitlines()[2] == LOADED_NOTE
    assert body.startswith('Convert documents.')


@needs_bwrap
def test_load_skill_says_up_front_what_the_sandbox_lacks(tmp_path: Path) -> None:
    library = skill_with(tmp_path, NEEDY_SCRIPTS)
    loaded, _ = run(library, SkillSandbox(tmp_path / 'ws'))
    assert loaded.split('\n\n', 1)[0].splitlines()[2] == LOADED_NOTE


def test_a_skill_whose_needs_are_all_there_loads_without_a_note(tmp_path: Path) -> None:
    library = skill_with(tmp_path, {'present.sh': NEEDY_SCRIPTS['present.sh'], 'ok.py': 'import json\n'})
    (tmp_path / 'work').mkdir()
    loaded, _ = run(library, LocalWorkspace(tmp_path / 'work'))
    assert 'lacks' not in loaded
    assert loaded.split('\n\n', 1)[0].count('\n') == 1  # the files' folder, nothing more


class NoShellWorkspace(WrapperWorkspace):
    """A workspace that cannot run `sh` (a remote one without a shell, say): it cannot say what it lacks."""

    async def run(self, command: Any, **options: Any) -> Any:
        if isinstance(command, list) and command[:1] == ['sh']:
            raise WorkspaceError('there is no shell here')
        return await super().run(command, **options)


@dataclass
class NoShell(AbstractCapability[Any]):
    folder: Path

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        return NoShellWorkspace(Workspace(LocalWorkspaceBackend(self.folder)))


def test_a_workspace_that_cannot_answer_never_fails_the_load(tmp_path: Path) -> None:
    library = skill_with(tmp_path, NEEDY_SCRIPTS)
    (tmp_path / 'work').mkdir()
    loaded, _ = run(library, NoShell(tmp_path / 'work'))
    assert loaded.startswith("Loaded skill 'converter'.\nIts files are in the workspace at ")
    assert 'lacks' not in loaded


def test_the_note_groups_lacks_by_kind_and_stays_short() -> None:
    places = tuple(f'scripts/s{index}.py' for index in range(5))
    lacks = [
        Lack('module', 'lxml', places),
        Lack('module', 'defusedxml', places[:1]),
        Lack('program', 'soffice', places),
    ]
    assert lacking_note(lacks) == (
        "This workspace lacks what some of its scripts need: the program 'soffice' (scripts/s0.py, scripts/s1.py +3); "
        "the Python modules 'lxml' (scripts/s0.py, scripts/s1.py +3), 'defusedxml' (scripts/s0.py). Scripts that need "
        'them will fail here: tell the user before you start, and do not retry them.'
    )
    many = [Lack('program', f'tool-{index}', places[:1]) for index in range(9)]
    assert lacking_note(many).count("'tool-") == 6
    assert '; and 3 more. Scripts' in lacking_note(many)
    assert lacking_note([]) == ''
