"""Model input that used to end the run: script arguments the operating system refuses (over its per-argument or
total limit, or holding a NUL byte), odd input-file names, a forked skill whose `allowed-tools` names a tool that
needs approval, and a forked skill whose `model:` cannot be built. Each now comes back to the model as a message
it can act on; the run goes on.

Before the fix: `OSError: [Errno 7] Argument list too long` and `ValueError: embedded null byte` out of
`run_sync` (under `LocalWorkspace` and `SkillSandbox` alike); `UserError: A deferred tool call was present, but
DeferredToolRequests is not among output types` from the fork; `UserError: Unknown model` or a missing API key from
the fork's model. (The fork cases are fixed by the fork work merged from `main`; these tests hold it to them.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, Tool
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import Skill, Skills, SkillSandbox, SkillWarning

from reliability.ledger import case
from sandbox_support import BWRAP_PROBLEM
from scripted_model import Script, call, tool_returns
from skill_files import write_skill

ECHO = 'import sys\nprint(len(sys.argv) - 1, sum(len(a) for a in sys.argv[1:]))\n'


def workspace(kind: str, root: Path) -> AbstractCapability[Any]:
    if kind == 'sandbox':
        if BWRAP_PROBLEM is not None:
            pytest.skip(BWRAP_PROBLEM)
        return SkillSandbox(root / 'sandbox')
    (root / 'local').mkdir()
    return LocalWorkspace(root / 'local')


def run_echo(tmp_path: Path, kind: str, **arguments: Any) -> list[str]:
    """Load the skill and run its echo script twice: once with `arguments`, once plainly (the run goes on)."""
    write_skill(tmp_path / 'lib', 'tool', 'Run scripts/echo.py.', description='Echo.', files={'scripts/echo.py': ECHO})
    script = Script(
        [
            [call('load_skill', name='tool')],
            [call('run_skill_script', name='tool', script='scripts/echo.py', **arguments)],
            [call('run_skill_script', name='tool', script='scripts/echo.py', args=['ok'])],
        ]
    )
    capabilities = [workspace(kind, tmp_path), Skills(tmp_path / 'lib', scripts=True, script_approval=False)]
    messages = Agent(script.model(), capabilities=capabilities).run_sync('go').all_messages()
    replies = tool_returns(messages, 'run_skill_script')
    assert replies[1] == 'scripts/echo.py exited with code 0.\nOutput:\n1 2'
    assert str(tmp_path) not in replies[0]
    return replies


@pytest.mark.parametrize('kind', ['local', 'sandbox'])
@pytest.mark.parametrize(
    ('args', 'said'),
    [
        pytest.param(['x' * 3_000_000], 'argument 0 is 3,000,000 bytes; one argument may have at most', id='3-MB'),
        pytest.param(['a', 'é' * 70_000], 'argument 1 is 140,000 bytes', id='140-KB-in-UTF-8'),
        pytest.param(['y' * 120_000] * 30, 'the arguments are 3,600,000 bytes together', id='30-of-120-KB'),
        pytest.param(['a\x00b'], 'argument 0 contains a NUL byte', id='NUL'),
        pytest.param(['ok', '\x00' * 5], 'argument 1 contains a NUL byte', id='only-NULs'),
    ],
)
def test_arguments_the_os_refuses_get_a_message(tmp_path: Path, kind: str, args: list[str], said: str) -> None:
    failed, _ = run_echo(tmp_path, kind, args=args)
    assert failed.startswith("Cannot run 'scripts/echo.py' of 'tool': " + said)
    assert '`files`' in failed  # where such data can go instead
    case('Runs', f'run_skill_script with arguments the OS refuses ({said.split(";")[0]}, {kind})', failed)


@pytest.mark.parametrize(
    ('files', 'said'),
    [
        ({'a\x00b.txt': 'x'}, 'the path contains a NUL byte'),
        ({'a' * 5000: 'x'}, 'the path is 5,000 characters long; the limit is 1,024'),
        ({'/'.join(['d'] * 3000): 'x'}, 'the path is 5,999 characters long'),
        ({'.': 'x'}, "'.' is not a path inside the skill folder"),
        ({'': 'x'}, 'the path is empty'),
        ({'../escape.txt': 'x'}, 'cannot write the input file'),
    ],
    ids=['NUL', 'long', 'deep', 'dot', 'empty', 'parent'],
)
def test_odd_input_file_names_get_a_message(tmp_path: Path, files: dict[str, str], said: str) -> None:
    failed, _ = run_echo(tmp_path, 'local', files=files)
    assert failed.startswith("Cannot run 'scripts/echo.py' of 'tool': cannot write the input file")
    assert said in failed
    assert not (tmp_path / 'escape.txt').exists()
    case('Runs', f'run_skill_script with an input file named {next(iter(files))[:20]!r}', failed)


def wipe() -> str:
    """Wipe the disk."""
    wiped.append('wiped')
    return 'wiped'


wiped: list[str] = []


def fork_agent(metadata: dict[str, Any], folder: Path | None = None) -> Agent[None, str]:
    """A parent that loads the forked skill `f`; its sub-agent (told apart by its instructions) calls `wipe` when it
    has it. `wipe` needs approval. With `folder`, `f` is a skill folder there (not trusted), else a Python skill."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if 'Clean up the disk.' in (info.instructions or ''):  # the sub-agent
            if len(messages) == 1 and 'wipe' in [tool.name for tool in info.function_tools]:
                return ModelResponse(parts=[ToolCallPart('wipe', {})])
            last = messages[-1].parts[-1]
            return ModelResponse(parts=[TextPart(f'cleaned; wipe said: {getattr(last, "content", "")}'[:300])])
        if len(messages) == 1:
            return ModelResponse(parts=[call('load_skill', name='f')])
        return ModelResponse(parts=[TextPart('parent done')])

    fields = {'context': 'fork', **metadata}
    if folder is None:
        skills = Skills(skills=[Skill('f', 'Clean the machine up.', 'Clean up the disk.', metadata=fields)])
    else:
        write_skill(folder, 'f', 'Clean up the disk.', description='Clean the machine up.', fields=fields)
        skills = Skills(folder)
    return Agent(FunctionModel(respond), tools=[Tool(wipe, requires_approval=True)], capabilities=[skills])


