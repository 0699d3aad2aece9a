"""The results files: each benchmark writes its figures to `benchmarks/results/<name>.json`, with the machine and
commit it ran on, and the renderer (`report.py`) and the figures (`figures.py`) read them back."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / 'results'


def write_json(name: str, payload: Any) -> Path:
    """Write `payload` as `results/<name>.json`; return the path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f'{name}.json'
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + '\n', encoding='utf-8')
    return path


def load_json(name: str) -> dict[str, Any] | None:
    """`results/<name>.json`, or `None` where that benchmark has not run."""
    path = RESULTS / f'{name}.json'
    return json.loads(path.read_text(encoding='utf-8')) if path.exists() else None


def machine() -> dict[str, Any]:
    """What a result was measured on: Python, platform, CPUs and the commit checked out."""
    try:
        commit = subprocess.run(
            ['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        commit = ''
    return {
        'python': sys.version.split()[0],
        'platform': platform.platform(),
        'processor': platform.processor() or platform.machine(),
        'cpus': _cpus(),
        'commit': commit,
    }


def _cpus() -> int:
    # The CPUs this process may run on, which a container or `taskset` can make fewer than the machine's.
    return len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else (os.cpu_count() or 1)
