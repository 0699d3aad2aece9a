"""`skillshelf serve-mcp` read by fastmcp's own `Client` (the Skills extension's `list_skills` and `read_skill`), over
stdio and streamable HTTP on 127.0.0.1: the names, bodies and files match the folders byte for byte; and by
`MCPSkillSource` in an agent run."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from fastmcp.skills import SkillsClientExtension
from pydantic_ai import Agent
from typer.testing import CliRunner

from skillshelf import LibraryOptions, MCPSkillSource, SkillLibrary, Skills
from skillshelf.authoring.cli.app import app
from skillshelf.mcp import library_server
from skillshelf.registry import SkillRegistry

from mcp_servers import write_served_skills
from scripted_model import Script, call, tool_returns
from skill_files import write_skill

SERVE = [sys.executable, '-m', 'skillshelf', 'serve-mcp']


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = write_served_skills(tmp_path / 'library')
    write_skill(
        root,
        'assets',
        'Use the logo and the legacy notes.',
        description='Brand assets, a logo and notes in Latin-1.',
        files={
            'logo.png': b'\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\x00',
            'notes/legacy.txt': 'café\n'.encode('latin-1'),
        },
    )
    return root


def on_disk(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob('*') if path.is_file()}


def read_everything(client: Client[Any]) -> dict[str, dict[str, bytes]]:
    async def read() -> dict[str, dict[str, bytes]]:
        async with client:
            entries = await client.list_skills()
            return {entry.frontmatter.name: dict((await client.read_skill(entry.uri)).files) for entry in entries}

    return anyio.run(read)


def assert_served_as_on_disk(served: dict[str, dict[str, bytes]], library: Path) -> None:
    assert sorted(served) == ['assets', 'deploy', 'greet', 'review']
    for name, files in served.items():
        assert files == on_disk(library / name), name


def test_a_library_served_over_stdio_reads_byte_for_byte_in_fastmcps_client(library: Path) -> None:
    transport = StdioTransport(SERVE[0], [*SERVE[1:], str(library)])
    served = read_everything(Client(transport, extensions=[SkillsClientExtension()]))
    assert_served_as_on_disk(served, library)


@contextmanager
def serving_http(library: Path) -> Iterator[str]:
    """`serve-mcp --http 127.0.0.1:0`, and the URL it says it serves at (it listens before it says so)."""
    process = subprocess.Popen([*SERVE, str(library), '--http', '127.0.0.1:0'], stderr=subprocess.PIPE, text=True)
    draining: threading.Thread | None = None
    try:
        assert process.stderr is not None
        said = next((line for line in iter(process.stderr.readline, '') if line.startswith('serving ')), '')
        assert said.startswith('serving 4 skills at http://127.0.0.1:'), 'serve-mcp ended without serving'
        draining = threading.Thread(target=process.stderr.read, daemon=True)  # its later logs never fill the pipe
        draining.start()
        yield said.split(' at ')[1].strip()
    finally:
        process.kill()
        process.wait()
        if draining is not None:
            draining.join()
        if process.stderr is not None:
            process.stderr.close()


def test_a_library_served_over_http_reads_byte_for_byte_and_loads_in_an_agent(library: Path) -> None:
    with serving_http(library) as url:
        served = read_everything(Client(url, extensions=[SkillsClientExtension()]))
        source = MCPSkillSource(url)
        try:
            script = Script(
                [[call('load_skill', name='review'), call('read_skill_resource', name='review', path='checklist.md')]]
            )
            messages = Agent(script.model(), capabilities=[Skills(sources=[source])]).run_sync('review').all_messages()
        finally:
            source.close()
    assert_served_as_on_disk(served, library)
    [loaded] = tool_returns(messages, 'load_skill')
    assert 'Review the change against `checklist.md`' in loaded
    assert tool_returns(messages, 'read_skill_resource') == [(library / 'review' / 'checklist.md').read_text()]


def test_serve_mcp_refuses_an_address_it_cannot_use(library: Path) -> None:
    result = CliRunner().invoke(app, ['serve-mcp', str(library), '--http', 'localhost'])
    assert result.exit_code == 1
    assert '--http takes HOST:PORT' in result.output


def test_serve_mcp_refuses_an_empty_library(tmp_path: Path) -> None:
    (tmp_path / 'empty').mkdir()
    result = CliRunner().invoke(app, ['serve-mcp', str(tmp_path / 'empty')])
    assert result.exit_code == 1
    assert 'empty' in result.output


def test_a_served_library_serves_a_skill_added_to_its_folders_from_the_next_request(library: Path) -> None:
    server = library_server(SkillLibrary.build(options=LibraryOptions(directories=[library])))
    source = MCPSkillSource(server)
    try:
        assert sorted(Skills(sources=[source]).library.skills) == ['assets', 'deploy', 'greet', 'review']
        write_skill(library, 'triage', 'Sort the incoming issues.', description='Triage new issues.')
        assert source.refresh() is True
        assert 'triage' in source.digests()
    finally:
        source.close()


def test_a_registry_is_served_with_a_skill_md_written_from_its_fields(tmp_path: Path) -> None:
    registry = SkillRegistry(f'sqlite:///{tmp_path / "skills.db"}')
    registry.publish(
        write_skill(tmp_path / 'src', 'notes', 'Take notes.', fields={'license': 'MIT'}, files={'a.txt': 'x\n'})
    )
    server = library_server(SkillLibrary.build(options=LibraryOptions(sources=[registry])))
    [skill] = read_everything(Client(server, extensions=[SkillsClientExtension()])).items()
    name, files = skill
    assert name == 'notes'
    assert files['a.txt'] == b'x\n'
    assert (
        files['SKILL.md'].decode().startswith('---\nname: notes\ndescription: Handles notes work.\nlicense: MIT\n---\n')
    )
    assert files['SKILL.md'].decode().endswith('Take notes.')
