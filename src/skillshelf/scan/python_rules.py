"""The command rules on Python code, read with `ast` (nothing is run): code fetched or decoded and then executed
(`exec(urlopen(...).read())`, `exec(base64.b64decode(...))`), credentials read and sent out, writes to places
that run things later, home or root folders deleted; and the shell commands a script starts with a literal
string (`os.system("curl ... | sh")`), judged by the shell rules.

A name assigned from fetched, decoded or secret data carries that along (`code = b64decode(blob); exec(code)`),
whatever the function: the reading is flow-insensitive, which is enough for the few lines such code takes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from .dependency_rules import requirement_findings
from .finding import Hit
from .python_names import aliases, command_text, joined_constants, qualified, target_names
from .vocabulary import AUTOSTART, CREDENTIAL_STORE, GIT_HOOKS, OTHER_SKILLS, SHELL_PROFILE

__all__ = ('python_findings',)

ShellRules = Callable[[str, int], list[Hit]]

_DECODERS = frozenset(
    {
        'base64.b64decode',
        'base64.b32decode',
        'base64.b16decode',
        'base64.a85decode',
        'base64.b85decode',
        'base64.decodebytes',
        'base64.urlsafe_b64decode',
        'codecs.decode',
        'bytes.fromhex',
        'binascii.unhexlify',
        'binascii.a2b_base64',
        'zlib.decompress',
        'gzip.decompress',
        'bz2.decompress',
        'lzma.decompress',
    }
)
_FETCHERS = frozenset(
    {
        'urllib.request.urlopen',
        'urllib.urlopen',
        'urllib2.urlopen',
        'requests.get',
        'requests.request',
        'httpx.get',
        'httpx.request',
        'urllib.request.Request',
        'http.client.HTTPSConnection',
        'http.client.HTTPConnection',
    }
)
_EXECUTORS = frozenset(
    {'exec', 'eval', 'compile', 'builtins.exec', 'builtins.eval', 'marshal.loads', 'pickle.loads', 'types.FunctionType'}
)
_SENDERS = frozenset(
    {
        'requests.post',
        'requests.put',
        'requests.patch',
        'httpx.post',
        'httpx.put',
        'smtplib.SMTP',
        'smtplib.SMTP_SSL',
        'ftplib.FTP',
        'socket.create_connection',
        'urllib.request.urlopen',
        'paramiko.SSHClient',
    }
)
_SEND_METHODS = frozenset({'post', 'put', 'sendall', 'sendmail', 'send_message', 'storbinary', 'upload_file'})
_SHELL = frozenset(
    {
        'os.system',
        'os.popen',
        'subprocess.run',
        'subprocess.call',
        'subprocess.check_call',
        'subprocess.check_output',
        'subprocess.Popen',
        'subprocess.getoutput',
        'subprocess.getstatusoutput',
        'pty.spawn',
        'os.execvp',
        'os.execv',
    }
)
_DELETERS = frozenset({'shutil.rmtree', 'os.removedirs'})
_HOME = frozenset({'os.path.expanduser', 'pathlib.Path.home', 'Path.home', 'os.getenv', 'os.environ.get'})
_ENV_DUMPS = frozenset({'json.dumps', 'str', 'repr', 'dict', 'os.environ.copy', 'os.environ.items'})


@dataclass
class _Module:
    aliases: dict[str, str]
    tainted: dict[str, set[str]] = field(default_factory=dict[str, set[str]])
    """A name → the kinds of data assigned to it (`fetched`, `decoded`, `secret`)."""
    paths: dict[str, str] = field(default_factory=dict[str, str])
    """A name → the string constants of what was assigned to it, joined as a path (see `joined_constants`)."""
    memo: dict[int, frozenset[str]] = field(default_factory=dict[int, frozenset[str]])
    """Each expression's kinds, by node, while `tainted` stays as it is."""


