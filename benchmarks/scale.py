"""Scale: discovery, cold and warm index build, search latency and memory for large folder libraries.

    python benchmarks/scale.py --data ../shared/bench --sizes 2651,20000,100000

The 2,651 real skills (trigger skills + skills corpus + Composio toolkits) are written as SKILL.md folders
to a temporary directory; larger sizes add mutated copies (new names, each description given words
of another real skill, the same body). Each measurement runs in a fresh process:

* cold, with an empty cache directory: discovery (`SkillLibrary.build(options=LibraryOptions(directories=[...]))`, which parses
  every frontmatter), then the first search, which reads the bodies, builds the index and writes the caches;
* warm: the same in a new process with the caches present (frontmatter and index);
* with `--drop-os-cache` (Linux, root), cold again after emptying the operating system's page, dentry and inode
  caches, as after a boot or a container start: every `SKILL.md` comes from the disk.

Up to 20,000 skills each size is measured `--repeat` times (default 3), larger sizes `--repeat-large` times
(default 1), and the medians are reported; `results/scale.json` also lists each cold run's total.

Latency is measured on the trigger queries against the library of that size. Writes
`benchmarks/results/scale.json` and regenerates `benchmarks/README.md` and the figures the docs quote.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import report
from _datasets import read_jsonl, scaled_docs
from _evaluation import percentile
from _folders import write_skill_folders
from _results import machine, write_json
from _tables import scale_table

from skillshelf import LibraryOptions


def worker(mode: str, directory: Path, queries_file: Path | None) -> dict[str, Any]:
    """Runs in a child process: one measurement, printed as JSON."""
    from skillshelf import SkillLibrary

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    library = SkillLibrary.build(options=LibraryOptions(directories=[directory]))
    discovered = time.perf_counter() - started
    result: dict[str, Any] = {'skills': len(library), 'discover_s': discovered}
    index_started = time.perf_counter()
    library.search('warm up the index', 5)
    result['index_s'] = time.perf_counter() - index_started
    result['total_s'] = time.perf_counter() - started
    result['max_rss_mib'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result['rss_growth_mib'] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    if queries_file is not None:
        queries = [row['query'] for row in read_jsonl(queries_file)]
        latencies: list[float] = []
        for query in queries:
            begin = time.perf_counter()
            library.search(query, 10)
            latencies.append(time.perf_counter() - begin)
        result['latency_p50_ms'] = percentile(latencies, 50) * 1000
        result['latency_p95_ms'] = percentile(latencies, 95) * 1000
        result['n_queries'] = len(queries)
    index = library._search_index.lexical  # pyright: ignore[reportPrivateUsage]
    if index is not None:
        arrays = sum(m.starts.nbytes + m.docs.nbytes + m.weights.nbytes for m in index.matrices)
        result['index_arrays_mib'] = arrays / 2**20
        result['vocabulary_terms'] = len(index.vocabulary)
    return result


def run_worker(mode: str, directory: Path, cache: Path, queries: Path | None = None) -> dict[str, Any]:
    command = [sys.executable, __file__, '--worker', mode, '--dir', str(directory)]
    if queries is not None:
        command += ['--queries', str(queries)]
    env = {**os.environ, 'SKILLSHELF_CACHE_DIR': str(cache)}
    completed = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path)
    parser.add_argument('--sizes', default='2651,20000,100000')
    parser.add_argument('--worker', choices=['cold', 'warm'])
    parser.add_argument('--dir', type=Path)
    parser.add_argument('--queries', type=Path)
    parser.add_argument('--repeat', type=int, default=3, help='runs per size up to 20k skills; medians are reported')
    parser.add_argument(
        '--repeat-large', type=int, default=1, help='runs per size above 20k skills (about 25 s each at 100k)'
    )
    parser.add_argument(
        '--drop-os-cache', action='store_true', help="also time cold starts with the OS's file caches emptied (root)"
    )
    parser.add_argument('--no-readme', action='store_true')
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.dir, args.queries)))
        return
    if args.data is None:
        parser.error('--data is required')
    if args.drop_os_cache:
        try:
            drop_os_cache()
        except OSError as error:
            parser.error(f'--drop-os-cache needs Linux and root, to write /proc/sys/vm/drop_caches ({error})')
    rows: list[dict[str, Any]] = []
    for size in [int(s) for s in args.sizes.split(',')]:
        with tempfile.TemporaryDirectory(prefix='skillshelf-scale-') as tmp:
            library_dir = Path(tmp) / 'skills'
            write_skill_folders(scaled_docs(args.data, size), library_dir)
            cache = Path(tmp) / 'cache-0'
            colds: list[dict[str, Any]] = []
            warms: list[dict[str, Any]] = []
            os_colds: list[dict[str, Any]] = []
            repeats = args.repeat if size <= 20_000 else args.repeat_large
            for attempt in range(repeats):
                cache = Path(tmp) / f'cache-{attempt}'  # empty: the cold run starts with no cache at all
                colds.append(run_worker('cold', library_dir, cache))
                queries = args.data / 'skilltrigger_queries_dev.jsonl' if attempt == repeats - 1 else None
                warms.append(run_worker('warm', library_dir, cache, queries))
                if args.drop_os_cache:
                    drop_os_cache()
                    os_colds.append(run_worker('cold', library_dir, Path(tmp) / f'cache-os-{attempt}'))
            cache_bytes = sum(f.stat().st_size for f in cache.glob('*') if f.is_file())
        cold, warm = median_run(colds), median_run(warms)
        row = {
            'size': size,
            'repeats': repeats,
            'discover_s': cold['discover_s'],
            'warm_discover_s': warm['discover_s'],
            'cold_index_s': cold['index_s'],
            'cold_total_s': cold['total_s'],
            'cold_total_runs_s': [run['total_s'] for run in colds],
            'warm_index_s': warm['index_s'],
            'warm_total_s': warm['total_s'],
            'warm_over_cold_index': warm['index_s'] / cold['index_s'],
            'warm_over_cold_total': warm['total_s'] / cold['total_s'],
            'latency_p50_ms': warms[-1]['latency_p50_ms'],
            'latency_p95_ms': warms[-1]['latency_p95_ms'],
            'cold_max_rss_mib': cold['max_rss_mib'],
            'warm_max_rss_mib': warm['max_rss_mib'],
            'index_arrays_mib': cold.get('index_arrays_mib', float('nan')),
            'vocabulary_terms': cold.get('vocabulary_terms', 0),
            'cache_file_mib': cache_bytes / 2**20,
        }
        if os_colds:
            row['os_cold_discover_s'] = median_run(os_colds)['discover_s']
            row['os_cold_total_s'] = median_run(os_colds)['total_s']
            row['os_cold_total_runs_s'] = [run['total_s'] for run in os_colds]
        rows.append(row)
        print(scale_table([row]), flush=True)
    path = write_json('scale', {'machine': machine(), 'rows': rows})
    print(scale_table(rows))
    print(f'wrote {path}')
    if not args.no_readme:
        report.regenerate()


def drop_os_cache() -> None:
    """Empty Linux's page, dentry and inode caches, so the next run reads every file from the disk."""
    os.sync()
    Path('/proc/sys/vm/drop_caches').write_text('3\n')


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each timing's median over the runs (a shared 2-CPU VM is noisy); other values from the last run."""
    merged = dict(runs[-1])
    for key in ('discover_s', 'index_s', 'total_s'):
        merged[key] = statistics.median(run[key] for run in runs)
    return merged


if __name__ == '__main__':
    main()
