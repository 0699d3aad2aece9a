"""The skills' environment as a container image recipe (`skillshelf env DIR --dockerfile FILE`), for a sandbox that
runs commands in a container (pydantic-ai-harness's `DockerSandbox`).

It starts `FROM` a Debian-based image already on the machine (`--base`; `docker build` pulls nothing it has), installs
the Debian packages of the programs the skills run, makes the same environment `--venv` makes at `IMAGE_FOLDER`
(Python packages in a virtual environment, Node packages under its `node/`), and puts it first on `PATH` and
`NODE_PATH`, so the image's `python3` and `node` are the environment's. Name the folder with
`Skills(environment=IMAGE_FOLDER)` where skillshelf can see it; in a container it is the image's own `PATH`.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from ...scripts.environment import NODE_FOLDER
from .plan import EnvironmentPlan, names

__all__ = ('DEFAULT_BASE', 'IMAGE_FOLDER', 'dockerfile')

IMAGE_FOLDER = '/opt/skills-env'
"""Where the image holds the skills' environment."""
DEFAULT_BASE = 'debian:bookworm-slim'
"""The base image when `--base` is not given; build on a local one (`docker images`) so nothing is pulled."""
_PIP = f'{IMAGE_FOLDER}/bin/python -m pip install --no-cache-dir --disable-pip-version-check'
_NPM = f'npm install --prefix {IMAGE_FOLDER}/{NODE_FOLDER} --no-audit --no-fund --no-update-notifier'


def dockerfile(plan: EnvironmentPlan, base: str, command: Sequence[str]) -> str:
    """The Dockerfile of `plan` on the image `base`; `command` is the command line that wrote it, for its header."""
    debian = ['python3', 'python3-venv', *plan.debian]
    lines = [
        f"# The environment these skills' scripts need, written by `{shlex.join(command)}`.",
        '# Build it on a local base image (nothing is pulled): docker build -t skills-env - < FILE',
        f'# Scripts then run on {IMAGE_FOLDER}/bin/python, with its Node packages on NODE_PATH.',
        f'FROM {base}',
        'ENV DEBIAN_FRONTEND=noninteractive',
        'RUN apt-get update \\',
        f' && apt-get install -y --no-install-recommends {" ".join(dict.fromkeys(debian))} \\',
        ' && rm -rf /var/lib/apt/lists/*',
        f'RUN python3 -m venv {IMAGE_FOLDER}',
    ]
    if plan.python:
        lines.append(f'RUN {_PIP} {shlex.join(names(plan.python))}')
    if plan.node:
        lines.append(f'RUN mkdir -p {IMAGE_FOLDER}/{NODE_FOLDER} && {_NPM} {shlex.join(names(plan.node))}')
    lines.append(
        f'ENV PATH={IMAGE_FOLDER}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin '
        f'NODE_PATH={IMAGE_FOLDER}/{NODE_FOLDER}/node_modules'
    )
    for program in plan.unknown_programs:
        lines.append(f'# Not installed (no known Debian package): {program.name}, for {", ".join(program.skills)}')
    for sentence in plan.unmet:
        lines.append(f'# Not met: {sentence}')
    return '\n'.join(lines) + '\n'