def python_findings(source: str, first_line: int, shell: ShellRules) -> list[Hit]:
    """The findings in Python `source`, which starts on line `first_line` of its file; the commands it starts are
    judged by `shell` (the shell rules)."""
    if not _worth_parsing(source):
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    module = _Module(aliases(tree))
    assignments = [
        node for node in ast.walk(tree) if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.withitem))
    ]
    for _ in range(2):  # twice, so a name assigned from another tainted name is tainted too
        for node in assignments:
            value = node.context_expr if isinstance(node, ast.withitem) else node.value
            targets = target_names(node)
            kinds = _kinds(module, value) if value is not None else set[str]()
            constants = joined_constants(value) if value is not None else ''
            for name in targets:
                module.tainted.setdefault(name, set()).update(kinds)
                if constants:
                    module.paths[name] = constants
        module.memo.clear()
    hits: list[Hit] = []
    reads_secret = sends = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        line = first_line + node.lineno - 1
        name = qualified(module.aliases, node.func)
        inputs = set[str]().union(*(_kinds(module, arg) for arg in [*node.args, *(k.value for k in node.keywords)]))
        if name in _EXECUTORS and 'fetched' in inputs:
            hits.append((line, 'remote-code', 'critical', f'runs code fetched from the network with {name}()'))
        elif name in _EXECUTORS and 'decoded' in inputs:
            hits.append(
                (line, 'decoded-code', 'critical', f'decodes a payload and runs it with {name}(), hiding what runs')
            )
        if _sends(name, node):
            sends = sends or line
            if 'secret' in inputs:
                hits.append(
                    (
                        line,
                        'exfiltration',
                        'critical',
                        'sends credentials (keys, tokens, cookies or the environment) out of the machine',
                    )
                )
        if 'secret' in _kinds(module, node) and not reads_secret:
            reads_secret = line
        if name in _SHELL:
            command = command_text(node)
            if command:
                hits.extend(shell(command, line))
        if name in _DELETERS and node.args and _is_home_or_root(module, node.args[0]):
            hits.append((line, 'destructive', 'critical', 'deletes the home or root folder and everything under it'))
        hits.extend(_writes(module, node, name, line, source))
    if reads_secret and sends and not any(hit[1] == 'exfiltration' for hit in hits) and _credential_file(tree):
        hits.append(
            (
                reads_secret,
                'exfiltration',
                'critical',
                f'reads a credential store here and sends data out on line {sends}',
            )
        )
    hits.extend(_header_findings(source, first_line))
    return hits


_SINKS = (
    'exec',
    'eval',
    'compile(',
    'loads(',
    'system(',
    'popen(',
    'subprocess',
    'rmtree',
    'removedirs',
    'pty.',
    '# /// script',
    'FunctionType',
    'bashrc',
    'zshrc',
    '.profile',
    'bash_profile',
    'zprofile',
    'cron',
    'Launch',
    'systemd',
    'autostart',
    'hooks',
    'authorized_keys',
    '.claude',
    '.codex',
    '.agents',
)
"""What Python code holds if a rule can find anything in it beyond credentials sent out."""
_SECRETS = ('.ssh', 'credentials', 'netrc', 'Cookies', 'environ', 'Login Data', 'cookies.sqlite', 'Keychain')
_SENDS = ('post', 'put(', 'send', 'socket', 'smtp', 'SMTP', 'urlopen', 'FTP', 'upload')


def _worth_parsing(source: str) -> bool:
    """Whether `source` holds what a rule looks for: parsing is the slow part, and most code holds none of it."""
    return any(word in source for word in _SINKS) or (
        any(word in source for word in _SECRETS) and any(word in source for word in _SENDS)
    )


def _kinds(module: _Module, node: ast.AST) -> frozenset[str]:
    """What kinds of data an expression carries (fetched from the network, decoded, secret): its own and its
    parts', each node worked out once."""
    known = module.memo.get(id(node))
    if known is None:
        known = _own_kinds(module, node)
        for child in ast.iter_child_nodes(node):
            known = known | _kinds(module, child)
        module.memo[id(node)] = known
    return known


def _own_kinds(module: _Module, node: ast.AST) -> frozenset[str]:
    kinds: set[str] = set()
    if isinstance(node, ast.Call):
        name = qualified(module.aliases, node.func) or ''
        if name in _DECODERS or (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == 'decode'
            and any(isinstance(arg, ast.Constant) and arg.value in _CODECS for arg in node.args)
        ):
            kinds.add('decoded')
        if name in _FETCHERS or name.startswith(('requests.', 'httpx.', 'urllib.request.')):
            kinds.add('fetched')
        if name in ('os.environ.copy', 'os.environ.items') or (
            name in _ENV_DUMPS and any(_is_environ(module, arg) for arg in node.args)
        ):
            kinds.add('secret')
        if CREDENTIAL_STORE.search(joined_constants(node)) or (
            name in _SHELL and CREDENTIAL_STORE.search(command_text(node))
        ):
            kinds.add('secret')
    elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and CREDENTIAL_STORE.search(node.value)) or (
        isinstance(node, ast.BinOp) and CREDENTIAL_STORE.search(joined_constants(node))
    ):
        kinds.add('secret')
    elif isinstance(node, ast.Name) and node.id in module.tainted:
        kinds |= module.tainted[node.id]
    return frozenset(kinds)


