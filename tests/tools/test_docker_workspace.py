"""Skills' scripts in harness's `DockerSandbox` run with no network: a container made for the document workflow tests
(`place` = `docker`, the image built here from Debian packages) has only its loopback, and reaches nothing else.
Runs where harness is installed (CI's `.venv-harness`); the daemon and image come from `docker_daemon` and
`document_image`."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent

from skillshelf import Skills

from docker_containers import Containers, docker
from document_places import harness
from scripted_model import Script, call, tool_returns

pytestmark = pytest.mark.filterwarnings('ignore:run_skill_script runs Python scripts with the `python3`')

PROBE = """import errno, os, socket, sys
print('interfaces:', ' '.join(sorted(os.listdir('/sys/class/net'))))
for address in sys.argv[1:]:
    try:
        socket.create_connection((address, 80), timeout=10).close()
        print(address, 'reached')
    except OSError as error:
        print(address, errno.errorcode.get(error.errno, str(error)))
with socket.create_server(('127.0.0.1', 0)) as server:
    socket.create_connection(server.getsockname(), timeout=10).close()
    print('loopback reached')
"""

UNROUTABLE = '192.0.2.1'
"""TEST-NET-1 (RFC 5737): no packet to it would reach anyone even if the container had a network."""


def this_machines_address() -> str:
    """The address this machine sends from (a UDP socket's `connect` picks the route and sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((UNROUTABLE, 9))
        return probe.getsockname()[0]


@pytest.fixture
def package() -> Any:
    """pydantic-ai-harness, checked before the daemon and image fixtures run (where it is missing, neither does)."""
    return harness()


@pytest.fixture
def image(package: Any, request: pytest.FixtureRequest) -> str:
    """The document workflows' image (`document_image`), in the session's daemon."""
    del package
    return request.getfixturevalue('document_image')


def test_a_container_has_only_its_loopback_and_reaches_nothing_else(tmp_path: Path, package: Any, image: str) -> None:
    library = tmp_path / 'lib'
    (library / 'probe' / 'scripts').mkdir(parents=True)
    (library / 'probe' / 'SKILL.md').write_text(
        '---\nname: probe\ndescription: Probe.\n---\nRun it.\n', encoding='utf-8'
    )
    (library / 'probe' / 'scripts' / 'probe.py').write_text(PROBE, encoding='utf-8')
    host = this_machines_address()
    containers = Containers(package, image, copies=tmp_path / 'copied')
    model = Script(
        [
            [call('load_skill', name='probe')],
            [call('run_skill_script', name='probe', script='scripts/probe.py', args=[UNROUTABLE, host])],
        ]
    )
    agent = Agent(model.model(), capabilities=[containers.capability(), Skills(library, scripts=True)])
    try:
        result = agent.run_sync('Probe the network.')
        assert tool_returns(result.all_messages(), 'run_skill_script') == [
            'scripts/probe.py exited with code 0.\nOutput:\ninterfaces: lo\n'
            f'{UNROUTABLE} ENETUNREACH\n{host} ENETUNREACH\nloopback reached'
        ]
        ref = result.response.workspace_ref
        assert ref is not None
        assert containers.names() == [ref.id]
        assert docker(['inspect', '--format', '{{.HostConfig.NetworkMode}}', ref.id]).strip() == 'none'
    finally:
        containers.remove()
    assert containers.names() == []


def test_the_image_was_built_here_and_the_daemon_has_no_bridge(image: str, request: pytest.FixtureRequest) -> None:
    """Nothing was pulled (an image from a registry has a digest there); a daemon the session started has no
    `bridge` network for a container to join."""
    assert json.loads(docker(['image', 'inspect', '--format', '{{json .RepoDigests}}', image])) == []
    if request.getfixturevalue('docker_host') is None:
        pytest.skip('the daemon was already running; the session did not start it')
    assert sorted(docker(['network', 'ls', '--format', '{{.Name}}']).split()) == ['host', 'none']
