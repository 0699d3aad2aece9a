"""What of the host's `/etc` the sandbox shows: the public configuration installed programs read
(`skillshelf.sandbox.system`), read-only, and never its secrets; and npm's global packages on `NODE_PATH`."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

import anyio
from pydantic_ai.workspaces import Workspace

from skillshelf import SkillSandbox
from skillshelf.sandbox import SandboxWorkspace
from skillshelf.sandbox.system import SYSTEM_CONFIGURATION, system_configuration
from skillshelf.scripts.node import global_node_modules

from sandbox_support import needs_bwrap

SECRETS = (
    'shadow',
    'gshadow',
    'sudoers',
    'sudoers.d',
    'ssh',
    'ssl/private',
    'environment',
    'mysql',
    'maven',
    'postgresql',
    'machine-id',
    'krb5.keytab',
)
"""Paths under `/etc` that hold secrets (or what identifies this machine) on a typical host."""
SANDBOX_OWN = ('hosts', 'passwd', 'group', 'resolv.conf')


def test_only_the_allowlisted_configuration_of_an_etc_is_chosen(tmp_path: Path) -> None:
    etc = tmp_path / 'etc'
    for folder in ('libreoffice/registry', 'fonts/conf.d', 'java-17-openjdk', 'ssl/certs', 'ssl/private', 'ssh'):
        (etc / folder).mkdir(parents=True)
    for file in ('shadow', 'sudoers', 'environment', 'ssl/openssl.cnf', 'ssl/private/key.pem', 'mime.types'):
        (etc / file).write_text('x', encoding='utf-8')
    (etc / 'mysql').mkdir()
    (etc / 'mysql' / 'debian.cnf').write_text('password = secret', encoding='utf-8')
    (etc / 'alternatives').mkdir()
    (etc / 'alternatives' / 'awk').symlink_to('/usr/bin/mawk')
    (etc / 'localtime').symlink_to(tmp_path / 'nowhere')  # dangling: nothing to show

    chosen = [os.path.relpath(path, etc) for path in system_configuration(str(etc))]

    assert chosen == [
        'alternatives',
        'fonts',
        'java-17-openjdk',
        'libreoffice',
        'mime.types',
        'ssl/certs',
        'ssl/openssl.cnf',
    ]


@needs_bwrap
def test_a_sandboxed_command_sees_the_hosts_public_configuration_read_only_and_no_secret(tmp_path: Path) -> None:
    probe = (
        'cd /etc && find . -mindepth 1 -maxdepth 3 | sort; echo ---; '
        'for path in '
        + ' '.join(f'/etc/{secret}' for secret in SECRETS)
        + '; do [ -e "$path" ] && echo "$path"; done; '
        'echo ---; touch /etc/fonts/planted 2>&1 | grep -o "Read-only file system"; '
        'echo ---; echo "$NODE_PATH"; awk "BEGIN { print 6 * 7 }"'
    )

    async def run() -> str:
        backend = SandboxWorkspace(SkillSandbox(tmp_path / 'workspaces'), conversation='etc')
        result = await Workspace(backend).run(probe, shell=True, timeout=60)
        assert result.exit_code == 0, result.stderr
        return result.stdout

    listing, secrets, refused, rest = anyio.run(run).split('---\n')
    seen = [line.removeprefix('./') for line in listing.splitlines()]
    shown = [path for path in seen if not path.startswith(SANDBOX_OWN)]
    host = [os.path.relpath(path, '/etc') for path in system_configuration()]
    for path in shown:  # each is shown configuration, or inside it
        assert any(path == top or path.startswith(top + '/') or fnmatch.fnmatch(top, path + '/*') for top in host), path
    assert all(any(fnmatch.fnmatch(top, pattern) for pattern in SYSTEM_CONFIGURATION) for top in host)
    assert [top for top in host if top in seen] == host
    assert secrets == ''
    if os.path.isdir('/etc/fonts'):
        assert refused == 'Read-only file system\n'
    node_path, product = rest.splitlines()
    assert node_path == (global_node_modules() or '')
    if os.path.islink('/usr/bin/awk') and os.readlink('/usr/bin/awk').startswith('/etc/alternatives/'):
        assert product == '42'  # a program reached through /etc/alternatives runs
