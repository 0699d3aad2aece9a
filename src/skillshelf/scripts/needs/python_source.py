"""What a Python script needs, read with `ast` (nothing is run): the modules it imports, the programs it starts
with `subprocess` by a literal name, its PEP 723 header; and the packages a `requirements.txt` lists.

Kept honest: only what the source states outright counts. An import or program under a `try` that catches its
absence (`except ImportError`, `except FileNotFoundError`), or a program the script looks up with `shutil.which`,
is optional. Imports under `if TYPE_CHECKING:` and relative imports are left out, as are the skill's own modules
(a script's folder and the skill's folder are on `sys.path` when it runs).
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from .model import Need
from .shell import shell_commands

__all__ = ('COMMAND_NAME', 'PythonFindings', 'python_needs', 'requirement_need', 'requirements_needs', 'script_header')

COMMAND_NAME = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.+-]*')
"""A program named without a path, as `PATH` finds it."""
_IMPORT_GUARDS = frozenset({'ImportError', 'ModuleNotFoundError', 'Exception', 'BaseException', '*'})
_RUN_GUARDS = frozenset(
    {'FileNotFoundError', 'OSError', 'EnvironmentError', 'IOError', 'Exception', 'BaseException', '*'}
)
_RUNNERS = frozenset({'run', 'Popen', 'call', 'check_call', 'check_output', 'getoutput', 'getstatusoutput'})
_SHELL_RUNNERS = frozenset({'getoutput', 'getstatusoutput'})
_BLOCK_START = re.compile(r'# /// (?P<type>[a-zA-Z0-9-]+)')
_REQUIREMENT = re.compile(r'\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*(?P<rest>.*)')
_STDLIB = frozenset(sys.stdlib_module_names)


@dataclass
class PythonFindings:
    """What one Python file needs: `(need, where)` sightings, the standard-library modules it imports, and what
    could not be read."""

    sightings: list[tuple[Need, str]] = field(default_factory=list[tuple[Need, str]])
    """Modules, programs and the header's packages and Python version, each with the file."""
    stdlib: list[tuple[Need, str]] = field(default_factory=list[tuple[Need, str]])
    """Standard-library modules it imports, each with the file."""
    notes: list[str] = field(default_factory=list[str])
    """What could not be read, and why."""


