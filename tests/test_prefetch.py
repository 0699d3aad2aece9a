"""Prefetching a cold library: threads only when the disk is slow, the same results either way."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

import skillshelf.prefetch
from skillshelf import SkillLibrary, SkillWarning
from skillshelf.prefetch import prefetch, stat_each
from skillshelf.ranking.cache import CACHE_MIN_SKILLS


class FakeClock:
    """A `perf_counter` that only moves when a sampled call says how long it took."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(skillshelf.prefetch.time, 'perf_counter', fake)
    return fake


@pytest.fixture
def cold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every set of files looks cold, however few: the threaded path runs."""
    monkeypatch.setattr(skillshelf.prefetch, '_MIN_FILES', 1)
    monkeypatch.setattr(skillshelf.prefetch, '_COLD_SECONDS_PER_FILE', -1.0)


def record_touches(monkeypatch: pytest.MonkeyPatch, clock: FakeClock, seconds_each: float) -> list[tuple[str, str]]:
    """Each (thread name, path) `prefetch` touches; each touch takes `seconds_each` on the fake clock."""
    touched: list[tuple[str, str]] = []
    original = skillshelf.prefetch._touch  # pyright: ignore[reportPrivateUsage]

    def recording(path: str) -> None:
        touched.append((threading.current_thread().name, path))
        clock.now += seconds_each
        original(path)

    monkeypatch.setattr(skillshelf.prefetch, '_touch', recording)
    return touched


def in_threads(touched: list[tuple[str, str]]) -> list[str]:
    return [path for thread, path in touched if thread.startswith('skillshelf-prefetch')]


def write_files(directory: Path, count: int) -> list[str]:
    directory.mkdir(exist_ok=True)
    paths = [str(directory / f'{n:03d}.md') for n in range(count)]
    for path in paths:
        Path(path).write_text('x', encoding='utf-8')
    return paths


def skill_library(root: Path, count: int) -> Path:
    for n in range(count):
        folder = root / f'skill-{n:03d}'
        folder.mkdir(parents=True)
        text = f'---\nname: skill-{n:03d}\ndescription: Topic {n}.\n---\nBody {n}.\n'
        (folder / 'SKILL.md').write_text(text, encoding='utf-8')
    return root


def test_a_slow_sample_means_a_cold_disk_and_every_file_is_touched_in_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    paths = write_files(tmp_path / 'files', 300)
    touched = record_touches(monkeypatch, clock, seconds_each=1e-3)  # a disk read, not a cached one

    prefetch(paths)

    sampled = [path for thread, path in touched if thread == threading.current_thread().name]
    threaded = in_threads(touched)
    assert len(sampled) == 32
    assert set(sampled) < set(paths)
    assert sorted(threaded) == paths
    assert len(touched) == len(sampled) + len(threaded)


def test_a_quick_sample_means_cached_files_and_no_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    paths = write_files(tmp_path / 'files', 300)
    touched = record_touches(monkeypatch, clock, seconds_each=5e-6)

    prefetch(paths)

    assert len(touched) == 32
    assert {thread for thread, _ in touched} == {threading.current_thread().name}


def test_a_few_files_are_not_even_sampled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:
    touched = record_touches(monkeypatch, clock, seconds_each=1.0)

    prefetch(write_files(tmp_path / 'files', 10))

    assert touched == []


@pytest.mark.usefixtures('cold')
def test_stat_each_in_threads_matches_os_stat_in_order(tmp_path: Path) -> None:
    paths = write_files(tmp_path / 'files', 200)
    paths[7] = str(tmp_path / 'missing.md')
    paths[150] = paths[3] + '/SKILL.md'  # under a file: ENOTDIR

    infos = stat_each(paths)

    assert infos[7] is None
    assert infos[150] is None
    assert [info and (info.st_ino, info.st_mtime_ns) for info in infos] == [
        (os.stat(path).st_ino, os.stat(path).st_mtime_ns) if os.path.exists(path) else None for path in paths
    ]


@pytest.mark.usefixtures('cold')
def test_a_cold_discovery_builds_the_same_library_and_touches_nothing_through_a_symlinked_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    root = skill_library(tmp_path / 'lib', 5)
    outside = skill_library(tmp_path / 'outside', 1) / 'skill-000'
    (root / 'linked').symlink_to(outside, target_is_directory=True)
    with pytest.warns(SkillWarning, match='outside the library directory'):
        expected = SkillLibrary.build(directories=[root])
    touched = record_touches(monkeypatch, clock, seconds_each=0.0)

    with pytest.warns(SkillWarning, match='outside the library directory'):
        library = SkillLibrary.build(directories=[root])

    assert list(library.skills) == list(expected.skills) == [f'skill-{n:03d}' for n in range(5)]
    assert all(os.path.realpath(path).startswith(str(root.resolve())) for _, path in touched)
    assert {os.path.basename(os.path.dirname(path)) for _, path in touched} == set(library.skills)


@pytest.mark.usefixtures('cold', 'cache_dir')
def test_files_whose_frontmatter_is_cached_are_not_prefetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    root = skill_library(tmp_path / 'lib', CACHE_MIN_SKILLS)
    touched = record_touches(monkeypatch, clock, seconds_each=0.0)
    SkillLibrary.build(directories=[root])
    assert len(in_threads(touched)) == CACHE_MIN_SKILLS
    (root / 'skill-007' / 'SKILL.md').write_text('---\nname: skill-007\ndescription: Edited.\n---\n', encoding='utf-8')
    skill_library(tmp_path / 'new', 1).joinpath('skill-000').rename(root / 'added')
    (root / 'added' / 'SKILL.md').write_text('---\nname: added\ndescription: New.\n---\n', encoding='utf-8')
    touched.clear()

    warm = SkillLibrary.build(directories=[root])

    assert in_threads(touched) == [str(root / 'added' / 'SKILL.md')]  # not in the cache at all
    assert warm.skills['skill-007'].description == 'Edited.'  # a stale entry: read, not read ahead
    assert warm.skills['added'].description == 'New.'


def test_nothing_is_read_ahead_where_symlinks_cannot_be_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    monkeypatch.setattr(skillshelf.prefetch, 'REFUSES_SYMLINKS', False)  # as on Windows: no O_NOFOLLOW
    touched = record_touches(monkeypatch, clock, seconds_each=1.0)

    prefetch(write_files(tmp_path / 'files', 300))

    assert touched == []


class NoThreads:
    """A `ThreadPoolExecutor` where no thread can start (WebAssembly, or an interpreter shutting down)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError("can't start new thread")


@pytest.mark.usefixtures('cold')
def test_without_threads_the_files_are_looked_at_one_by_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(skillshelf.prefetch, 'ThreadPoolExecutor', NoThreads)
    paths = write_files(tmp_path / 'files', 100)
    root = skill_library(tmp_path / 'lib', 3)

    prefetch(paths)
    infos = stat_each(paths)
    library = SkillLibrary.build(directories=[root])

    assert [info and info.st_ino for info in infos] == [os.stat(path).st_ino for path in paths]
    assert list(library.skills) == ['skill-000', 'skill-001', 'skill-002']
