"""`MCPSkillSource` against FastMCP's own Skills-extension server (`mcp_skills_server.py`), over stdio and streamable
HTTP on 127.0.0.1, in real agent runs: list, search, load, read a file, run a script, a wrong digest refused, a
server killed mid-conversation, a server down at the start read once it answers."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastmcp.client.transports import ClientTransport
from pydantic_ai import Agent
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import MCPSkillSource, SkillError, Skills, SkillWarning
from skillshelf.ranking.cache import CACHE_MIN_SKILLS

from mcp_servers import CHECKLIST, http_server, kill_pid_in, stdio_server, write_served_skills
from scripted_model import NO_CATALOG, Script, call, tool_returns
from skill_files import write_skill


@pytest.fixture
def served(tmp_path: Path) -> Path:
    return write_served_skills(tmp_path / 'served')


@contextmanager
def server(kind: str, skills: Path, *arguments: str) -> Iterator[ClientTransport | str]:
    """A server of `skills` of `kind` (`stdio`, started by the transport; `http`, started here)."""
    if kind == 'stdio':
        yield stdio_server(skills, *arguments)
    else:
        with http_server(skills, *arguments) as running:
            yield running.url


@contextmanager
def source(target: ClientTransport | str, **options: Any) -> Iterator[MCPSkillSource]:
    mcp = MCPSkillSource(target, **options)
    try:
        yield mcp
    finally:
        mcp.close()


@pytest.mark.parametrize('kind', ['stdio', 'http'])
def test_an_agent_searches_loads_reads_and_runs_mcp_skills(kind: str, served: Path, tmp_path: Path) -> None:
    with server(kind, served) as target, source(target) as mcp:
        skills = Skills(sources=[mcp], scripts=True, script_approval=False, catalog_budget=NO_CATALOG)
        assert sorted(skills.library.skills) == ['deploy', 'greet', 'review']
        script = Script(
            [
                [call('search_skills', query='say hello and welcome someone')],
                [call('load_skill', name='greet')],
                [call('read_skill_resource', name='greet', path='reference/phrases.md')],
                [call('run_skill_script', name='greet', script='scripts/hello.py', args=['Ada'])],
            ]
        )
        (tmp_path / 'work').mkdir()
        workspace = LocalWorkspace(tmp_path / 'work')
        messages = Agent(script.model(), capabilities=[workspace, skills]).run_sync('greet Ada').all_messages()
    [found] = tool_returns(messages, 'search_skills')
    assert found[0].name == 'greet'
    [loaded] = tool_returns(messages, 'load_skill')
    assert 'Greet the user by name.' in loaded
    assert tool_returns(messages, 'read_skill_resource') == ['Hello!\nWelcome aboard!\n']
    [ran] = tool_returns(messages, 'run_skill_script')
    assert 'hello from Ada' in ran
    assert (tmp_path / 'work' / '.skillshelf' / 'skills' / 'greet' / 'scripts' / 'hello.py').read_bytes() == (
        served / 'greet' / 'scripts' / 'hello.py'
    ).read_bytes()


def test_the_catalog_and_search_cost_no_fetch_and_each_skill_carries_its_digests(served: Path) -> None:
    with server('stdio', served) as target, source(target) as mcp:
        skills = Skills(sources=[mcp], catalog_budget=NO_CATALOG)
        [hit] = skills.library.search('pull request review', limit=1)
        assert hit.name == 'review'
        content = skills.library.skills['review'].content
        assert content.instructions(200) == ''  # searched by its metadata: nothing was fetched
        digests = mcp.digests()
    assert sorted(digests['review']) == ['SKILL.md', 'checklist.md']
    assert digests['review']['checklist.md'].startswith('sha256:')


def test_the_first_search_beside_a_cached_folder_library_fetches_no_mcp_skill(
    served: Path, tmp_path: Path, cache_dir: Path
) -> None:
    for number in range(CACHE_MIN_SKILLS):  # enough folder skills for the index to be cached, keyed on every skill
        write_skill(tmp_path / 'lib', f'tool-{number:03}', f'Use tool {number}.', description=f'Tool number {number}.')
    with server('stdio', served) as target, source(target) as mcp:
        skills = Skills(directories=[tmp_path / 'lib'], sources=[mcp], catalog_budget=NO_CATALOG)
        [hit] = skills.library.search('pull request review', limit=1)
        assert hit.name == 'review'
        assert skills.library.index_cache_path() is not None
        assert skills.library.skills['review'].content.instructions(200) == ''  # the cache key fetched nothing


@pytest.mark.parametrize('kind', ['stdio', 'http'])
def test_a_skill_listed_with_a_wrong_digest_is_refused_and_the_others_load(kind: str, served: Path) -> None:
    with server(kind, served, '--wrong-digest', 'greet') as target, source(target) as mcp:
        skills = Skills(sources=[mcp])
        script = Script([[call('load_skill', name='greet')], [call('load_skill', name='review')]])
        with pytest.warns(SkillWarning, match=r'greet/SKILL\.md is refused: .*do not match their digests'):
            messages = Agent(script.model(), capabilities=[skills]).run_sync('review it').all_messages()
    refused, loaded = tool_returns(messages, 'load_skill')
    assert "The skill 'greet' can no longer be read" in refused
    assert 'do not match what the server listed' in refused
    assert 'Review the change against `checklist.md`' in loaded


@pytest.mark.parametrize('kind', ['stdio', 'http'])
def test_a_server_killed_mid_conversation_answers_with_a_message_and_the_run_completes(
    kind: str, served: Path, tmp_path: Path
) -> None:
    pid = tmp_path / 'server.pid'
    with server(kind, served, '--pid', str(pid)) as target, source(target, retry_after=3600) as mcp:
        skills = Skills(sources=[mcp])
        steps = [
            [call('load_skill', name='review')],
            [call('load_skill', name='greet'), call('read_skill_resource', name='review', path='checklist.md')],
            [TextPart('done')],
        ]

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            step = sum(isinstance(message, ModelResponse) for message in messages)
            if step == 1:
                kill_pid_in(pid)  # after the first load, before the next calls
            return ModelResponse(parts=list(steps[step]))

        result = Agent(FunctionModel(respond), capabilities=[skills]).run_sync('review and greet')
    messages = result.all_messages()
    assert result.output == 'done'
    first, second = tool_returns(messages, 'load_skill')
    assert 'Review the change' in first
    assert second == (
        "The skill 'greet' can no longer be read (its MCP server cannot be reached just now; try again later). "
        'Use another skill or carry on without it.'
    )
    assert tool_returns(messages, 'read_skill_resource') == [CHECKLIST]  # fetched before the server died


def test_a_server_killed_over_stdio_is_started_again_on_a_later_use(served: Path, tmp_path: Path) -> None:
    pid = tmp_path / 'server.pid'
    with source(stdio_server(served, '--pid', str(pid)), retry_after=0) as mcp:
        skills = Skills(sources=[mcp])
        first = pid.read_text(encoding='utf-8')
        kill_pid_in(pid)
        script = Script([[call('load_skill', name='greet')], [call('load_skill', name='greet')]])
        messages = Agent(script.model(), capabilities=[skills]).run_sync('greet').all_messages()
        # The first use finds the server down (the content scan's fetch), and with `retry_after=0` the load's own
        # fetch starts it again; a verdict is kept only once the scan could read the skill.
        loaded, again = tool_returns(messages, 'load_skill')
        assert 'Greet the user by name.' in loaded
        assert 'already loaded' in again
        assert pid.read_text(encoding='utf-8') != first


def test_a_server_down_at_the_start_is_read_once_it_answers(served: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on, until the server below takes it
        probe.bind(('127.0.0.1', 0))
        port = probe.getsockname()[1]
    with source(f'http://127.0.0.1:{port}/mcp', retry_after=0) as mcp:
        with pytest.warns(
            SkillWarning, match='its MCP server cannot be reached .* its skills are read once it answers'
        ):
            skills = Skills(sources=[mcp])
        assert skills.library.skills == {}
        with http_server(served, '--port', str(port)):
            script = Script([[call('load_skill', name='deploy')]])
            messages = Agent(script.model(), capabilities=[skills]).run_sync('deploy').all_messages()
    assert sorted(skills.library.skills) == ['deploy', 'greet', 'review']
    [loaded] = tool_returns(messages, 'load_skill')
    assert 'Deploy with care.' in loaded


def test_an_agent_spec_names_an_mcp_server(served: Path) -> None:
    with http_server(served) as running:
        sources = [{'mcp': running.url, 'namespace': 'team'}]
        spec = {'model': 'test', 'capabilities': [{'Skills': {'sources': sources}}]}
        script = Script([[call('load_skill', name='deploy')]])
        agent = Agent.from_spec(spec, custom_capability_types=[Skills], model=script.model())
        messages = agent.run_sync('deploy').all_messages()
    [loaded] = tool_returns(messages, 'load_skill')
    assert 'Deploy with care.' in loaded
    with pytest.raises(SkillError, match=r"a 'mcp' source takes namespace, not ref"):
        Skills[None](sources=[{'mcp': running.url, 'ref': 'main'}])
