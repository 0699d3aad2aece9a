"""The benchmarks' imports flow one way: scripts → the renderer (`report.py`) → shared helpers (`_*.py`).

A benchmark script writes its results file and calls `report.regenerate`; the renderer reads results files only. So a
script imports helpers and `report`, never another script, and neither the renderer nor a helper imports a script
(imports inside functions count: they closed a six-module circle through `report.py`).
"""

from __future__ import annotations

import ast
from pathlib import Path

from repo_paths import REPO

BENCHMARKS = REPO / 'benchmarks'
RENDERER = {'report', 'figures'}
"""What renders the results: the README's tables and the figures quoted in the docs."""


def imports(path: Path) -> set[str]:
    """The benchmark modules `path` imports, at any depth of its code."""
    modules = {p.stem for p in BENCHMARKS.glob('*.py')}
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split('.')[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split('.')[0])
    return (found & modules) - {path.stem}


def test_scripts_import_helpers_and_the_renderer_only() -> None:
    scripts = {p.stem for p in BENCHMARKS.glob('*.py') if not p.stem.startswith('_')} - RENDERER
    wrong = {name: imports(BENCHMARKS / f'{name}.py') & scripts for name in scripts}
    assert {name: found for name, found in wrong.items() if found} == {}


def test_the_renderer_and_the_helpers_import_no_script() -> None:
    scripts = {p.stem for p in BENCHMARKS.glob('*.py') if not p.stem.startswith('_')} - RENDERER
    shared = [p for p in BENCHMARKS.glob('*.py') if p.stem not in scripts]
    assert {p.stem: imports(p) & scripts for p in shared if imports(p) & scripts} == {}


def test_helpers_do_not_import_the_renderer() -> None:
    helpers = list(BENCHMARKS.glob('_*.py'))
    assert helpers
    assert {p.stem: imports(p) & RENDERER for p in helpers if imports(p) & RENDERER} == {}
