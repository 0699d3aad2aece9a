"""Skills that act: `run_skill_script` runs a loaded skill's scripts in the run's workspace.

The default workspace is skillshelf's bubblewrap sandbox (`SkillSandbox`), tested by attack with real `bwrap` and real
agent runs: each script tries to escape or exhaust the host, and the run must carry on with a clear message to the
model. What a script writes stays in the workspace: for the next call, the next run of the conversation and the
application.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.messages import TextPart
from pydantic_ai.workspaces import LocalWorkspaceBackend, Workspace, WorkspaceBackend, WorkspaceRef, WrapperWorkspace

from skillshelf import ScriptLimits, Skill, SkillError, Skills, SkillSandbox, SkillWarning

from reliability.ledger import case
from repo_paths import REPO
from sandbox_support import needs_bwrap
from scripted_model import Script, call, tool_returns
from skill_files import write_skill
from warnings_said import said

SECRET = 'SSH-PRIVATE-KEY-5531'


def skill_with(root: Path, scripts: dict[str, str], body: str = 'Run the scripts.') -> Path:
    """A library holding the skill `tool-kit` with these `scripts/` (the folder is there even without one)."""
    files = {f'scripts/{name}': text for name, text in scripts.items()}
    folder = write_skill(root / 'lib', 'tool-kit', body, description='Scripts that do things.', files=files)
    (folder / 'scripts').mkdir(exist_ok=True)
    return folder.parent


def run_script(
    capability: Skills[Any],
    script: str,
    args: list[str] | None = None,
    workspace: AbstractCapability[Any] | None = None,
    **extra: Any,
) -> str:
    """The `run_skill_script` reply of an agent run that loads the skill, then runs `script` in `workspace`."""
    model = Script(
        [
            [call('load_skill', name='tool-kit')],
            [call('run_skill_script', name='tool-kit', script=script, args=args or [], **extra)],
        ]
    )
    capabilities = [*([workspace] if workspace is not None else []), capability]
    messages = Agent(model.model(), capabilities=capabilities).run_sync('go').all_messages()
    [reply] = tool_returns(messages, 'run_skill_script')
    return reply


@needs_bwrap
def test_a_script_cannot_read_a_secret_outside_the_skill(tmp_path: Path) -> None:
    home = tmp_path / 'home'
    (home / '.ssh').mkdir(parents=True)
    (home / '.ssh' / 'id_ed25519').write_text(SECRET, encoding='utf-8')
    steal = f"""
import os
for path in [{str(home / '.ssh' / 'id_ed25519')!r}, os.path.expanduser('~/.ssh/id_ed25519'), '/root/.ssh/id_ed25519']:
    try:
        print(open(path).read())
    except OSError as error:
        print('refused:', type(error).__name__)
"""
    sandbox = SkillSandbox(tmp_path / 'workspaces')
    reply = run_script(Skills(skill_with(tmp_path, {'steal.py': steal}), scripts=True), 'scripts/steal.py', [], sandbox)
    assert SECRET not in reply
    assert reply.count('refused: FileNotFoundError') == 3
    assert reply.startswith('scripts/steal.py exited with code 0.')
    case('Runs', 'a skill script reads ~/.ssh outside the skill folder', f'nothing there in the sandbox: {reply}')


@needs_bwrap
def test_a_script_writes_only_in_the_workspace_and_its_files_stay(tmp_path: Path) -> None:
    library = skill_with(tmp_path, {})
    target = tmp_path / 'planted.txt'
    write = f"""
import os
for path in [{str(target)!r}, '/usr/planted', '/etc/hosts', 'result.txt']:
    try:
        with open(path, 'w') as file:
            file.write('x')
        print('wrote', os.path.basename(path))
    except OSError as error:
        print('refused', os.path.basename(path), type(error).__name__)
