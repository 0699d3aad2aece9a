"""The lock's cost: reading a folder library with `lock=` against without, in a new process with an empty cache
directory (every file hashed) and with the cache an earlier process left (only `stat`s), and at a run start after a
change (the library read again in the same process); and the time `skillshelf lock` takes to write the lock; then the same skills published to a SQLite registry.

    python benchmarks/lock.py --data ../shared/bench --files 2

The 2,651 real skills are written as `SKILL.md` folders, each with `--files` more files (a script and a reference
of a few kB, as typical skills carry). Each measurement runs in a fresh process, `--repeat` times; medians are
reported, as wall-clock time and as the process's CPU time (steadier on a shared machine). Writes `benchmarks/results/lock.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _datasets import scaled_docs
from _folders import write_skill_folders
from _results import machine, write_json

SCRIPT = 'import sys\n\n\ndef main() -> None:\n    print(sys.argv)\n\n\nmain()\n' * 12
REFERENCE = '# Reference\n\n' + 'A line of reference text, as skills carry them.\n' * 80


def worker(mode: str, directory: Path, lock: Path) -> dict[str, Any]:
    """Runs in a child process: one measurement, printed as JSON."""
    from skillshelf import LibraryOptions, SkillLibrary

    lock_file = lock if mode.startswith('locked') else None
    if mode.endswith('registry'):
        from skillshelf.registry import SkillRegistry

        options = LibraryOptions(sources=[SkillRegistry(f'sqlite:///{directory}')], lock=lock_file)
    else:
        options = LibraryOptions(directories=[directory], lock=lock_file)
    started, cpu = time.perf_counter(), time.process_time()
    library = SkillLibrary.build(options=options)
    built, built_cpu = time.perf_counter() - started, time.process_time() - cpu
    intake = library._intake  # pyright: ignore[reportPrivateUsage]
    started, cpu = time.perf_counter(), time.process_time()
    again = intake.collect()  # what a run start does after a skill changed: every source read again
    reread, reread_cpu = time.perf_counter() - started, time.process_time() - cpu
    assert len(again.skills) == len(library.skills)
    assert not library.refused
    return {
        'skills': len(library.skills),
        'build_s': built,
        'reread_s': reread,
        'build_cpu_s': built_cpu,
        'reread_cpu_s': reread_cpu,
    }


def write_lock(directory: Path, lock: Path, registry: Path | None = None) -> float:
    """What `skillshelf lock DIR -o FILE` (or `--registry URL`) does, timed in this process."""
    from skillshelf.authoring.locking.reading import read_for_lock

    started = time.perf_counter()
    if registry is None:
        read_for_lock([directory], [], lock, warned=[]).lock.write(lock)
    else:
        read_for_lock([], [{'registry': f'sqlite:///{registry}'}], lock, warned=[]).lock.write(lock)
    return time.perf_counter() - started


def publish(directory: Path, database: Path) -> None:
    from skillshelf.registry import SkillRegistry

    registry = SkillRegistry(f'sqlite:///{database}')
    folders = sorted(directory.iterdir())
    for start in range(0, len(folders), 1000):
        registry.publish_many(folders[start : start + 1000])


def run_worker(mode: str, directory: Path, lock: Path, cache: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, '--worker', mode, '--dir', str(directory), '--lock', str(lock)]
    env = {**os.environ, 'SKILLSHELF_CACHE_DIR': str(cache)}
    completed = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    return json.loads(completed.stdout.strip().splitlines()[-1])


def cold_and_warm(mode: str, directory: Path, lock: Path, tmp: Path, attempt: int) -> dict[str, Any]:
    """A run with an empty cache directory, then one with the cache it left."""
    cache = tmp / f'cache-{mode}-{attempt}'
    cold = run_worker(mode, directory, lock, cache)
    warm = run_worker(mode, directory, lock, cache)
    return {
        'cold_build_s': cold['build_s'],
        'warm_build_s': warm['build_s'],
        'reread_s': warm['reread_s'],
        'cold_build_cpu_s': cold['build_cpu_s'],
        'warm_build_cpu_s': warm['build_cpu_s'],
        'reread_cpu_s': warm['reread_cpu_s'],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path)
    parser.add_argument('--size', type=int, default=2651)
    parser.add_argument('--files', type=int, default=2, help='files per skill besides SKILL.md (0, 1 or 2)')
    parser.add_argument('--repeat', type=int, default=5)
    parser.add_argument('--worker', choices=['plain', 'locked', 'plain-registry', 'locked-registry'])
    parser.add_argument('--dir', type=Path)
    parser.add_argument('--lock', type=Path)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.dir, args.lock)))
        return
    if args.data is None:
        parser.error('--data is required')
    with tempfile.TemporaryDirectory(prefix='skillshelf-lock-') as tmp:
        directory, lock = Path(tmp) / 'skills', Path(tmp) / 'skills.lock'
        names = write_skill_folders(scaled_docs(args.data, args.size), directory)
        for name in names:
            extras = {'scripts/run.py': SCRIPT, 'reference.md': REFERENCE}
            for path, text in list(extras.items())[: args.files]:
                (directory / name / path).parent.mkdir(exist_ok=True)
                (directory / name / path).write_text(text, encoding='utf-8')
        os.environ['SKILLSHELF_CACHE_DIR'] = str(Path(tmp) / 'cache-write')
        writes = [write_lock(directory, lock) for _ in range(args.repeat + 1)]
        files = sum(len(entry['files']) for entry in json.loads(lock.read_text(encoding='utf-8'))['skills'].values())
        runs = {
            mode: [cold_and_warm(mode, directory, lock, Path(tmp), attempt) for attempt in range(args.repeat)]
            for mode in ('plain', 'locked')
        }
        lock_bytes = lock.stat().st_size
        database, registry_lock = Path(tmp) / 'skills.db', Path(tmp) / 'registry.lock'
        publish(directory, database)
        write_lock(directory, registry_lock, database)
        for mode in ('plain-registry', 'locked-registry'):
            runs[mode] = [
                cold_and_warm(mode, database, registry_lock, Path(tmp), attempt) for attempt in range(args.repeat)
            ]
    median = {
        mode: {key: statistics.median(run[key] for run in rows) for key in rows[0]} for mode, rows in runs.items()
    }
    payload = {
        'machine': machine(),
        'skills': args.size,
        'files': files,
        'repeat': args.repeat,
        'lock_file_bytes': lock_bytes,
        'write_lock_cold_s': writes[0],
        'write_lock_warm_s': statistics.median(writes[1:]),
        **{
            f'{mode.replace("-", "_")}_{key}': value for mode, values in median.items() for key, value in values.items()
        },
        'runs': runs,
    }
    path = write_json('lock', payload)
    print(json.dumps({key: value for key, value in payload.items() if key not in ('runs', 'machine')}, indent=2))
    print(f'wrote {path}')


if __name__ == '__main__':
    main()
