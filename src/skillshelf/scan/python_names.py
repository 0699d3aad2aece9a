"""Names in Python source as the rules read them (`ast`, nothing run): what an imported name stands for
(`b64` → `base64`), the dotted name of a call, the command a call starts, the string constants of an expression, the
names an assignment binds."""

from __future__ import annotations

import ast

__all__ = ('aliases', 'command_text', 'joined_constants', 'qualified', 'target_names')


def command_text(node: ast.Call) -> str:
    """The command a call starts, when its first argument is a literal string or a list of literal strings."""
    if not node.args:
        return ''
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    if isinstance(first, (ast.List, ast.Tuple)):
        words = [item.value for item in first.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]
        if len(words) == len(first.elts):
            if len(words) >= 3 and words[1] in ('-c', '-lc'):
                return words[2]
            return ' '.join(words)
    return ''


def joined_constants(node: ast.AST) -> str:
    """The string constants inside an expression, joined by `/`: `os.path.join(home, '.ssh', 'id_rsa')` gives
    `.ssh/id_rsa`, `Path.home() / '.bashrc'` gives `/.bashrc`."""
    parts = [
        inner.value for inner in ast.walk(node) if isinstance(inner, ast.Constant) and isinstance(inner.value, str)
    ]
    return '/' + '/'.join(part.strip('/') for part in parts) if parts else ''


def target_names(node: ast.AST) -> list[str]:
    """The names an assignment, a `with ... as` or a `:=` binds."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.withitem):
        targets = [node.optional_vars] if node.optional_vars is not None else []
    elif isinstance(node, (ast.AnnAssign, ast.NamedExpr, ast.AugAssign)):
        targets = [node.target]
    return [inner.id for target in targets for inner in ast.walk(target) if isinstance(inner, ast.Name)]


def aliases(tree: ast.AST) -> dict[str, str]:
    """Local names of imported modules and functions → their full names (`b64` → `base64`, `urlopen` →
    `urllib.request.urlopen`)."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split('.')[0]] = (
                    alias.name if alias.asname else alias.name.split('.')[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = f'{node.module}.{alias.name}'
    return found


def qualified(aliases: dict[str, str], node: ast.AST) -> str | None:
    """The dotted name a call's function or an expression stands for, imports resolved; `None` for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if (
        isinstance(node, ast.Call)
        and qualified(aliases, node.func) in ('__import__', 'importlib.import_module')
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        return '.'.join([str(node.args[0].value), *reversed(parts)])
    if not isinstance(node, ast.Name):
        return None
    return '.'.join([aliases.get(node.id, node.id), *reversed(parts)])
