"""The SQL registry beside the folder library at 2,651 real skills: worker start, first and warm search, the per-run
check, publish-to-visible delay, and whether both rank the trigger queries identically.

    python benchmarks/registry.py --data ../shared/bench [--postgres postgresql+psycopg://...]

Caches are off (`SKILLSHELF_CACHE_DIR=off`), so both start cold. Writes `results/registry.json`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ['SKILLSHELF_CACHE_DIR'] = 'off'

from _common import machine, trigger_sets, write_json, write_skill_folders

from skillshelf import SkillLibrary
from skillshelf.sources.registry import SkillRegistry


def measure(label: str, url: str, folder: Path, queries: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    publisher = SkillRegistry(url)
    for skill_folder in sorted(folder.iterdir()):
        publisher.publish(skill_folder)
    publish_all = time.perf_counter() - started

    started = time.perf_counter()
    folders = SkillLibrary.build(directories=[folder])
    folder_start = time.perf_counter() - started
    started = time.perf_counter()
    registry = SkillLibrary.build(sources=[SkillRegistry(url)])
    registry_start = time.perf_counter() - started

    row: dict[str, Any] = {'backend': label, 'skills': len(registry), 'publish_all_s': publish_all}
    row |= {'start_s': {'folder': folder_start, 'registry': registry_start}}
    for name, library in (('folder', folders), ('registry', registry)):
        started = time.perf_counter()
        library.search(queries[0], 5)
        row.setdefault('first_search_s', {})[name] = time.perf_counter() - started
        times = []
        for query in queries:
            started = time.perf_counter()
            library.search(query, 5)
            times.append(time.perf_counter() - started)
        row.setdefault('warm_search_ms_p50', {})[name] = statistics.median(times) * 1000
        started = time.perf_counter()
        for _ in range(20):
            library.refresh()
        row.setdefault('unchanged_run_check_ms', {})[name] = (time.perf_counter() - started) / 20 * 1000
    same = sum(
        [hit.name for hit in folders.search(query, 5)] == [hit.name for hit in registry.search(query, 5)]
        for query in queries
    )
    row['identical_top5'] = f'{same}/{len(queries)}'

    delays = []
    for round_ in range(5):
        text = f'---\nname: fresh-skill-{round_}\ndescription: Published while workers run.\n---\nBody.\n'
        started = time.perf_counter()
        publisher.publish_markdown(text)
        changed = registry.refresh()  # what the next run of a worker does first
        delays.append(time.perf_counter() - started)
        assert changed
        assert f'fresh-skill-{round_}' in registry.skills
    row['publish_to_visible_ms_p50'] = statistics.median(delays) * 1000
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--data', type=Path, default=Path('../shared/bench'))
    parser.add_argument('--postgres', help='an empty PostgreSQL database to measure too')
    arguments = parser.parse_args()
    pooled = trigger_sets(arguments.data)[1]
    queries = [query.text for query in pooled.queries[:300]]
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / 'library'
        write_skill_folders(pooled.docs, folder)
        rows.append(measure('sqlite', f'sqlite:///{temporary}/skills.db', folder, queries))
        if arguments.postgres:
            rows.append(measure('postgresql', arguments.postgres, folder, queries))
    for row in rows:
        print(row)
    write_json('registry', {'machine': machine(), 'results': rows})


if __name__ == '__main__':
    main()
