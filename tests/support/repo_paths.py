"""Where things are: the repository, its sample skills, and this folder of test helpers (on `sys.path` in the tests,
through `pythonpath` in `pyproject.toml`)."""

from __future__ import annotations

import os
from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
"""`tests/support/`: the helper modules, the durable apps, the MCP server and the test data."""

REPO = SUPPORT.parent.parent
SAMPLE_SKILLS = REPO / 'skills'


def python_path_with_support() -> dict[str, str]:
    """The environment for a child Python process that imports these helpers: `os.environ` with `tests/support`
    first on `PYTHONPATH` (a script's own folder is on its path, this one is not)."""
    paths = [str(SUPPORT), *filter(None, [os.environ.get('PYTHONPATH')])]
    return {**os.environ, 'PYTHONPATH': os.pathsep.join(paths)}
