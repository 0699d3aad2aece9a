"""A throwaway PostgreSQL cluster for the registry tests: Debian's `initdb` and `pg_ctl` under a temporary directory,
listening on a unix socket only, stopped and removed at the end. As root the server runs as `postgres` (or
`nobody`), since PostgreSQL refuses to run as root. Tests are skipped, with the reason, only when no server starts."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ('postgres_database', 'postgres_url', 'registry_url')


def _binaries() -> Path | None:
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'), key=lambda path: int(path.split('/')[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which('initdb')
    return Path(initdb).resolve().parent if initdb else None


def _free_port() -> int:
    """A port number for the socket's name (`.s.PGSQL.<port>`); nothing listens on TCP."""
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


@pytest.fixture(scope='session')
def postgres_url() -> Iterator[str]:
    """An SQLAlchemy URL (psycopg) of a fresh PostgreSQL server's `postgres` database."""
    binaries = _binaries()
    if binaries is None:
        pytest.skip('PostgreSQL is not installed (no initdb; .ci/run installs the `postgresql` package)')
    base = Path(tempfile.mkdtemp(prefix='skillshelf-pg-'))
    run_as: list[str] = []
    if os.geteuid() == 0:
        user = next((name for name in ('postgres', 'nobody') if _has_user(name)), None)
        if user is None or shutil.which('runuser') is None:
            shutil.rmtree(base)
            pytest.skip(
                'running as root with no unprivileged user (postgres, nobody) or no runuser to start PostgreSQL'
            )
        entry = pwd.getpwnam(user)
        os.chown(base, entry.pw_uid, entry.pw_gid)
        run_as = ['runuser', '-u', user, '--']
    data, port = base / 'data', _free_port()
    server_options = f"-p {port} -k {base} -c listen_addresses='' -c fsync=off -c max_connections=50"
    commands = [
        [str(binaries / 'initdb'), '-D', str(data), '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync'],
        [
            str(binaries / 'pg_ctl'),
            '-D',
            str(data),
            '-l',
            str(base / 'server.log'),
            '-w',
            '-t',
            '60',
            '-o',
            server_options,
            'start',
        ],
    ]
    for command in commands:
        done = subprocess.run([*run_as, *command], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            log = (base / 'server.log').read_text(errors='replace') if (base / 'server.log').exists() else ''
            shutil.rmtree(base, ignore_errors=True)
            pytest.skip(
                f'PostgreSQL could not be started ({Path(command[0]).name}): {done.stderr.strip()} {log[-500:]}'
            )
    try:
        yield f'postgresql+psycopg://postgres@/postgres?host={base}&port={port}'
    finally:
        stop = [str(binaries / 'pg_ctl'), '-D', str(data), '-m', 'immediate', '-w', 'stop']
        subprocess.run([*run_as, *stop], capture_output=True, check=False)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def postgres_database(postgres_url: str) -> Iterator[str]:
    """An SQLAlchemy URL of a new, empty database on the session's server, dropped after the test."""
    import uuid

    import sqlalchemy as sa

    server = sa.make_url(postgres_url)
    name = f'test_{uuid.uuid4().hex[:12]}'
    admin = sa.create_engine(server, isolation_level='AUTOCOMMIT')
    with admin.connect() as connection:
        connection.execute(sa.text(f'CREATE DATABASE {name}'))
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(sa.text(f'DROP DATABASE {name} WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=['sqlite', 'postgresql'])
def registry_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty registry database, once per engine: a SQLite file, or a new database on the session's PostgreSQL
    server (skipped, with the reason, when no server starts)."""
    if request.param == 'sqlite':
        return f'sqlite:///{tmp_path / "skills.db"}'
    return request.getfixturevalue('postgres_database')


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
