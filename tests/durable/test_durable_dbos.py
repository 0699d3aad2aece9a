"""A durable agent with skills under DBOS, killed mid-run and recovered, with DBOS's system database on SQLite and
on PostgreSQL (a fresh database on the throwaway server of `postgres_server.py`).

The agent runs in its own process (`durable_dbos_app.py`), whose scripted model SIGKILLs it at a chosen request;
a second process lets DBOS recover the workflow. Between the two, a skill folder the run loaded is deleted and
another one is added, so a replay that read the library again would answer differently. In the workspace variant
(`durable_tally.py`) the killed run had run a skill's script in its workspace: the recovered one must continue in
that workspace without running the script again.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from durable_tally import KilledRun, worker_environment, write_tally_skill
from durable_weather import FORK_PROMPT
from repo_paths import REPO, SUPPORT
from sandbox_support import BWRAP_PROBLEM

APP = SUPPORT / 'durable_dbos_app.py'
PACKING = '---\nname: packing\ndescription: What to pack for a trip.\n---\nPack for the forecast.\n'
SURFING = '---\nname: surfing\ndescription: Where the waves are.\n---\nCheck the swell.\n'


@pytest.fixture(params=['sqlite', 'postgresql'])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The SQLAlchemy URL of DBOS's system database: an SQLite file, or a new database on the PostgreSQL server."""
    if request.param == 'sqlite':
        return f'sqlite:///{tmp_path / "dbos.sqlite"}'
    server = sa.make_url(request.getfixturevalue('postgres_url'))
    name = f'dbos_{uuid.uuid4().hex}'
    engine = sa.create_engine(server, isolation_level='AUTOCOMMIT')
    with engine.connect() as connection:
        connection.execute(sa.text(f'CREATE DATABASE {name}'))
    engine.dispose()
    return server.set(database=name).render_as_string(hide_password=False)


def run_app(work: Path, mode: str, database: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(APP), str(work), mode, database],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=APP.parent,
        env=worker_environment(work),
    )


def recorded_status(database: str) -> list[tuple[str, str]]:
    """The status DBOS's own table holds for each workflow, read from the database directly."""
    table = 'workflow_status' if database.startswith('sqlite') else 'dbos.workflow_status'
    engine = sa.create_engine(database)
    try:
        with engine.connect() as connection:
            rows = connection.execute(sa.text(f'SELECT workflow_uuid, status FROM {table}')).all()
            return [(row[0], row[1]) for row in rows]
    finally:
        engine.dispose()


def crash_and_recover(work: Path, kill_at: int, database: str) -> dict[str, Any]:
    """Start the workflow, killed at model request `kill_at`; change the library; recover it."""
    (work / 'skills' / 'packing').mkdir(parents=True)
    (work / 'skills' / 'packing' / 'SKILL.md').write_text(PACKING)
    (work / 'kill_at').write_text(str(kill_at))
    started = run_app(work, 'start', database)
    assert started.returncode == -9, started.stderr  # killed by SIGKILL, at the request it was told
    assert recorded_status(database) == [('trip-1', 'PENDING')]
    assert (work / 'skill_reads.log').read_text().splitlines() == ['SKILL.md']  # packing's load, in the first run
    (work / 'skill_reads.log').unlink()
    shutil.rmtree(work / 'skills' / 'packing')
    (work / 'skills' / 'surfing').mkdir()
    (work / 'skills' / 'surfing' / 'SKILL.md').write_text(SURFING)
    recovered = run_app(work, 'recover', database)
    assert recovered.returncode == 0, recovered.stderr
    assert recorded_status(database) == [('trip-1', 'SUCCESS')]
    return json.loads(recovered.stdout.strip().splitlines()[-1])


def forecast_runs(work: Path) -> list[str]:
    log = work / 'forecast.log'
    return log.read_text().splitlines() if log.exists() else []


LOADED_PACKING = "Loaded skill 'packing'.\n\nPack for the forecast."


def test_killed_after_load_skill_recovers_with_the_skills_loaded_and_calls_the_tool_once(
    tmp_path: Path, database: str
) -> None:
    result = crash_and_recover(
        tmp_path, kill_at=2, database=database
    )  # after both `load_skill` steps, before the model asks for it

    assert result['output'] == ['Pack light: Lisbon is sunny.']
    first_live = result['seen'][0]
    assert first_live['request'] == 2  # request 1 and both loads were replayed from the record
    assert 'forecast' in first_live['tools']  # weather is loaded in the recovered run
    # The replayed `load_skill` answers as it did before the crash, although the folder is gone now.
    assert ['load_skill', LOADED_PACKING] in first_live['returns']
    assert not (tmp_path / 'skill_reads.log').exists()  # no SKILL.md read while recovering
    assert result['steps'] == [
        'trip__capability__skillshelf.refresh_library',
        'trip__model.request',
        'trip.skillshelf.load_skill',
        'trip.skillshelf.load_skill',
        'trip__model.request',
        'trip.skillshelf.forecast',
        'trip__model.request',
    ]
    assert len(forecast_runs(tmp_path)) == result['steps'].count('trip.skillshelf.forecast') == 1


def test_killed_after_the_skill_tool_recovers_without_running_it_again(tmp_path: Path, database: str) -> None:
    result = crash_and_recover(
        tmp_path, kill_at=3, database=database
    )  # after the `forecast` step, before the final answer

    assert result['output'] == ['Pack light: Lisbon is sunny.']
    assert [seen['request'] for seen in result['seen']] == [3]  # everything before was replayed
    returns = result['seen'][0]['returns']
    assert ['forecast', 'Lisbon: sunny, 21 °C'] in returns
    assert ['load_skill', LOADED_PACKING] in returns
    assert not (tmp_path / 'skill_reads.log').exists()
    runs = forecast_runs(tmp_path)
    assert len(runs) == result['steps'].count('trip.skillshelf.forecast') == 1
    assert runs[0].split()[0] != str(result['pid'])  # it ran in the killed process, never in the recovering one