@pytest.mark.parametrize('allowed', ['wipe', 'wipe fetch', 'Bash(*) wipe'])
def test_a_fork_allowed_a_tool_that_needs_approval_is_refused_not_raised(tmp_path: Path, allowed: str) -> None:
    """An untrusted skill's `allowed-tools` cannot approve the agent's tools: the call is refused inside the fork,
    and the sub-agent and the parent run go on (the sub-agent used to have no way to stop for approval: `UserError`
    out of the parent run)."""
    wiped.clear()
    result = fork_agent({'allowed-tools': allowed}, tmp_path / 'lib').run_sync('tidy up')
    [reply] = tool_returns(result.all_messages(), 'load_skill')
    assert result.output == 'parent done'
    assert wiped == []  # never run without an approval
    assert reply.startswith("The skill 'f' ran in a sub-agent. Its result:\n\ncleaned; wipe said: Not run:")
    assert 'needs approval, and no one could give it' in reply
    case(
        "The model's calls",
        f'a forked folder skill whose allowed-tools ({allowed!r}) names a tool needing approval',
        reply[:200],
    )


def test_a_trusted_forks_allowed_tools_approve_the_call() -> None:
    wiped.clear()
    result = fork_agent({'allowed-tools': 'wipe'}).run_sync('tidy up')
    [reply] = tool_returns(result.all_messages(), 'load_skill')
    assert wiped == ['wiped']
    assert reply.endswith('cleaned; wipe said: wiped')


@pytest.mark.parametrize(
    ('model', 'said'),
    [
        ('nosuch:model', 'Unknown model: nosuch:model'),
        (':', 'Unknown model: :'),
        ('openai:gpt-5.2', 'OPENAI_API_KEY'),
        ('anthropic:claude-sonnet-4-5', 'ANTHROPIC_API_KEY'),
    ],
)
def test_a_fork_whose_model_cannot_be_built_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, said: str
) -> None:
    monkeypatch.delenv('OPENAI_API_KEY', raising=False)
    monkeypatch.delenv('ANTHROPIC_API_KEY', raising=False)
    reply = ''
    for folder in (None, tmp_path / 'lib') if model != ':' else (None,):  # a bare `:` is no YAML value
        with pytest.warns(SkillWarning, match=f"skill 'f': its sub-agent model {model!r} cannot be used"):
            result = fork_agent({'model': model}, folder).run_sync('tidy up')
        [reply] = tool_returns(result.all_messages(), 'load_skill')
        assert result.output == 'parent done'
        assert reply.startswith(f"The skill 'f' runs as a sub-agent on the model {model!r}, which cannot be used here")
        assert said in reply
        assert 'It did not run.' in reply
    case("The model's calls", f'a forked skill whose model {model!r} cannot be built', reply[:160])


def test_a_fork_with_a_usable_model_still_runs() -> None:
    result = fork_agent({'model': 'inherit', 'allowed-tools': 'fetch'}).run_sync('tidy up')
    [reply] = tool_returns(result.all_messages(), 'load_skill')
    assert reply.startswith("The skill 'f' ran in a sub-agent. Its result:\n\ncleaned")
