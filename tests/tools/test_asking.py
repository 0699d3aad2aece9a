"""No run ends because skillshelf asked about a call: when the agent cannot take approvals (no
`HandleDeferredToolCalls` or `RequestInput` capability, no `DeferredToolRequests` among its output types),
`run_command` and script runs go ahead in a workspace that isolates the host and are refused on the host, with a
sentence for the model and a `SkillWarning` for the developer when the agent is built; `script_approval=True` there
is an error at construction; an agent that can take approvals is asked as before; and `preapproved_programs` lets a
simple command of a listed program run unasked anywhere.

Every case is a real agent run on a scripted model, in pydantic-ai's `LocalWorkspace` or skillshelf's `SkillSandbox`
(real bubblewrap), and checks what ran on disk as well as what the model was told.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability, HandleDeferredToolCalls, LocalWorkspace
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, RunContext
from pydantic_ai.workspaces import LocalWorkspaceBackend, Workspace

from skillshelf import GitSource, Skills, SkillSandbox, SkillWarning
from skillshelf.capability.isolation import isolates
from skillshelf.errors import SkillError

from reliability.ledger import case
from sandbox_support import BWRAP_PROBLEM, needs_bwrap
from scripted_model import Script, call, tool_returns
from skill_files import write_skill
from warnings_said import said

HOST_REFUSAL = 'Not run: this command needs approval, and no one can give it here: the workspace is the machine'
SCRIPT_REFUSAL = 'Not run: this script run needs approval, and no one can give it here'
WRITES_MARK = "from pathlib import Path\nPath('mark.txt').write_text('ran')\nprint('marked')\n"


def library(root: Path) -> Path:
    """A library of one skill, `marker`, whose script writes `mark.txt` in the working directory."""
    write_skill(root / 'lib', 'marker', 'Run scripts/mark.py.', files={'scripts/mark.py': WRITES_MARK})
    return root / 'lib'


def host(tmp_path: Path) -> LocalWorkspace[Any]:
    (tmp_path / 'work').mkdir(exist_ok=True)
    return LocalWorkspace(tmp_path / 'work')


def run_mark() -> list[ToolCallPart]:
    return [call('run_skill_script', name='marker', script='scripts/mark.py')]


class Approver:
    """The application's approval handler: it records each request and approves everything."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def capability(self) -> HandleDeferredToolCalls[Any]:
        def approve(ctx: RunContext[Any], requests: DeferredToolRequests) -> DeferredToolResults:
            self.asked += [str(requests.metadata[call.tool_call_id]['command']) for call in requests.approvals]
            return requests.build_results(approve_all=True)

        return HandleDeferredToolCalls(handler=approve)


# --- the host, with no one to ask: refused, and the developer was told --------------------------------------------


def test_on_the_host_with_no_one_to_ask_a_command_is_refused_and_the_run_goes_on(tmp_path: Path) -> None:
    model = Script([[call('run_command', command='echo hi > made.txt')]])
    with pytest.warns(SkillWarning, match='`run_command` will be refused: the run works in pydantic-ai') as warned:
        agent = Agent(model.model(), capabilities=[host(tmp_path), Skills(library(tmp_path), file_tools=True)])
    assert 'give the agent a `HandleDeferredToolCalls` or `RequestInput` capability' in said(warned)[0]
    result = agent.run_sync('make a file')
    assert result.output == 'done'
    [refusal] = tool_returns(result.all_messages(), 'run_command')
    assert refusal.startswith(HOST_REFUSAL)
    assert 'tell the user' in refusal
    assert not (tmp_path / 'work' / 'made.txt').exists()
    assert tool_returns(model.requests[-1].messages, 'run_command') == [refusal]  # the model was told
    case(
        'Runs', 'run_command on the host, and the agent cannot take approvals', f'not run; the model is told: {refusal}'
    )


def test_on_the_host_a_script_run_is_refused_unless_scripts_are_trusted(tmp_path: Path) -> None:
    steps = [[call('load_skill', name='marker')], run_mark()]
    model = Script(steps)
    with pytest.warns(SkillWarning, match='script runs will be refused'):
        agent = Agent(model.model(), capabilities=[host(tmp_path), Skills(library(tmp_path), scripts=True)])
    [refusal] = tool_returns(agent.run_sync('mark').all_messages(), 'run_skill_script')
    assert refusal.startswith(SCRIPT_REFUSAL)
    assert not (tmp_path / 'work' / 'mark.txt').exists()

    trusted = Skills(library(tmp_path), scripts=True, script_approval=False)  # no warning: nothing is refused
    result = Agent(Script(steps).model(), capabilities=[host(tmp_path), trusted]).run_sync('mark')
    assert tool_returns(result.all_messages(), 'run_skill_script') == [
        'scripts/mark.py exited with code 0.\nOutput:\nmarked'
    ]
    assert (tmp_path / 'work' / 'mark.txt').read_text() == 'ran'


