"""The per-run library check (`auto_reload`) and the event loop: what the check costs on the loop's thread, in a
worker thread (where runs do it), and how often a coroutine on the loop still gets to run meanwhile.

    python benchmarks/loop_check.py --data ../shared/bench [--sizes 2651,20000]

For each size, the first skills of the pooled library (and past its 2,651, `scaled_docs`' mutated copies) are
written as `SKILL.md` folders and read by `SkillLibrary.build`; the library is then checked unchanged, so a check is
the `stat` pass. Each check is timed `--repeat` times on the loop's thread and in a worker thread
(`asyncio.to_thread`, as pydantic-ai runs the check), the latter while a coroutine on the loop yields in a tight
loop and records the gaps between its turns. Medians are reported, and the gaps' 99th percentile. Writes
`benchmarks/results/loop_check.json` and regenerates the figures `docs/durable.md` quotes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import report
from _datasets import scaled_docs
from _evaluation import percentile
from _folders import write_skill_folders
from _results import machine, write_json

from skillshelf import LibraryOptions, SkillLibrary


async def checked_in_a_thread(library: SkillLibrary) -> tuple[float, list[float]]:
    """One check in a worker thread: its wall time, and the gaps between a loop coroutine's turns meanwhile."""
    done = asyncio.Event()
    gaps: list[float] = []

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    async def check() -> float:
        started = time.perf_counter()
        await asyncio.to_thread(library.refresh)
        seconds = time.perf_counter() - started
        done.set()
        return seconds

    seconds, _ = await asyncio.gather(check(), ticker())
    return seconds, gaps


def measure(directory: Path, repeat: int) -> dict[str, Any]:
    """The check of the library in `directory`, unchanged: on the loop's thread, then in a worker thread."""
    library = SkillLibrary.build(options=LibraryOptions(directories=[directory]))
    library.refresh()  # the first check after the build warms the OS's caches of the folders
    on_loop: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        library.refresh()
        on_loop.append(time.perf_counter() - started)
    in_thread: list[float] = []
    gaps: list[float] = []
    for _ in range(repeat):
        seconds, ticks = asyncio.run(checked_in_a_thread(library))
        in_thread.append(seconds)
        gaps += ticks
    return {
        'skills': len(library),
        'loop_thread_ms': statistics.median(on_loop) * 1000,
        'worker_thread_ms': statistics.median(in_thread) * 1000,
        'worker_thread_runs_ms': [seconds * 1000 for seconds in in_thread],
        'loop_gap_p99_ms': percentile(gaps, 99) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, required=True, help='the benchmark data folder, e.g. ../shared/bench')
    parser.add_argument('--sizes', default='2651,20000')
    parser.add_argument('--repeat', type=int, default=5, help='checks of each kind per size; medians are reported')
    parser.add_argument(
        '--no-readme', action='store_true', help='do not regenerate benchmarks/README.md and the figures the docs quote'
    )
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for size in [int(s) for s in args.sizes.split(',')]:
        with tempfile.TemporaryDirectory(prefix='skillshelf-loop-') as tmp:
            os.environ['SKILLSHELF_CACHE_DIR'] = str(Path(tmp) / 'cache')  # the user's cache stays untouched
            library = Path(tmp) / 'skills'
            write_skill_folders(scaled_docs(args.data, size), library)
            rows.append({'size': size, **measure(library, args.repeat)})
        print({key: value for key, value in rows[-1].items() if key != 'worker_thread_runs_ms'}, flush=True)
    print(f'wrote {write_json("loop_check", {"machine": machine(), "rows": rows})}')
    if not args.no_readme:
        report.regenerate()


if __name__ == '__main__':
    main()
