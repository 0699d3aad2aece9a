"""The per-run library check (`auto_reload`) runs in a worker thread, never on the event loop, and stays correct
when runs check from several threads at once."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import TextPart

from skillshelf import LibraryOptions, SkillLibrary, Skills

from scripted_model import Script
from skill_files import write_skill


def blocked_until_set(library: SkillLibrary, event: threading.Event, threads: list[str]) -> Callable[[], bool]:
    """`library.refresh` that first waits for `event`: on the loop's thread it would wait for ever, since only a
    coroutine on that loop sets it."""
    refresh = library.refresh

    def blocked() -> bool:
        threads.append(threading.current_thread().name)
        assert event.wait(timeout=30), 'the concurrent coroutine never ran while the library was checked'
        return refresh()

    return blocked


async def test_a_concurrent_coroutine_runs_while_the_library_check_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path, 'alpha')
    skills = Skills(tmp_path)
    event, threads = threading.Event(), list[str]()
    monkeypatch.setattr(skills.library, 'refresh', blocked_until_set(skills.library, event, threads))
    write_skill(
        tmp_path, 'beta', description='The beta skill.'
    )  # found by this run's check, once the coroutine lets it go on
    script = Script([[TextPart('done')]])
    agent = Agent(script.model(), capabilities=[skills])

    async def concurrent() -> None:
        event.set()

    result, _ = await asyncio.gather(agent.run('hello'), concurrent())

    assert result.output == 'done'
    assert threads
    assert threads[0] != threading.current_thread().name
    assert '- beta: The beta skill.' in (script.requests[0].instructions or '')  # the check's find is in this run


async def test_the_check_runs_on_the_executor_the_agent_is_told_to_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path, 'alpha')
    skills = Skills(tmp_path)
    event, threads = threading.Event(), list[str]()
    event.set()
    monkeypatch.setattr(skills.library, 'refresh', blocked_until_set(skills.library, event, threads))
    agent = Agent(Script([[TextPart('done')]]).model(), capabilities=[skills])

    with ThreadPoolExecutor(1, thread_name_prefix='skill-check') as executor, agent.using_thread_executor(executor):
        await agent.run('hello')

    assert threads[0].startswith('skill-check')


def test_checks_from_many_threads_at_once_read_a_change_once(tmp_path: Path) -> None:
    for name in ('alpha', 'beta'):
        write_skill(tmp_path, name)
    library = SkillLibrary.build(options=LibraryOptions(directories=[tmp_path]))
    write_skill(tmp_path, 'gamma')
    start = threading.Barrier(8)

    def check() -> bool:
        start.wait()
        return library.refresh()

    with ThreadPoolExecutor(8) as pool:
        changed = list(pool.map(lambda _: check(), range(8)))

    assert changed.count(True) == 1  # one check read the directory again; the others found it already read
    assert sorted(library.skills) == ['alpha', 'beta', 'gamma']
    assert library.refresh() is False