_CODECS = frozenset({'base64', 'hex', 'rot13', 'rot_13', 'zlib'})


def _sends(name: str | None, node: ast.Call) -> bool:
    if name == 'urllib.request.urlopen':
        return len(node.args) > 1 or any(k.arg == 'data' for k in node.keywords)
    if name in _SENDERS:
        return True
    return isinstance(node.func, ast.Attribute) and node.func.attr in _SEND_METHODS


def _writes(module: _Module, node: ast.Call, name: str | None, line: int, source: str) -> list[Hit]:
    """A write to a shell profile, an autostart place, a git hook or another skill's folder."""
    path: ast.AST | None = None
    if name in ('open', 'io.open', 'builtins.open') and node.args:
        mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == 'mode'), None)
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) & set('wax'):
            path = node.args[0]
    elif isinstance(node.func, ast.Attribute) and node.func.attr in (
        'write_text',
        'write_bytes',
        'symlink_to',
        'hardlink_to',
    ):
        path = node.func.value
    elif (
        name
        in (
            'shutil.copy',
            'shutil.copy2',
            'shutil.copyfile',
            'shutil.copytree',
            'shutil.move',
            'os.symlink',
            'os.rename',
        )
        and len(node.args) > 1
    ):
        path = node.args[1]
    if path is None:
        return []
    target = module.paths.get(path.id, '') if isinstance(path, ast.Name) else joined_constants(path)
    runs = any(word in source for word in ('urlopen', 'requests.', 'b64decode', 'curl ', 'wget ', 'exec(', '/dev/tcp'))
    if AUTOSTART.search(target):
        return [
            (
                line,
                'persistence',
                'critical',
                f'writes {target}, which runs or lets in something at login, boot or on a schedule',
            )
        ]
    if SHELL_PROFILE.search(target):
        return [
            (
                line,
                'persistence',
                'critical' if runs else 'warning',
                f'writes the shell profile {target}: every new shell runs what it adds',
            )
        ]
    if GIT_HOOKS.search(target):
        return [
            (
                line,
                'persistence',
                'critical' if runs else 'warning',
                f'writes the git hook {target}, which runs at every commit or push',
            )
        ]
    if OTHER_SKILLS.search(target):
        severe = target.endswith(('SKILL.md', '.sh', '.py'))
        return [
            (
                line,
                'other-skills',
                'critical' if severe else 'warning',
                f"writes {target}: another skill, or the agent's own configuration",
            )
        ]
    return []


def _is_home_or_root(module: _Module, node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in ('/', '~', 'C:\\', '/home', '/Users')
    if isinstance(node, ast.Call):
        name = qualified(module.aliases, node.func)
        if name in ('pathlib.Path.home', 'Path.home'):
            return True
        if (
            name in _HOME
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in ('~', 'HOME', '~/')
        ):
            return True
    if isinstance(node, ast.Subscript) and _is_environ(module, node.value):
        return isinstance(node.slice, ast.Constant) and node.slice.value in ('HOME', 'USERPROFILE')
    return False


def _is_environ(module: _Module, node: ast.AST) -> bool:
    return qualified(module.aliases, node) == 'os.environ'


def _credential_file(tree: ast.AST) -> bool:
    return any(
        isinstance(node, ast.Constant) and isinstance(node.value, str) and CREDENTIAL_STORE.search(node.value)
        for node in ast.walk(tree)
    ) or any(isinstance(node, ast.Call) and CREDENTIAL_STORE.search(joined_constants(node)) for node in ast.walk(tree))


def _header_findings(source: str, first_line: int) -> list[Hit]:
    """The dependencies of a PEP 723 header (`# /// script`)."""
    if '# /// script' not in source:
        return []
    lines = source.splitlines()
    start = next(index for index, line in enumerate(lines) if line.strip() == '# /// script')
    block = [line[2:] if line.startswith('# ') else '' for line in lines[start + 1 :]]
    end = next((index for index, line in enumerate(lines[start + 1 :]) if line.strip() == '# ///'), len(block))
    requirements = '\n'.join(
        line.strip().strip(',').strip('"\'') if line.strip().startswith(('"', "'")) else '' for line in block[:end]
    )
    return [
        (first_line + start + number, rule, severity, message)
        for number, rule, severity, message in requirement_findings(requirements)
    ]