def test_a_users_slash_load_is_replayed_as_recorded_though_the_skill_was_removed(tmp_path: Path, database: str) -> None:
    (tmp_path / 'prompt').write_text('/packing for Lisbon')
    # Request 1 is the user's load in the history; killed at 3: after the model loaded weather, before the forecast.
    result = crash_and_recover(tmp_path, kill_at=3, database=database)

    assert result['output'] == ['Pack light: Lisbon is sunny.']
    first_live = result['seen'][0]
    assert first_live['request'] == 3
    assert 'forecast' in first_live['tools']  # the model's load of weather was replayed too
    # The user's load answers as it did before the crash, though packing's folder is gone: its reply is a recorded
    # step, not a read of the library at recovery (which would find no such skill and drop the load).
    reply = "Loaded skill 'packing'.\n\nPack for the forecast.\n\nARGUMENTS: for Lisbon"
    assert first_live['returns'][0] == ['load_skill', reply]
    assert not (tmp_path / 'skill_reads.log').exists()
    assert result['steps'] == [
        'trip__capability__skillshelf.refresh_library',
        'trip__capability__skillshelf.user_load',
        'trip__model.request',
        'trip.skillshelf.load_skill',
        'trip__model.request',
        'trip.skillshelf.forecast',
        'trip__model.request',
    ]
    assert len(forecast_runs(tmp_path)) == 1


def test_example_records_the_library_check_the_load_and_the_tool_as_steps() -> None:
    completed = subprocess.run(
        [sys.executable, str(REPO / 'examples' / 'durable_dbos.py')],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd='/',
    )
    assert completed.stdout.splitlines() == [
        'answer: Lisbon: sunny, 21-22 °C.',
        'steps recorded:',
        '  1. forecaster__capability__skillshelf.refresh_library',
        '  2. forecaster__model.request',
        '  3. forecaster.skillshelf.load_skill',
        '  4. forecaster__model.request',
        '  5. forecaster.skillshelf.get_forecast',
        '  6. forecaster__model.request',
        'again: Lisbon: sunny, 21-22 °C.',
        'model calls the second time: 0',
    ]


@pytest.mark.parametrize(
    ('variant', 'kill_at'),
    [
        ('sandbox', 3),  # after the script's step, before the next model request
        ('sandbox', 2),  # after load_skill put the skill's files in the workspace, before the script ran
        ('local', 3),
    ],
)
def test_a_run_killed_around_a_script_continues_in_its_workspace_without_running_the_script_again(
    tmp_path: Path, database: str, variant: str, kill_at: int
) -> None:
    if variant == 'sandbox' and BWRAP_PROBLEM is not None:
        pytest.skip(BWRAP_PROBLEM)
    write_tally_skill(tmp_path, variant)
    (tmp_path / 'kill_at').write_text(str(kill_at))
    started = run_app(tmp_path, 'start', database)
    assert started.returncode == -9, started.stderr
    killed = KilledRun.observe(tmp_path, variant, kill_at)

    recovered = run_app(tmp_path, 'recover', database)
    assert recovered.returncode == 0, recovered.stderr
    result = json.loads(recovered.stdout.strip().splitlines()[-1])

    killed.check_recovered(result)
    # Recorded: each run's workspace `ensure` (which names the folder), the load, each script run; nothing else
    # touched the workspace from workflow code.
    assert result['steps'] == [*run_steps('trip.skillshelf.load_skill'), *run_steps()]
    assert result['continued_steps'] == run_steps()


def run_steps(*loads: str) -> list[str]:
    """The steps of one run of the workspace variant: `ensure`, the check, a request, `loads`, the script, the answer."""
    return [
        'trip__capability__workspace.call',
        'trip__capability__skillshelf.refresh_library',
        'trip__model.request',
        *loads,
        *(['trip__model.request'] if loads else []),
        'trip.skillshelf.run_skill_script',
        'trip__model.request',
    ]


def test_a_forked_skill_runs_inside_the_recorded_load_and_is_not_run_again_on_recovery(
    tmp_path: Path, database: str
) -> None:
    (tmp_path / 'skills').mkdir()
    (tmp_path / 'prompt').write_text(FORK_PROMPT)
    (tmp_path / 'kill_at').write_text('2')  # the parent's second request: after the fork's step, before the answer
    started = run_app(tmp_path, 'start', database)
    assert started.returncode == -9, started.stderr
    recovered = run_app(tmp_path, 'recover', database)
    assert recovered.returncode == 0, recovered.stderr
    result = json.loads(recovered.stdout.strip().splitlines()[-1])

    assert result['output'] == ['Booked.']
    # The sub-agent's requests and its `book` call ran inside the `load_skill` step: one recorded result.
    assert result['steps'] == [
        'trip__capability__skillshelf.refresh_library',
        'trip__model.request',
        'trip.skillshelf.load_skill',
        'trip__model.request',
    ]
    [first_live] = result['seen']
    assert first_live['request'] == 2
    assert first_live['returns'] == [
        ['load_skill', "The skill 'itinerary' ran in a sub-agent. Its result:\n\nBooked the Lisbon hotel."]
    ]
    [booked] = (tmp_path / 'book.log').read_text().splitlines()
    assert booked.split()[0] != str(result['pid'])  # in the killed process, never again in the recovering one