def test_script_approval_on_an_agent_that_cannot_be_asked_is_an_error_naming_the_fix(tmp_path: Path) -> None:
    skills = Skills(library(tmp_path), scripts=True, script_approval=True)
    with pytest.raises(SkillError, match='`script_approval=True` asks the application') as raised:
        Agent(Script([]).model(), capabilities=[host(tmp_path), skills])
    assert 'HandleDeferredToolCalls' in str(raised.value)
    assert 'output_type=[str, DeferredToolRequests]' in str(raised.value)
    Agent(Script([]).model(), capabilities=[host(tmp_path), skills], output_type=[str, DeferredToolRequests])


# --- an agent that can be asked is asked, as before ----------------------------------------------------------------


def test_an_agent_with_an_approval_handler_is_asked_on_the_host(tmp_path: Path) -> None:
    approver = Approver()
    model = Script([[call('load_skill', name='marker')], run_mark(), [call('run_command', command='echo hi')]])
    skills = Skills(library(tmp_path), scripts=True, file_tools=True)
    result = Agent(model.model(), capabilities=[host(tmp_path), skills, approver.capability()]).run_sync('go')
    assert approver.asked == ['python scripts/mark.py', 'echo hi']
    assert tool_returns(result.all_messages(), 'run_command') == ['Exit code 0.\nhi']
    assert (tmp_path / 'work' / 'mark.txt').read_text() == 'ran'


def test_an_agent_with_deferred_tool_requests_among_its_outputs_gets_them(tmp_path: Path) -> None:
    model = Script([[call('run_command', command='echo hi')]])
    skills = Skills(library(tmp_path), file_tools=True)
    agent = Agent(model.model(), capabilities=[host(tmp_path), skills], output_type=[str, DeferredToolRequests])
    result = agent.run_sync('go')
    assert isinstance(result.output, DeferredToolRequests)
    assert [approval.tool_name for approval in result.output.approvals] == ['run_command']


@needs_bwrap
def test_in_the_sandbox_an_agent_with_a_handler_is_still_asked_about_commands(tmp_path: Path) -> None:
    approver = Approver()
    model = Script([[call('load_skill', name='marker')], run_mark(), [call('run_command', command='echo hi')]])
    skills = Skills(library(tmp_path), scripts=True, file_tools=True)
    sandbox = SkillSandbox(tmp_path / 'workspaces')
    result = Agent(model.model(), capabilities=[sandbox, skills, approver.capability()]).run_sync('go')
    assert approver.asked == ['echo hi']  # scripts run unasked in a sandbox unless script_approval=True
    assert tool_returns(result.all_messages(), 'run_command') == ['Exit code 0.\nhi']


# --- a sandbox, with no one to ask: everything runs -----------------------------------------------------------------


@needs_bwrap
@pytest.mark.parametrize('supplied', ['SkillSandbox', 'by Skills'])
def test_in_a_sandbox_with_no_one_to_ask_commands_and_scripts_run_unasked(tmp_path: Path, supplied: str) -> None:
    sandbox = SkillSandbox(tmp_path / 'workspaces')
    model = Script(
        [[call('load_skill', name='marker')], run_mark(), [call('run_command', command='cat mark.txt > copy.txt')]]
    )
    skills = Skills(library(tmp_path), scripts=True, file_tools=True)
    capabilities: list[AbstractCapability[Any]] = [sandbox, skills] if supplied == 'SkillSandbox' else [skills]
    result = Agent(model.model(), capabilities=capabilities).run_sync('go')
    messages = result.all_messages()
    assert tool_returns(messages, 'run_skill_script') == ['scripts/mark.py exited with code 0.\nOutput:\nmarked']
    assert tool_returns(messages, 'run_command') == ['Exit code 0. It printed nothing.']
    assert result.response.workspace_ref is not None
    if supplied == 'SkillSandbox':
        folder = sandbox.folder(result.response.workspace_ref)
        assert folder is not None
        assert (folder / 'copy.txt').read_text() == 'ran'


@needs_bwrap
def test_the_readmes_document_skills_example_works_as_written(tmp_path: Path) -> None:
    """The README's agent on Anthropic's skills, from a git repository (here a local one), with no approval handler."""
    repository = tmp_path / 'anthropic-skills'
    for name in ('pdf', 'docx', 'pptx'):
        write_skill(repository / 'skills', name, 'Work on the file.')
    write_skill(repository / 'skills', 'xlsx', 'Run scripts/mark.py.', files={'scripts/mark.py': WRITES_MARK})
    for arguments in (
        ['init', '-q', '-b', 'main'],
        ['add', '.'],
        ['-c', 'user.name=T', '-c', 'user.email=t@e', 'commit', '-q', '-m', 's'],
    ):
        subprocess.run(['git', *arguments], cwd=repository, check=True, capture_output=True)
    commit = subprocess.run(['git', 'rev-parse', 'HEAD'], cwd=repository, check=True, capture_output=True, text=True)

    anthropic = GitSource(
        str(repository), ref=commit.stdout.strip(), subdirectory='skills', cache_dir=tmp_path / 'cache'
    )
    model = Script(
        [
            [call('load_skill', name='xlsx')],
            [call('run_skill_script', name='xlsx', script='scripts/mark.py')],
            [call('run_command', command='ls mark.txt')],
        ]
    )
    agent = Agent(
        model.model(),
        capabilities=[
            SkillSandbox(tmp_path / 'workspaces', python=sys.executable, mounts=['/etc/fonts']),
            Skills(sources=[anthropic], scripts=True, file_tools=True, include=['pdf', 'docx', 'pptx', 'xlsx']),
        ],
    )
    result = agent.run_sync('Make the spreadsheet.')
    assert result.output == 'done'
    assert tool_returns(result.all_messages(), 'run_command') == ['Exit code 0.\nmark.txt']


