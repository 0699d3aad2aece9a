"""The lock's cost: reading a folder library with `lock=` against without, cold (a new process hashes every file) and
at a run start after a change (the library read again: only changed files are hashed, the others found by `stat`),
and the time `skillshelf lock` takes to write the lock.

    python benchmarks/lock.py --data ../shared/bench --files 2

The 2,651 real skills are written as `SKILL.md` folders, each with `--files` more files (a script and a reference
of a few kB, as typical skills carry). Each measurement runs in a fresh process, `--repeat` times; medians are
reported. Writes `benchmarks/results/lock.json`.
"""

from __future__ import annotations

import argparse
import json
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

    options = LibraryOptions(directories=[directory], lock=lock if mode == 'locked' else None)
    started = time.perf_counter()
    library = SkillLibrary.build(options=options)
    built = time.perf_counter() - started
    intake = library._intake  # pyright: ignore[reportPrivateUsage]
    started = time.perf_counter()
    again = intake.collect()  # what a run start does after a skill changed: every source read again
    reread = time.perf_counter() - started
    assert len(again.skills) == len(library.skills) and not library.refused
    return {'skills': len(library.skills), 'build_s': built, 'reread_s': reread}


def write_lock(directory: Path, lock: Path) -> float:
    """What `skillshelf lock DIR -o FILE` does, timed in this process."""
    from skillshelf.authoring.locking.reading import read_for_lock

    started = time.perf_counter()
    read_for_lock([directory], [], lock, warned=[]).lock.write(lock)
    return time.perf_counter() - started


def run_worker(mode: str, directory: Path, lock: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, '--worker', mode, '--dir', str(directory), '--lock', str(lock)]
    completed = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path)
    parser.add_argument('--size', type=int, default=2651)
    parser.add_argument('--files', type=int, default=2, help='files per skill besides SKILL.md (0, 1 or 2)')
    parser.add_argument('--repeat', type=int, default=5)
    parser.add_argument('--worker', choices=['plain', 'locked'])
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
        writes = [write_lock(directory, lock) for _ in range(args.repeat)]
        files = sum(len(entry['files']) for entry in json.loads(lock.read_text(encoding='utf-8'))['skills'].values())
        runs = {mode: [run_worker(mode, directory, lock) for _ in range(args.repeat)] for mode in ('plain', 'locked')}
        lock_bytes = lock.stat().st_size
    median = {
        mode: {key: statistics.median(run[key] for run in rows) for key in ('build_s', 'reread_s')}
        for mode, rows in runs.items()
    }
    payload = {
        'machine': machine(),
        'skills': runs['plain'][0]['skills'],
        'files': files,
        'repeat': args.repeat,
        'lock_file_bytes': lock_bytes,
        'write_lock_s': statistics.median(writes),
        'build_s': median['plain']['build_s'],
        'build_locked_s': median['locked']['build_s'],
        'reread_s': median['plain']['reread_s'],
        'reread_locked_s': median['locked']['reread_s'],
        'runs': runs,
    }
    path = write_json('lock', payload)
    print(json.dumps({key: value for key, value in payload.items() if key not in ('runs', 'machine')}, indent=2))
    print(f'wrote {path}')


if __name__ == '__main__':
    main()
