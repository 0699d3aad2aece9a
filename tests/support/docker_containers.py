"""One test's containers in harness's `DockerSandbox`: made from a locally built image with no network (`--network
none`), labelled for the test so that it removes exactly its own at the end, and their files copied out as an
application reads a run's results (`docker cp`)."""

from __future__ import annotations

import importlib
import secrets
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ('Containers',)

LABEL = 'skillshelf.test'


@dataclass
class Containers:
    """How one test makes, reads and removes its containers."""

    harness: Any
    """The `pydantic_ai_harness` package."""
    image: str
    """The image's tag (`document_image`); present in the daemon, so nothing is pulled."""
    copies: Path
    """Where `copy_out` puts a container's workspace on this machine."""
    test: str = field(default_factory=lambda: secrets.token_hex(6))
    """This test's value of the `skillshelf.test` label."""

    @property
    def docker_args(self) -> list[str]:
        return ['--label', f'{LABEL}={self.test}']

    def capability(self) -> Any:
        """harness's `DockerSandbox`, as an application sets it up: each run with no ref gets a new container."""
        return self.harness.DockerSandbox(image=self.image, allow_internet_access=False, docker_args=self.docker_args)

    def backend(self) -> Any:
        """A container's workspace made before the conversation's first run (to put the user's files in)."""
        backends = importlib.import_module('pydantic_ai_harness.docker_sandbox')
        return backends.DockerSandboxBackend(
            image=self.image, allow_internet_access=False, docker_args=self.docker_args
        )

    def copy_out(self, container: str, working_dir: str = '/workspace') -> Path:
        """A copy on this machine of the container's working folder."""
        target = self.copies / container
        target.mkdir(parents=True)
        docker(['cp', f'{container}:{working_dir}/.', str(target)])
        return target

    def names(self) -> list[str]:
        """The names of this test's containers, running or not."""
        listed = docker(['ps', '--all', '--filter', f'label={LABEL}={self.test}', '--format', '{{.Names}}'])
        return listed.split()

    def network_modes(self) -> set[str]:
        """The network mode of each of this test's containers (`none`: no interface but loopback)."""
        names = self.names()
        if not names:
            return set()
        return set(docker(['inspect', '--format', '{{.HostConfig.NetworkMode}}', *names]).split())

    def remove(self) -> None:
        """Remove this test's containers and their anonymous volumes."""
        names = self.names()
        if names:
            docker(['rm', '--force', '--volumes', *names])


def docker(args: list[str]) -> str:
    """What `docker ARGS` prints, failing with its error."""
    done = subprocess.run(['docker', *args], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f'docker {" ".join(args)} failed: {done.stderr.strip()}'
    return done.stdout