# --- preapproved programs: simple commands of them run unasked anywhere ------------------------------------------


def test_a_preapproved_programs_simple_command_runs_unasked_on_the_host_and_nothing_more(tmp_path: Path) -> None:
    work = tmp_path / 'work'
    work.mkdir()
    (work / 'x.py').write_text("print('from x')\n", encoding='utf-8')
    (work / 'keep.txt').write_text('keep', encoding='utf-8')
    lines = ['python3 x.py', 'python3 x.py; rm keep.txt', 'python3 $(rm keep.txt)', 'python x.py', './python3 x.py']
    model = Script([[call('run_command', command=line)] for line in lines])
    skills = Skills(library(tmp_path), file_tools=True, preapproved_programs=['python3'])
    result = Agent(model.model(), capabilities=[LocalWorkspace(work), skills]).run_sync('run x')  # no warning
    replies = tool_returns(result.all_messages(), 'run_command')
    assert replies[0] == 'Exit code 0.\nfrom x'
    assert replies[1].startswith(HOST_REFUSAL)
    assert replies[2].startswith(HOST_REFUSAL)
    assert not replies[3].startswith('Not run')  # `python` names the same program as `python3`
    assert replies[4].startswith(HOST_REFUSAL)  # a program in the working directory is not the one named
    assert (work / 'keep.txt').read_text() == 'keep'
    case(
        "The model's calls",
        "`python3 x.py; rm keep.txt` on the host, with `preapproved_programs=['python3']`",
        'not run (two commands, so not pre-approved, and no one to ask); `python3 x.py` alone runs',
    )


def test_with_a_handler_a_preapproved_programs_command_asks_no_one_and_a_compound_one_asks(tmp_path: Path) -> None:
    approver = Approver()
    work = host(tmp_path)
    model = Script([[call('run_command', command='python3 -V')], [call('run_command', command='python3 -V; echo x')]])
    skills = Skills(library(tmp_path), file_tools=True, preapproved_programs='python3')
    Agent(model.model(), capabilities=[work, skills, approver.capability()]).run_sync('go')
    assert approver.asked == ['python3 -V; echo x']


def test_a_preapproved_interpreter_runs_scripts_on_the_host(tmp_path: Path) -> None:
    model = Script([[call('load_skill', name='marker')], run_mark()])
    skills = Skills(library(tmp_path), scripts=True, preapproved_programs=['python3'])
    result = Agent(model.model(), capabilities=[host(tmp_path), skills]).run_sync('mark')
    assert tool_returns(result.all_messages(), 'run_skill_script') == [
        'scripts/mark.py exited with code 0.\nOutput:\nmarked'
    ]


@pytest.mark.parametrize('bad', ['/usr/bin/python3', 'python3 -c', '', 'PATH=x', 3])
def test_preapproved_programs_are_bare_program_names(tmp_path: Path, bad: object) -> None:
    with pytest.raises(SkillError, match='`preapproved_programs` option names programs'):
        Skills(library(tmp_path), file_tools=True, preapproved_programs=[bad])  # type: ignore[list-item]


# --- which workspace isolates ---------------------------------------------------------------------------------------


class DockerSandboxBackend(LocalWorkspaceBackend):
    """A backend class as pydantic-ai-harness names its Docker sandbox's (`pydantic_ai_harness.docker_sandbox`)."""


class SSHWorkspaceBackend(LocalWorkspaceBackend):
    """A backend class as harness names its SSH workspace's: another machine, not a sandbox."""


DockerSandboxBackend.__module__ = 'pydantic_ai_harness.docker_sandbox._backend'
SSHWorkspaceBackend.__module__ = 'pydantic_ai_harness.ssh_workspace._backend'


def test_a_workspace_isolates_only_when_it_says_so_or_is_a_harness_sandbox(tmp_path: Path) -> None:
    assert not isolates(Workspace(LocalWorkspaceBackend(tmp_path)))
    assert isolates(Workspace(DockerSandboxBackend(tmp_path)))
    assert not isolates(Workspace(SSHWorkspaceBackend(tmp_path)))
    if BWRAP_PROBLEM is None:
        from skillshelf.sandbox import SandboxWorkspace

        assert isolates(Workspace(SandboxWorkspace(SkillSandbox(tmp_path / 'workspaces'))))