"""
    (library / 'tool-kit' / 'scripts' / 'write.py').write_text(write, encoding='utf-8')
    skill_md = (library / 'tool-kit' / 'SKILL.md').read_text(encoding='utf-8')
    sandbox = SkillSandbox(tmp_path / 'workspaces')
    model = Script(
        [[call('load_skill', name='tool-kit')], [call('run_skill_script', name='tool-kit', script='scripts/write.py')]]
    )
    result = Agent(model.model(), capabilities=[sandbox, Skills(library, scripts=True)]).run_sync('go')
    [reply] = tool_returns(result.all_messages(), 'run_skill_script')
    assert not target.exists()
    assert (library / 'tool-kit' / 'SKILL.md').read_text(encoding='utf-8') == skill_md
    assert [' '.join(line.split()[:2]) for line in reply.splitlines()[2:6]] == [
        'refused planted.txt',
        'refused planted',
        'refused hosts',
        'wrote result.txt',
    ]
    ref = result.response.workspace_ref
    assert ref is not None
    folder = sandbox.folder(ref)
    assert folder is not None
    assert (folder / 'result.txt').read_text(encoding='utf-8') == 'x'
    case('Runs', 'a skill script writes outside the workspace', f'refused; the workspace keeps its own: {reply}')


@needs_bwrap
def test_a_script_has_no_network_but_localhost_answers(tmp_path: Path) -> None:
    connect = """
import socket, threading, http.server, urllib.request
try:
    socket.create_connection(('192.0.2.1', 80), timeout=3)
    print('connected out')
except OSError as error:
    print('no network:', type(error).__name__)
