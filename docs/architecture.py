"""Write the module map of docs/architecture.md from the code: every module of `src/skillshelf`, on its import floor.

A module's floor is one above the highest floor it imports from (imports inside functions and under
`TYPE_CHECKING` count too), so a module may import only from floors below its own, and an import cycle has no
floors at all: this script then fails, naming the cycle. Packages (a folder, or a module beside them) get floors
the same way from the imports between them, so a cycle between two folders fails too. Each is described by the
first sentence of its docstring. The map is drawn by wing: the skills core, then each annex (`ANNEXES`), a product
beside the capability that the core never imports at import time. `tests/docs/test_architecture.py` fails when the
file differs from what this writes, or when the core imports an annex other than through its lazy `EDGES`.

    python docs/architecture.py
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / 'src' / 'skillshelf'
DOC = ROOT / 'docs' / 'architecture.md'
START, END = '<!--modules-->', '<!--/modules-->'

ANNEXES = ('sandbox/', 'registry/', 'authoring/', 'mcp/')
"""The annexes: products beside the skills capability, each in a folder of its own; everything else is the core."""
ENTRY_POINTS = {'__main__.py': 'authoring/'}
"""Modules beside the packages that belong to an annex: `python -m skillshelf` is the command line."""
EDGES = {
    ('capability/skills.py', 'sandbox/'),
    ('library/source_spec.py', 'registry/'),
    ('library/source_spec.py', 'mcp/'),
}
"""The core's only ways into an annex, each an import inside a function: the default sandbox of `Skills(scripts=True)`
and the registry or MCP server a spec names. (`__init__.py` names annex classes as strings, imported when first
used.)"""


def modules() -> list[str]:
    """Every module, as its path under `src/skillshelf` (`capability/skills.py`)."""
    return sorted(path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob('*.py'))


def imports(module: str, known: set[str], *, at_import_time: bool = False) -> set[str]:
    """The modules of the package that `module` imports, wherever the import statement is; with `at_import_time`,
    only those its import runs (not inside a function, nor under `TYPE_CHECKING`)."""
    tree = ast.parse((PACKAGE / module).read_text(encoding='utf-8'))
    package = module.split('/')[:-1]
    found: set[str] = set()
    for node in _run_at_import(tree.body) if at_import_time else ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
            elif node.module and node.module.split('.')[0] == 'skillshelf':
                base = []
            else:
                continue
            parts = [*base, *(node.module.split('.') if node.module else [])]
            if not node.level:
                parts = parts[1:]  # the `skillshelf` itself
            for alias in node.names:
                found.add(_resolve([*parts, alias.name], known) or _resolve(parts, known) or '')
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split('.')[0] == 'skillshelf':
                    found.add(_resolve(alias.name.split('.')[1:], known) or '')
    return found - {'', module}


def _run_at_import(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a module body that run when it is imported, blocks entered (but not `if TYPE_CHECKING:`)."""
    found: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If) and 'TYPE_CHECKING' in ast.unparse(node.test):
            found += _run_at_import(node.orelse)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            found += _run_at_import([*node.body, *getattr(node, 'orelse', []), *getattr(node, 'finalbody', [])])
            for handler in getattr(node, 'handlers', []):
                found += _run_at_import(handler.body)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append(node)
        elif isinstance(node, ast.ClassDef):
            found += _run_at_import(node.body)
    return found


def _resolve(parts: list[str], known: set[str]) -> str | None:
    """The module `parts` names: `a/b.py`, or the package `a/b/__init__.py`."""
    for candidate in ('/'.join(parts) + '.py', '/'.join([*parts, '__init__.py'])):
        if candidate.lstrip('/') in known:
            return candidate.lstrip('/')
    return None


def unit(module: str) -> str:
    """The package a module belongs to: its top folder (`capability/`), or itself beside them (`skill.py`)."""
    return module.split('/')[0] + '/' if '/' in module else module


def wing(module: str) -> str:
    """The wing a module or package belongs to: its annex (`sandbox/`), or `core`."""
    if module in ENTRY_POINTS:
        return ENTRY_POINTS[module]
    return unit(module) if unit(module) in ANNEXES else 'core'


def lines_of(module: str) -> int:
    """The lines of a module."""
    return len((PACKAGE / module).read_text(encoding='utf-8').splitlines())


def import_graph() -> dict[str, set[str]]:
    """Each module, and the modules of the package it imports."""
    known = set(modules())
    return {module: imports(module, known) for module in known}


def package_graph() -> dict[str, set[str]]:
    """Each package (see `unit`), and the other packages it imports."""
    graph: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        graph.setdefault(unit(module), set()).update(unit(target) for target in targets if unit(target) != unit(module))
    return graph


def floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each node's floor: 0 for a node importing none of the others, else one above its highest import.

    Raises:
        ValueError: the imports have a cycle (named in the message).
    """
    floor: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> int:
        if module in path:
            cycle = ' → '.join([*path[path.index(module) :], module])
            raise ValueError(f'import cycle: {cycle}')
        if module not in floor:
            floor[module] = 1 + max((visit(target, [*path, module]) for target in graph[module]), default=-1)
        return floor[module]

    for module in sorted(graph):
        visit(module, [])
    return floor


def summary(module: str) -> str:
    """The first sentence of the module's (or the package's) docstring, on one line."""
    path = PACKAGE / module / '__init__.py' if module.endswith('/') else PACKAGE / module
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding='utf-8'))) or ''
    paragraph = ' '.join(docstring.split('\n\n')[0].split())
    sentence = re.split(r'(?<=[.!?])\s+(?=[A-Z`])', paragraph, maxsplit=1)[0]
    return sentence.replace('|', '\\|')


def module_map() -> str:
    """The generated section: the wings with their sizes, the packages by floor (the top first), then each wing's
    modules by floor."""
    packages, floor = floors(package_graph()), floors(import_graph())
    wings = ['core', *ANNEXES]
    lines = [START, '', '### Wings', '', '| wing | modules | lines | what it is |', '|---|---|---|---|']
    for name in wings:
        members = [module for module in floor if wing(module) == name]
        what = 'the skills capability and everything it runs on' if name == 'core' else summary(name)
        shown = name if name == 'core' else f'`{name}`'
        lines.append(f'| {shown} | {len(members)} | {sum(map(lines_of, members)):,} | {what} |')
    lines += ['', '### Packages', '', '| floor | package | wing | what it is |', '|---|---|---|---|']
    for package in sorted(packages, key=lambda name: (-packages[name], name)):
        lines.append(f'| {packages[package]} | `{package}` | {wing(package)} | {summary(package)} |')
    for name in wings:
        members = sorted((module for module in floor if wing(module) == name), key=lambda m: (-floor[m], m))
        title = 'The core' if name == 'core' else f'Annex `{name}`'
        lines += ['', f'### {title}: {len(members)} modules', '', '| floor | module | what it is |', '|---|---|---|']
        lines += [f'| {floor[module]} | `{module}` | {summary(module)} |' for module in members]
    return '\n'.join([*lines, '', END])


def rendered() -> str:
    """docs/architecture.md with its module map as the code is now."""
    text = DOC.read_text(encoding='utf-8')
    start, end = text.index(START), text.index(END) + len(END)
    return text[:start] + module_map() + text[end:]


if __name__ == '__main__':
    DOC.write_text(rendered(), encoding='utf-8')
    print(f'wrote {DOC.relative_to(ROOT)}')
