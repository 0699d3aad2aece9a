"""Start-up against an earlier commit: the cold start at 2,651 skills, for this checkout and for `--against`, in one run.

    python benchmarks/startup.py --data ../shared/bench --against 9c69375 --repeat 15

The 2,651 real skills are written as `SKILL.md` folders (as `scale.py` writes them). The other commit is checked out
with `git worktree` into a temporary directory and imported from there, by the same interpreter. The two checkouts
take turns, start after start, so both see the same moments of a machine whose speed drifts; each start is a fresh
process with an empty cache directory. Two starts are timed; imports are not (they are pydantic-ai's, the same for
both):

* *library*: `SkillLibrary.build(...)` then the first `search` (discovery, reading the bodies, the index build);
* *agent*: `Skills(directories=[...])`, an `Agent` with it and a run whose first model request calls `search_skills`:
  `context_cost.py`'s worker, each checkout's own copy (the README's "construct + 2-request run").

Medians are reported, with each run kept in `benchmarks/results/startup.json`; the README is regenerated.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import report
from _datasets import scaled_docs
from _folders import write_skill_folders
from _results import machine, write_json

SIZE = 2651
KINDS = ('library', 'agent')
LIBRARY_START = """
import json, sys, time
from pathlib import Path
from skillshelf import LibraryOptions, SkillLibrary
started = time.perf_counter()
library = SkillLibrary.build(options=LibraryOptions(directories=[Path(sys.argv[1])]))
built = time.perf_counter()
library.search('review a pull request for security problems', 5)
print(json.dumps({'discover': built - started, 'seconds': time.perf_counter() - started}))
"""


def start(kind: str, checkout: Path, library: Path) -> dict[str, float]:
    """One cold start of `kind` from `checkout`, in a fresh process with an empty cache directory."""
    if kind == 'library':
        command = [sys.executable, '-c', LIBRARY_START, str(library)]
    else:
        command = [sys.executable, str(checkout / 'benchmarks' / 'context_cost.py'), '--worker', '--dir', str(library)]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, 'PYTHONPATH': str(checkout / 'src'), 'SKILLSHELF_CACHE_DIR': cache}
        completed = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    return {key: result[key] for key in ('discover', 'seconds') if key in result}


def measure(checkouts: dict[str, Path], library: Path, repeat: int) -> dict[str, dict[str, list[dict[str, float]]]]:
    runs: dict[str, dict[str, list[dict[str, float]]]] = {kind: {name: [] for name in checkouts} for kind in KINDS}
    for round_ in range(repeat):
        for kind in KINDS:
            for name, checkout in checkouts.items():
                runs[kind][name].append(start(kind, checkout, library))
        print(f'round {round_ + 1}/{repeat}', flush=True)
    return runs


def summary(runs: dict[str, dict[str, list[dict[str, float]]]], against: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for kind, by_checkout in runs.items():
        before = statistics.median(run['seconds'] for run in by_checkout[against])
        for name, kind_runs in by_checkout.items():
            seconds = statistics.median(run['seconds'] for run in kind_runs)
            rows.append({'start': kind, 'checkout': name, 'seconds': seconds, 'change': seconds / before - 1})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, required=True)
    parser.add_argument('--against', required=True, help='the commit to compare with (anything `git` names)')
    parser.add_argument('--repeat', type=int, default=15)
    parser.add_argument('--no-readme', action='store_true')
    args = parser.parse_args()
    repository = Path(__file__).resolve().parent.parent
    against = subprocess.run(
        ['git', '-C', str(repository), 'rev-parse', '--short', args.against], capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as scratch:
        other = Path(scratch) / 'against'
        subprocess.run(['git', '-C', str(repository), 'worktree', 'add', '--detach', str(other), against], check=True)
        try:
            library = Path(scratch) / 'library'
            write_skill_folders(scaled_docs(args.data, SIZE), library)
            runs = measure({against: other, 'this checkout': repository}, library, args.repeat)
        finally:
            subprocess.run(['git', '-C', str(repository), 'worktree', 'remove', '--force', str(other)], check=False)
    rows = summary(runs, against)
    for row in rows:
        print(f'{row["start"]:8} {row["checkout"]:14} {row["seconds"]:.3f} s  {row["change"]:+.1%}')
    path = write_json(
        'startup',
        {'machine': machine(), 'size': SIZE, 'against': against, 'repeat': args.repeat, 'rows': rows, 'runs': runs},
    )
    print(f'wrote {path}')
    if not args.no_readme:
        report.regenerate()


if __name__ == '__main__':
    main()