server = http.server.HTTPServer(('127.0.0.1', 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=server.serve_forever, daemon=True).start()
with urllib.request.urlopen(f'http://localhost:{server.server_port}/', timeout=5) as page:
    print('localhost answered', page.status)
"""
    sandbox = SkillSandbox(tmp_path / 'workspaces')
    reply = run_script(Skills(skill_with(tmp_path, {'net.py': connect}), scripts=True), 'scripts/net.py', [], sandbox)
    assert 'connected out' not in reply
    assert 'no network:' in reply
    assert 'localhost answered 200' in reply
    case('Runs', 'a skill script opens a socket out, then serves on localhost', f'no network, loopback only: {reply}')


@needs_bwrap
def test_a_fork_bomb_stops_at_the_process_limit(tmp_path: Path) -> None:
    bomb = """
import os, time

children = 0
try:
    for _ in range(100_000):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        children += 1
except OSError as error:
    print(f'fork refused after {children} children: {type(error).__name__}')
"""
    sandbox = SkillSandbox(tmp_path / 'workspaces')
    capability = Skills(skill_with(tmp_path, {'bomb.py': bomb}), scripts=True, script_limits=ScriptLimits(timeout=20))
    reply = run_script(capability, 'scripts/bomb.py', [], sandbox)
    assert 'fork refused after' in reply
    refused_at = int(reply.split('fork refused after ')[1].split()[0])
    assert refused_at < 64
    case(
        'Runs', 'a skill script fork-bombs', f'stopped at the process limit, the rest killed with the sandbox: {reply}'
    )


@needs_bwrap
def test_a_flood_of_output_is_cut(tmp_path: Path) -> None:
    flood = 'import sys\nfor _ in range(5):\n    sys.stdout.write("x" * (1 << 20))\nprint("done", file=sys.stderr)\n'
    sandbox = SkillSandbox(tmp_path / 'workspaces')
    reply = run_script(Skills(skill_with(tmp_path, {'flood.py': flood}), scripts=True), 'scripts/flood.py', [], sandbox)
    assert reply.startswith('scripts/flood.py exited with code 0.')
    assert len(reply) < 34_000
    assert '[output cut: only the first 32,768 of 5,242,885 bytes are shown;' in reply
    case('Runs', 'a skill script prints 5 MB', f'kept the first 32 KB and said so: {reply[-160:]}')


@needs_bwrap
def test_a_script_that_runs_forever_is_killed_at_the_time_limit(tmp_path: Path) -> None:
    forever = 'import subprocess, time\nsubprocess.Popen(["sleep", "1000"])\nprint("started", flush=True)\nwhile True:\n    time.sleep(1)\n'
    sandbox = SkillSandbox(tmp_path / 'workspaces')
    capability = Skills(
        skill_with(tmp_path, {'forever.py': forever}), scripts=True, script_limits=ScriptLimits(timeout=2)
    )
    reply = run_script(capability, 'scripts/forever.py', [], sandbox)
    assert reply.startswith('scripts/forever.py was stopped after 2 s: it reached the time limit')
    assert 'started' in reply
    leftover = subprocess.run(['pgrep', '-f', 'sleep 1000'], capture_output=True, text=True)
    assert leftover.stdout == ''
    case('Runs', 'a skill script runs forever (and starts a child)', f'killed with every process it started: {reply}')


@needs_bwrap
def test_a_path_that_names_no_file_of_the_skill_is_refused_with_its_scripts(tmp_path: Path) -> None:
    library = skill_with(tmp_path, {'ok.py': 'print(1)\n', 'other.sh': 'echo 2\n'})
    (tmp_path / 'evil.py').write_text('print("escaped")\n', encoding='utf-8')
    (library / 'tool-kit' / 'scripts' / 'link.py').symlink_to(tmp_path / 'evil.py')
    sandbox = SkillSandbox(tmp_path / 'workspaces')
    replies = [
        run_script(Skills(library, scripts=True), path, [], sandbox)
        for path in ('../../evil.py', '/etc/passwd', 'scripts/link.py', 'scripts/nope', '../evil')
    ]
    assert all(reply.startswith('Cannot run ') for reply in replies), replies
    assert not any('escaped' in reply for reply in replies)
    assert replies[2].endswith('is not a file of the skill. Its scripts are: scripts/ok.py, scripts/other.sh.')
    # `scripts/ok` is how skills' own docs often name `scripts/ok.py` (Anthropic's pdf skill: `python
    # scripts/check_fillable_fields <file.pdf>`), so it runs that file.
    assert run_script(Skills(library, scripts=True), 'scripts/ok', [], sandbox).startswith('scripts/ok.py exited')
    case(
        'Runs',
        '`run_skill_script` with a path or symlink outside the skill',
        f'refused, its scripts listed: {replies[2]}',
    )


@needs_bwrap
def test_the_sample_csv_profile_runs_in_the_sandbox_with_an_input_file(tmp_path: Path) -> None:
    model = Script(
        [
            [call('load_skill', name='csv-analysis')],
            [
                call(
                    'run_skill_script',
                    name='csv-analysis',
                    script='scripts/profile.py',
                    args=['sales.csv'],
                    files={'sales.csv': 'region,amount\nnorth,10\nsouth,\nnorth,30\n'},
                )
            ],
        ]
    )
    agent = Agent(model.model(), capabilities=[SkillSandbox(tmp_path / 'ws'), Skills(REPO / 'skills', scripts=True)])
    messages = agent.run_sync('profile my data').all_messages()
    [reply] = tool_returns(messages, 'run_skill_script')
    assert reply == (
        'scripts/profile.py exited with code 0.\nOutput:\n3 rows\nregion: text, 0 missing, 2 distinct\n'
        'amount: numeric, 1 missing, min 10.0, median 20.0, max 30.0'
    )
    assert 'run_skill_script' in model.requests[0].tools


def loaded_text(capabilities: list[AbstractCapability[Any]]) -> str:
    model = Script([[call('load_skill', name='tool-kit')]])
    [reply] = tool_returns(Agent(model.model(), capabilities=capabilities).run_sync('go').all_messages(), 'load_skill')
    return reply


def test_skill_dir_names_the_skills_files_in_the_workspace(tmp_path: Path) -> None:
    library = skill_with(
        tmp_path,
        {'x.py': 'print(1)\n'},
        body='Run `python ${SKILL_DIR}/scripts/x.py` or ${CLAUDE_SKILL_DIR}/x; $HOME stays.',
    )
    (tmp_path / 'work').mkdir()
    on_host = (library / 'tool-kit').resolve()
    assert f'Run `python {on_host}/scripts/x.py` or {on_host}/x; $HOME stays.' in loaded_text([Skills(library)])
    home = tmp_path / 'work' / '.skillshelf' / 'skills' / 'tool-kit'
    local = loaded_text([LocalWorkspace(tmp_path / 'work'), Skills(library, scripts=True, script_approval=False)])
    assert f'Run `python {home}/scripts/x.py` or {home}/x; $HOME stays.' in local
    assert f'Its files are in the workspace at {home} ' in local
    assert (home / 'scripts' / 'x.py').read_text(encoding='utf-8') == 'print(1)\n'


def test_skill_dir_without_a_workspace_is_the_folder_on_the_host_and_a_text_skill_keeps_the_variable(
    tmp_path: Path,
) -> None:
    # Scripts and file tools off: the agent's own tools (a shell of its own, say) find the files where they are.
    library = skill_with(tmp_path, {'x.py': 'print(1)\n'}, body='Run `python ${CLAUDE_SKILL_DIR}/scripts/x.py`.')
    on_host = (library / 'tool-kit').resolve()
    assert f'Run `python {on_host}/scripts/x.py`.' in loaded_text([Skills(library)])
    text = Skill.from_markdown('---\nname: tool-kit\ndescription: d\n---\nRun ${CLAUDE_SKILL_DIR}/x.py.\n')
    assert 'Run ${CLAUDE_SKILL_DIR}/x.py.' in loaded_text([Skills(skills=[text])])  # no folder anywhere


@needs_bwrap
def test_skill_dir_in_the_sandbox_is_the_same_path_for_every_conversation(tmp_path: Path) -> None:
    library = skill_with(tmp_path, {'x.py': 'print(1)\n'}, body='Run `python ${SKILL_DIR}/scripts/x.py`.')
    sandbox = SkillSandbox(tmp_path / 'ws')
    replies = [loaded_text([sandbox, Skills(library, scripts=True)]) for _ in range(2)]
    assert replies[0] == replies[1]
    assert 'Run `python /workspace/.skillshelf/skills/tool-kit/scripts/x.py`.' in replies[0]


def test_scripts_are_off_by_default_and_need_the_skill_loaded(tmp_path: Path) -> None:
    library = skill_with(tmp_path, {'x.py': 'print("ran")\n'})
    off = Script([[call('load_skill', name='tool-kit')]])
    Agent(off.model(), capabilities=[Skills(library)]).run_sync('go')
    assert all('run_skill_script' not in request.tools for request in off.requests)

    (tmp_path / 'work').mkdir()
    early = Script([[call('run_skill_script', name='tool-kit', script='scripts/x.py')]])
    capabilities = [LocalWorkspace(tmp_path / 'work'), Skills(library, scripts=True, script_approval=False)]
    messages = Agent(early.model(), capabilities=capabilities).run_sync('go').all_messages()
    assert tool_returns(messages, 'run_skill_script') == [
        "The skill 'tool-kit' is not loaded: call `load_skill` with 'tool-kit' first, then run its scripts."
    ]


def test_a_local_workspace_runs_python_and_bash_with_arguments_as_given(tmp_path: Path) -> None:
    library = skill_with(
        tmp_path,
        {
            'echo.py': 'import sys\nprint(sys.argv[1:])\nsys.exit(3)\n',
            'hello.sh': 'echo "hello $1"\n',
            'tool.rb': 'puts 1\n',
        },
    )
    (tmp_path / 'work').mkdir()
    workspace = LocalWorkspace(tmp_path / 'work')
    capability = Skills(library, scripts=True, script_approval=False)
    assert run_script(capability, 'scripts/echo.py', ['a b', '*', '$(id)'], workspace) == (
        "scripts/echo.py exited with code 3.\nOutput:\n['a b', '*', '$(id)']"
    )
    assert (
        run_script(capability, 'scripts/hello.sh', ['there'], workspace)
        == 'scripts/hello.sh exited with code 0.\nOutput:\nhello there'
    )
    assert 'only Python (.py), bash (.sh) and node (.js) scripts are' in run_script(
        capability, 'scripts/tool.rb', [], workspace
    )


def test_a_python_module_runs_with_the_skill_on_the_path(tmp_path: Path) -> None:
    library = skill_with(
        tmp_path,
        {
            '__init__.py': '',
            'util.py': 'def shout(text):\n    return text.upper()\n',
            'main.py': 'import sys\nfrom scripts.util import shout\nprint(shout(sys.argv[1]))\n',
        },
    )
    (tmp_path / 'work').mkdir()
    workspace = LocalWorkspace(tmp_path / 'work')
    for named in ('scripts.main', 'python -m scripts.main', 'scripts/main.py'):
        assert run_script(Skills(library, scripts=True, script_approval=False), named, ['quiet'], workspace).endswith(
            'Output:\nQUIET'
        ), named


def test_a_missing_module_is_said_plainly_and_warned_about(tmp_path: Path) -> None:
    library = skill_with(tmp_path, {'needs.py': 'import no_such_package_abc\n'})
    (tmp_path / 'work').mkdir()
    with pytest.warns(SkillWarning, match="needs the Python module 'no_such_package_abc'") as caught:
        reply = run_script(
            Skills(library, scripts=True, script_approval=False),
            'scripts/needs.py',
            [],
            LocalWorkspace(tmp_path / 'work'),
        )
    assert reply.endswith(
        "The script needs the Python module 'no_such_package_abc', which the environment that runs scripts does not "
        'have. Do not retry it: tell the user the module is missing there, or carry on without this script.'
    )
    [warning] = said(caught)
    assert warning.endswith(
        'which the workspace that runs scripts (LocalWorkspace) lacks; scripts in a LocalWorkspace run on '
        f'{sys.executable}: install the package that provides it in its environment'
    )
    assert 'SkillSandbox' not in warning


def test_a_module_installed_under_another_name_is_named_with_its_package(tmp_path: Path) -> None:
    library = skill_with(tmp_path, {'word.py': 'from docx import Document\n'})  # python-docx, not installed here
    (tmp_path / 'work').mkdir()
    with pytest.warns(SkillWarning, match="needs the Python module 'docx'") as caught:
        reply = run_script(
            Skills(library, scripts=True, script_approval=False),
            'scripts/word.py',
            [],
            LocalWorkspace(tmp_path / 'work'),
        )
    assert "needs the Python module 'docx' (installed as the package 'python-docx'), which" in reply
    [warning] = said(caught)
    assert warning.endswith("install the package 'python-docx' in its environment (`pip install python-docx`)")


@needs_bwrap
def test_a_module_missing_in_the_sandbox_names_the_sandbox_and_its_interpreter(tmp_path: Path) -> None:
    library = skill_with(tmp_path, {'needs.py': 'import yaml_not_here_abc\n'})
    with pytest.warns(SkillWarning, match="needs the Python module 'yaml_not_here_abc'") as caught:
        run_script(Skills(library, scripts=True), 'scripts/needs.py', [], SkillSandbox(tmp_path / 'ws'))
    [warning] = said(caught)
    assert warning.endswith(
        '(SkillSandbox) lacks; install the package that provides it in the environment of '
        f'{sys.executable}, the interpreter SkillSandbox(python=...) runs scripts on, or name one that has it'
    )


class HiddenInterpreterWorkspace(WrapperWorkspace):
    """A workspace on this machine that, like a remote sandbox or one that hides the agent's environment, cannot
    see the agent's interpreter: scripts run on its `python3`."""

    async def exists(self, path: str) -> bool:
        return False if path == sys.executable else await super().exists(path)


@dataclass
class HiddenInterpreter(AbstractCapability[Any]):
    folder: Path

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        return HiddenInterpreterWorkspace(Workspace(LocalWorkspaceBackend(self.folder)))


def test_scripts_on_the_workspaces_python3_are_warned_about_once(tmp_path: Path) -> None:
    library = skill_with(tmp_path, {'where.py': 'import sys\nprint(sys.executable)\n'})
    (tmp_path / 'work').mkdir()
    model = Script(
        [
            [call('load_skill', name='tool-kit')],
            [call('run_skill_script', name='tool-kit', script='scripts/where.py')],
            [call('run_skill_script', name='tool-kit', script='scripts/where.py')],
        ]
    )
    agent = Agent(
        model.model(),
        capabilities=[HiddenInterpreter(tmp_path / 'work'), Skills(library, scripts=True, script_approval=False)],
    )
    with pytest.warns(SkillWarning, match='runs Python scripts with the `python3` of the workspace') as caught:
        messages = agent.run_sync('go').all_messages()
    replies = tool_returns(messages, 'run_skill_script')
    assert [reply.split('\n')[0] for reply in replies] == ['scripts/where.py exited with code 0.'] * 2
    [warning] = said(caught)  # two runs, one warning
    assert warning.startswith(
        'run_skill_script runs Python scripts with the `python3` of the workspace '
        f"(test_scripts.HiddenInterpreterWorkspace): the agent's interpreter ({sys.executable}) is not visible there"
    )


@needs_bwrap
def test_files_stay_for_the_next_call_and_the_next_run_of_the_conversation_only(tmp_path: Path) -> None:
    library = skill_with(
        tmp_path,
        {
            'write.py': 'import sys\nopen(sys.argv[1], "w").write(sys.argv[2])\n',
            'read.py': 'import sys\nprint(open(sys.argv[1]).read())\n',
        },
    )
    sandbox = SkillSandbox(tmp_path / 'ws')
    read = [call('run_skill_script', name='tool-kit', script='scripts/read.py', args=['note.txt'])]
    model = Script(
        [
            [call('load_skill', name='tool-kit')],
            [call('run_skill_script', name='tool-kit', script='scripts/write.py', args=['note.txt', 'kept'])],
            read,
            [TextPart('first run done')],
            read,
        ]
    )
    agent = Agent(model.model(), capabilities=[sandbox, Skills(library, scripts=True)])
    first = agent.run_sync('write')
    assert tool_returns(first.all_messages(), 'run_skill_script')[-1].endswith('Output:\nkept')
    second = agent.run_sync('read it again', message_history=first.all_messages())
    assert tool_returns(second.new_messages(), 'run_skill_script') == [
        'scripts/read.py exited with code 0.\nOutput:\nkept'
    ]

    other = Agent(
        Script(
            [
                [call('load_skill', name='tool-kit')],
                [call('run_skill_script', name='tool-kit', script='scripts/read.py', args=['note.txt'])],
            ]
        ).model(),
        capabilities=[sandbox, Skills(library, scripts=True)],
    )
    [elsewhere] = tool_returns(other.run_sync('a new conversation').all_messages(), 'run_skill_script')
    assert 'FileNotFoundError' in elsewhere


def test_a_skill_from_text_runs_its_scripts(tmp_path: Path) -> None:
    skill = Skill.from_markdown(
        '---\nname: tool-kit\ndescription: Scripts kept in memory.\n---\nRun scripts/hi.py.\n',
        {'scripts/hi.py': 'print("hi from memory")\n'},
        origin='registry demo/tool-kit',
    )
    (tmp_path / 'work').mkdir()
    reply = run_script(
        Skills(skills=[skill], scripts=True, script_approval=False),
        'scripts/hi.py',
        [],
        LocalWorkspace(tmp_path / 'work'),
    )
    assert reply == 'scripts/hi.py exited with code 0.\nOutput:\nhi from memory'


def test_enabling_scripts_without_bubblewrap_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match=r"install it .*pydantic-ai's `LocalWorkspace`"):
        SkillSandbox(tmp_path, bwrap='no-such-bwrap')
    with pytest.raises(SkillError, match='the `scripts` option must be true or false'):
        Skills(skill_with(tmp_path / 'other', {}), scripts='yes')  # type: ignore[arg-type]