def python_needs(path: str, source: str, local: set[str]) -> PythonFindings:
    """The needs of the Python file `path` holding `source`; `local` are the skill's own top-level module names."""
    findings = PythonFindings()
    header = script_header(path, source, findings.notes)
    findings.sightings += [(need, path) for need in header]
    try:
        tree = ast.parse(source, filename=path)
        walker = _Walker(_aliases(tree))
        walker.visit(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:  # MemoryError: nested too deep to parse
        line = getattr(error, 'lineno', None)
        findings.notes.append(
            f'{path}: not read as Python ({type(error).__name__}{f" at line {line}" if line else ""})'
        )
        return findings
    for module, optional in walker.imports:
        if module in local or module == '__main__':
            continue
        found = (Need('module', module, optional=optional), path)
        (findings.stdlib if module in _STDLIB else findings.sightings).append(found)
    for program, optional in walker.programs:
        probed = program in walker.probed
        findings.sightings.append((Need('command', program, optional=optional or probed), path))
    return findings


def script_header(path: str, source: str, notes: list[str]) -> list[Need]:
    """The packages and Python version a PEP 723 header (`# /// script`) declares; a header that cannot be read is
    noted in `notes`."""
    blocks = [content for kind, content in _comment_blocks(source) if kind == 'script']
    if not blocks:
        return []
    if len(blocks) > 1:
        notes.append(f'{path}: more than one `# /// script` header; none was read (PEP 723)')
        return []
    text = ''.join(line[2:] + '\n' if line.startswith('# ') else '\n' for line in blocks[0])
    try:
        data = _toml(text)
    except ValueError as error:
        notes.append(f'{path}: its `# /// script` header is not valid TOML ({error})')
        return []
    if data is None:
        notes.append(f'{path}: its `# /// script` header was not read (it needs Python 3.11, or tomli installed)')
        return []
    needs: list[Need] = []
    dependencies = data.get('dependencies', [])
    for item in cast('list[object]', dependencies) if isinstance(dependencies, list) else []:
        need = requirement_need(item) if isinstance(item, str) else None
        if need is None:
            notes.append(f'{path}: header dependency {item!r} not understood')
        else:
            needs.append(need)
    python = data.get('requires-python')
    if isinstance(python, str) and python.strip():
        needs.append(Need('python', 'python', python.strip()))
    return needs


def _comment_blocks(source: str) -> Iterator[tuple[str, list[str]]]:
    """The `# /// TYPE` ... `# ///` blocks of a script, as PEP 723's reference regular expression finds them (a block
    runs to the last `# ///` of its run of comment lines), read line by line: the expression itself takes quadratic
    time on a file of `# /// script` lines."""
    lines = source.splitlines()
    index = 0
    while index < len(lines):
        start = _BLOCK_START.fullmatch(lines[index])
        index += 1
        if start is None:
            continue
        end, close = index, None
        while end < len(lines) and (lines[end] == '#' or lines[end].startswith('# ')):
            if lines[end] == '# ///' and end > index:
                close = end
            end += 1
        if close is not None:
            yield start['type'], lines[index:close]
            index = close + 1
        else:
            index = end


def requirements_needs(path: str, text: str, notes: list[str]) -> list[Need]:
    """The packages a `requirements.txt` lists; options (`-r`, `-e`, `--index-url`) and lines that name no package
    are noted in `notes`, not guessed at."""
    needs: list[Need] = []
    for number, line in _logical_lines(text):
        line = re.sub(r'(^|\s)#.*', '', line).strip()
        if not line:
            continue
        need = None if line.startswith('-') else requirement_need(line)
        if need is None:
            notes.append(f'{path}:{number}: {line!r} not read (only package requirements are)')
        else:
            needs.append(need)
    return needs


def requirement_need(text: str) -> Need | None:
    """A package need from a PEP 508 requirement (`pillow>=10`, `markitdown[pptx]`, `pkg; sys_platform == "win32"`),
    or `None` for text that names no package (a path, a URL on its own)."""
    spec = text.split(' --', 1)[0].strip()  # `--hash=...` options of a pinned requirements file
    match = _REQUIREMENT.fullmatch(spec)
    if match is None or match['rest'][:1] not in ('', ';', '@', '<', '>', '=', '!', '~', '('):
        return None
    return Need('package', match['name'], spec)


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    pending, start = '', 0
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        if line.endswith('\\'):
            pending += line[:-1] + ' '
            continue
        yield start, pending + line
        pending = ''
    if pending:
        yield start, pending


def _toml(text: str) -> dict[str, Any] | None:
    """`text` read as TOML by `tomllib` (Python 3.11+) or `tomli`; `None` when neither is there."""
    for name in ('tomllib', 'tomli'):
        try:
            toml: Any = importlib.import_module(name)
        except ImportError:
            continue
        break
    else:
        return None
    try:
        return cast('dict[str, Any]', toml.loads(text))
    except Exception as error:  # tomllib.TOMLDecodeError, a ValueError
        raise ValueError(str(error)) from None


@dataclass
class _Aliases:
    """The names a script binds to `subprocess`, `os`, `shutil` and `asyncio` and to their functions."""

    modules: dict[str, str] = field(default_factory=dict[str, str])
    functions: dict[str, str] = field(default_factory=dict[str, str])
    """A bare name → `module.function`."""


def _aliases(tree: ast.AST) -> _Aliases:
    aliases = _Aliases()
    wanted = {'subprocess', 'os', 'shutil', 'asyncio'}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in wanted:
                    aliases.modules[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in wanted:
            for alias in node.names:
                aliases.functions[alias.asname or alias.name] = f'{node.module}.{alias.name}'
    return aliases


class _Walker(ast.NodeVisitor):
    """Collects imports and started programs, and whether each sits under a `try` that catches its absence."""

    def __init__(self, aliases: _Aliases) -> None:
        self.aliases = aliases
        self.caught: list[frozenset[str]] = []
        self.imports: list[tuple[str, bool]] = []
        self.programs: list[tuple[str, bool]] = []
        self.probed: set[str] = set()

    def guarded(self, guards: frozenset[str]) -> bool:
        return any(names & guards for names in self.caught)

    def visit_Try(self, node: ast.Try) -> None:
        self.caught.append(frozenset(name for handler in node.handlers for name in _caught(handler.type)))
        for statement in node.body:
            self.visit(statement)
        self.caught.pop()
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    visit_TryStar = visit_Try  # pyright: ignore[reportAssignmentType]

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for statement in node.orelse:
                self.visit(statement)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imports.append((alias.name.split('.', 1)[0], self.guarded(_IMPORT_GUARDS)))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0 and node.module:
            self.imports.append((node.module.split('.', 1)[0], self.guarded(_IMPORT_GUARDS)))

    def visit_Call(self, node: ast.Call) -> None:
        function = self._function(node.func)
        if function is not None and node.args:
            module, name = function.split('.', 1)
            first = node.args[0]
            if module == 'shutil' and name == 'which':
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    self.probed.add(first.value)
            elif (module == 'subprocess' and name in _RUNNERS) or (
                module in ('os', 'asyncio')
                and name in ('system', 'popen', 'create_subprocess_exec', 'create_subprocess_shell')
            ):
                shell = name in _SHELL_RUNNERS or name in ('system', 'popen', 'create_subprocess_shell')
                guarded = self.guarded(_RUN_GUARDS)
                self.programs += [(program, guarded) for program in _programs(first, shell or _shell_argument(node))]
        self.generic_visit(node)

    def _function(self, func: ast.expr) -> str | None:
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            module = self.aliases.modules.get(func.value.id)
            return f'{module}.{func.attr}' if module is not None else None
        if isinstance(func, ast.Name):
            return self.aliases.functions.get(func.id)
        return None


def _caught(expression: ast.expr | None) -> Iterator[str]:
    if expression is None:
        yield '*'
    elif isinstance(expression, ast.Tuple):
        for item in expression.elts:
            yield from _caught(item)
    elif isinstance(expression, ast.Name):
        yield expression.id
    elif isinstance(expression, ast.Attribute):
        yield expression.attr


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == 'TYPE_CHECKING') or (
        isinstance(test, ast.Attribute) and test.attr == 'TYPE_CHECKING'
    )


def _shell_argument(call: ast.Call) -> bool:
    return any(
        keyword.arg == 'shell' and isinstance(keyword.value, ast.Constant) and keyword.value.value is True
        for keyword in call.keywords
    )


def _programs(argument: ast.expr, shell: bool) -> list[str]:
    """The programs a literal command names: the first item of a list (`['soffice', ...]`, `['soffice'] + args`), or
    the commands of a shell string; none when the command is not written out."""
    if isinstance(argument, ast.BinOp) and isinstance(argument.op, ast.Add):
        argument = argument.left
    if isinstance(argument, ast.List | ast.Tuple) and argument.elts:
        first = argument.elts[0]
        word = first.value if isinstance(first, ast.Constant) else None
        return [word] if isinstance(word, str) and COMMAND_NAME.fullmatch(word) else []
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        if shell:
            return list(shell_commands(argument.value).commands)
        return [argument.value] if COMMAND_NAME.fullmatch(argument.value) else []
    return []
