"""The SQL registry beside the folder library at 2,651 real skills (and more, made by `scale.scaled_docs`): worker
start, first and warm search, the per-run check, publish-to-visible delay (and how many catalog rows a worker reads to
see one published skill), and whether both rank the trigger queries identically.

    python benchmarks/registry.py --data ../shared/bench [--sizes 2651,100000] [--postgres postgresql+psycopg://...]

Each worker (a folder library, a registry on SQLite, one on PostgreSQL) is started in a fresh process, as a
deployed worker starts. Up to 10,000 skills the registry is filled one `publish` at a time; above, with
`publish_many` in transactions of 1,000 (one at a time would take about 12 ms a skill on SQLite). Caches are off
(`SKILLSHELF_CACHE_DIR=off`), so everything starts cold. Rows are merged into `results/registry.json` by backend
and size, so a run of one size keeps the others.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

os.environ['SKILLSHELF_CACHE_DIR'] = 'off'
sys.path.insert(0, str(Path(__file__).parent))

import report
from _datasets import scaled_docs, trigger_sets
from _folders import write_skill_folders
from _results import RESULTS, machine, write_json

from skillshelf import LibraryOptions, SkillLibrary
from skillshelf.registry.skill_registry import SkillRegistry

ONE_BY_ONE_UP_TO = 10_000
BATCH = 1_000


def worker(source: str, queries_file: Path) -> dict[str, Any]:
    """Runs in a child process: start a library on a folder or a registry URL, then search and check as runs do."""
    queries: list[str] = json.loads(queries_file.read_text())
    started = time.perf_counter()
    if '://' in source:
        library = SkillLibrary.build(options=LibraryOptions(sources=[SkillRegistry(source)]))
    else:
        library = SkillLibrary.build(options=LibraryOptions(directories=[source]))
    result: dict[str, Any] = {'skills': len(library), 'start_s': time.perf_counter() - started}
    started = time.perf_counter()
    library.search(queries[0], 5)
    result['first_search_s'] = time.perf_counter() - started
    times: list[float] = []
    top5: list[list[str]] = []
    for query in queries:
        started = time.perf_counter()
        hits = library.search(query, 5)
        times.append(time.perf_counter() - started)
        top5.append([hit.name for hit in hits])
    result['warm_search_ms_p50'] = statistics.median(times) * 1000
    checks = 20 if len(library) <= ONE_BY_ONE_UP_TO else 5
    started = time.perf_counter()
    for _ in range(checks):
        library.refresh()
    result['unchanged_run_check_ms'] = (time.perf_counter() - started) / checks * 1000
    result['top5'] = top5
    return result


def run_worker(source: str, queries_file: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, '--worker', source, '--queries', str(queries_file)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def publish_to_visible(publish: Any, library: SkillLibrary, rounds: int = 5) -> float:
    """Median time from a publish to the skill being in a running worker's library (its next run's check)."""
    delays: list[float] = []
    for round_ in range(rounds):
        name = f'fresh-skill-{round_}'
        started = time.perf_counter()
        publish(name, f'---\nname: {name}\ndescription: Published while workers run.\n---\nBody.\n')
        changed = library.refresh()  # what the next run of a worker does first
        delays.append(time.perf_counter() - started)
        assert changed
        assert name in library.skills
    return statistics.median(delays) * 1000


def measure(label: str, url: str, folder: Path, queries_file: Path, folder_row: dict[str, Any]) -> dict[str, Any]:
    folders = sorted(folder.iterdir())
    publisher = SkillRegistry(url)
    started = time.perf_counter()
    if len(folders) <= ONE_BY_ONE_UP_TO:
        for skill_folder in folders:
            publisher.publish(skill_folder)
    else:
        for start in range(0, len(folders), BATCH):
            publisher.publish_many(folders[start : start + BATCH])
    publish_all = time.perf_counter() - started
    registry = run_worker(url, queries_file)
    same = sum(a == b for a, b in zip(folder_row['top5'], registry['top5'], strict=True))
    row: dict[str, Any] = {'backend': label, 'skills': registry['skills'], 'publish_all_s': publish_all}
    row['commit'] = machine()['commit']  # rows of other runs are kept, each says what it measured
    if len(folders) > ONE_BY_ONE_UP_TO:
        row['publish_mode'] = f'publish_many, {BATCH:,} per transaction'
    for key in ('start_s', 'first_search_s', 'warm_search_ms_p50', 'unchanged_run_check_ms'):
        row[key] = {'folder': folder_row[key], 'registry': registry[key]}
    row['identical_top5'] = f'{same}/{len(registry["top5"])}'
    worker_registry = SkillRegistry(url)
    library = SkillLibrary.build(options=LibraryOptions(sources=[worker_registry]))
    read_at_start = worker_registry.rows_read
    row['publish_to_visible_ms_p50'] = publish_to_visible(lambda _, text: publisher.publish_markdown(text), library)
    row['rows_read_at_start'] = read_at_start
    row['rows_read_per_change'] = (worker_registry.rows_read - read_at_start) / 5  # catalog rows, per publish seen
    row['folder_publish_to_visible_ms_p50'] = folder_row['publish_to_visible_ms_p50']
    return row


def write_folder(folder: Path, name: str, text: str) -> None:
    (folder / name).mkdir()
    (folder / name / 'SKILL.md').write_text(text, encoding='utf-8')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, default=Path('../shared/bench'))
    parser.add_argument('--sizes', default='2651', help='library sizes, comma-separated')
    parser.add_argument('--postgres', help='an empty PostgreSQL database to measure too (emptied between sizes)')
    parser.add_argument('--worker', help=argparse.SUPPRESS)
    parser.add_argument('--queries', type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker:
        print(json.dumps(worker(arguments.worker, arguments.queries)))
        return
    queries = [query.text for query in trigger_sets(arguments.data)[1].queries[:300]]
    rows: list[dict[str, Any]] = []
    for size in [int(size) for size in arguments.sizes.split(',')]:
        with tempfile.TemporaryDirectory(prefix='skillshelf-registry-') as temporary:
            folder, queries_file = Path(temporary) / 'library', Path(temporary) / 'queries.json'
            write_skill_folders(scaled_docs(arguments.data, size), folder)
            queries_file.write_text(json.dumps(queries))
            folder_row = run_worker(str(folder), queries_file)
            print(f'{size:,} folder worker: { ({k: v for k, v in folder_row.items() if k != "top5"}) }', flush=True)
            library = SkillLibrary.build(options=LibraryOptions(directories=[folder]))
            folder_row['publish_to_visible_ms_p50'] = publish_to_visible(partial(write_folder, folder), library)
            for fresh in folder.glob('fresh-skill-*'):  # so the registries get the skills the folder worker read
                shutil.rmtree(fresh)
            backends = [('sqlite', f'sqlite:///{temporary}/skills.db')]
            if arguments.postgres:
                empty_postgres(arguments.postgres)
                backends.append(('postgresql', arguments.postgres))
            for label, url in backends:
                rows.append(measure(label, url, folder, queries_file, folder_row))
                print(rows[-1], flush=True)
    print(f'wrote {write_json("registry", {"machine": machine(), "results": merged(rows)})}')
    report.regenerate()  # the README quotes these figures


def empty_postgres(url: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as connection:
        tables = ('skillshelf_revision_files', 'skillshelf_blobs', 'skillshelf_revisions', 'skillshelf_catalog')
        for table in (*tables, 'skillshelf_registry', 'skillshelf_files', 'skillshelf_skills', 'skillshelf_state'):
            connection.execute(text(f'DROP TABLE IF EXISTS {table}'))
    engine.dispose()


def merged(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The new rows, and the previous results' rows of other backends and sizes."""
    path = RESULTS / 'registry.json'
    previous = json.loads(path.read_text())['results'] if path.exists() else []
    fresh = {(row['backend'], row['skills']) for row in rows}
    kept = [row for row in previous if (row['backend'], row['skills']) not in fresh]
    return sorted(kept + rows, key=lambda row: (row['skills'], row['backend']))


if __name__ == '__main__':
    main()
