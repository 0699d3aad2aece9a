"""The bubblewrap (`bwrap`) command line of one command in a sandboxed workspace.

Inside the sandbox:

- `/workspace` is the workspace folder, writable, the current directory: the skill's files, the user's inputs and
  what scripts write, kept for the conversation;
- `/usr` (and `/bin`, `/lib*`), the Python installations that run scripts, and the paths the sandbox was told to
  mount, are there read-only; nothing else of the host's file system is;
- `/tmp` and `/dev/shm` are private, each size-capped, and writable by the command's user (sticky, as on a host);
- `/etc` holds the sandbox's own `hosts` (so `localhost` resolves), `passwd` and `group`, and, read-only, the host's
  public system configuration that installed programs read (`system.SYSTEM_CONFIGURATION`: LibreOffice's, fonts,
  `alternatives`, certificate authorities...), never its secrets;
- npm's global packages (`npm root -g`) are on `NODE_PATH`, shown read-only, so a script can `require` them, after
  those of the Python's environment (`<environment>/node/node_modules`, see `scripts.environment`);
- there is no network but the loopback interface (a new network namespace) unless the sandbox allows it, no other
  process is visible (a new PID namespace), and the environment holds only `PATH`, `HOME`, `TMPDIR`, `LANG` and
  `NODE_PATH` and what the command adds;
- processes, memory per process and file size are capped with `prlimit` (memory in all by a cgroup the command
  joins before bubblewrap starts, where one can be made: see `memory`). An agent running as root drops the
  command to the workspace's own user first (root ignores the process cap, and one user per workspace keeps one
  conversation's processes from counting against another's). Otherwise each command runs in its own user namespace,
  where Linux (5.14 on) counts its processes afresh; they also count against the agent's user's own process limit;
- `fallocate`, unnamed files (`O_TMPFILE`) and `io_uring` are refused (a seccomp filter), so disk space is only
  taken by writing a file with a name;
- killing `bwrap` ends the PID namespace and every process in it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..scripts.node import global_node_modules
from .limits import SandboxLimits
from .system import system_configuration

__all__ = (
    'HOME',
    'WORKSPACE_MOUNT',
    'Layout',
    'bwrap_command',
    'command_path',
    'host_path',
    'interpreter_mounts',
    'visible_paths',
)

WORKSPACE_MOUNT = '/workspace'
"""Where the workspace folder appears inside the sandbox: its working directory."""
HOME = f'{WORKSPACE_MOUNT}/.skillshelf/home'
"""`HOME` inside the sandbox: inside the workspace, so programs that keep settings there (LibreOffice) keep them for
the conversation, out of the way of the user's files."""
_SYSTEM_DIRS = ('/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32')
_PATH = '/usr/local/bin:/usr/bin:/bin'


@dataclass(frozen=True)
class Layout:
    """What one sandboxed command sees of the host."""

    folder: str
    """The workspace folder on the host, mounted at `WORKSPACE_MOUNT`."""
    etc: str
    """A host folder holding the sandbox's `hosts`, `passwd` and `group`."""
    read_only: tuple[str, ...]
    """Host paths mounted read-only at their own path (Python installations, the sandbox's `mounts`)."""
    path_first: tuple[str, ...] = ()
    """Folders put before the system ones on `PATH` (the chosen Python's `bin`)."""
    node_path: tuple[str, ...] = ()
    """Folders put before npm's global one on `NODE_PATH` (the Node packages of the chosen Python's environment, see
    `scripts.environment`)."""
    uid: int | None = None
    """The user commands run as; `None` runs them as the agent's user in a user namespace."""
    network: bool = False
    """Share the host's network instead of an empty network namespace."""


def bwrap_command(
    bwrap: str,
    layout: Layout,
    limits: SandboxLimits,
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The command line running `argv` in the sandbox `layout` describes, with `env` added to its environment and
    the seccomp filter bubblewrap reads from `seccomp_fd` (see `seccomp`).

    A program that cannot be found exits 127, as in a shell: the command is started by `sh -c 'exec "$@"'`.
    """
    isolation = ['--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-cgroup-try']
    if not layout.network:
        isolation.append('--unshare-net')
    if layout.uid is None:
        isolation.append('--unshare-user')
    environment = ['--clearenv']
    base = {'PATH': ':'.join([*layout.path_first, _PATH]), 'HOME': HOME, 'TMPDIR': '/tmp', 'LANG': 'C.UTF-8'}
    read_only = layout.read_only
    node_path = list(layout.node_path)
    if (node_modules := global_node_modules()) is not None:
        node_path.append(node_modules)
        if not _within_system(node_modules):  # an npm prefix configured outside /usr
            read_only = (*read_only, node_modules)
    if node_path:
        base['NODE_PATH'] = ':'.join(node_path)
    for name, value in {**base, **(env or {})}.items():
        environment += ['--setenv', name, value]
    # the private /tmp first: a read-only mount under /tmp (a prepared environment there) is laid over it, not hidden;
    # mode 1777 as on a host, or the workspace's own user (an agent running as root) could not write there
    mounts = [*_system_mounts()]
    for private in ('/tmp', '/dev/shm'):  # /dev/shm: POSIX shared memory (Python's multiprocessing), capped alike
        mounts += ['--perms', '1777', '--size', str(limits.max_tmp_bytes), '--tmpfs', private]
    mounts += _read_only_mounts(read_only)
    mounts += ['--dir', '/etc']
    parents: set[str] = set()
    for path in system_configuration():
        for parent in _parents(path)[1:]:  # below /etc (`ssl` of `ssl/certs`), traversable as on the host
            if parent not in parents:
                parents.add(parent)
                mounts += ['--perms', '0755', '--dir', parent]
        mounts += ['--ro-bind', path, path]
    for name in ('hosts', 'passwd', 'group'):
        mounts += ['--ro-bind', os.path.join(layout.etc, name), f'/etc/{name}']
    if layout.network:
        mounts += ['--ro-bind-try', '/etc/resolv.conf', '/etc/resolv.conf']
    mounts += ['--bind', layout.folder, WORKSPACE_MOUNT, '--chdir', WORKSPACE_MOUNT]
    caps = [
        'prlimit',
        f'--nproc={limits.max_processes}',
        f'--as={limits.max_memory_bytes}',
        f'--fsize={limits.max_file_bytes}',
        '--',
    ]
    drop = []
    if layout.uid is not None:
        drop = [
            *('setpriv', f'--reuid={layout.uid}', f'--regid={layout.uid}', '--clear-groups'),
            *('--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--'),
        ]
    return [
        bwrap,
        *isolation,
        '--die-with-parent',
        '--new-session',
        '--proc',
        '/proc',
        '--dev',
        '/dev',
        *mounts,
        *environment,
        *(['--seccomp', str(seccomp_fd)] if seccomp_fd is not None else []),
        '--',
        *drop,
        *caps,
        'sh',
        '-c',
        'exec "$@"',
        'sh',
        *argv,
    ]


def host_path(path: str) -> str:
    """`path` made absolute with its folder resolved as the kernel resolves it (links, then `..`), its last name kept:
    the sandbox mounts only such folders, so a path with `..` through a folder it does not show (an agent started as
    `../venv/bin/python` from `/tmp/x`) names nothing there. The name is kept: a virtual environment's `python` is a
    link its environment is found by."""
    absolute = os.path.join(os.getcwd(), path)  # not `abspath`: it drops `..` before the link it follows is resolved
    folder, name = os.path.split(absolute)
    if name in ('', '.', '..'):
        return os.path.realpath(absolute)
    return os.path.join(os.path.realpath(folder), name)


def interpreter_mounts(python: str) -> tuple[str, ...]:
    """The folders a Python interpreter needs, read-only: its virtual environment and base installation, at the path
    it runs by (`host_path`) and at the real one, and the running agent's own installation (it runs the sandbox's
    file operations)."""
    named = host_path(python)
    agent = host_path(sys.executable)
    places = {
        os.path.dirname(os.path.dirname(named)),
        os.path.dirname(os.path.dirname(os.path.realpath(named))),
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        os.path.dirname(os.path.dirname(agent)),
        os.path.dirname(os.path.dirname(os.path.realpath(agent))),
    }
    found: set[str] = set()
    for place in places:
        for path in (os.path.abspath(place), os.path.realpath(place)):
            if path != '/' and not _within_system(path):
                found.add(path)
    return tuple(sorted(found))


def command_path(python: str) -> str:
    """`PATH` inside the sandbox whose Python is `python`: its `bin` folder, then the system ones."""
    return ':'.join([os.path.dirname(host_path(python)), _PATH])


def visible_paths(python: str, mounts: Iterable[str] = ()) -> tuple[str, ...]:
    """The host paths a sandboxed command sees besides its workspace (all read-only): `/usr` and the system
    folders, the installations `interpreter_mounts` names, and `mounts`. A program elsewhere, or a link on `PATH`
    leading elsewhere, is not there."""
    return ('/usr', *_SYSTEM_DIRS, *interpreter_mounts(python), *(host_path(path) for path in mounts))


def _within_system(path: str) -> bool:
    return any(path == top or path.startswith(top + '/') for top in ('/usr', *_SYSTEM_DIRS))


def _system_mounts() -> list[str]:
    """`/usr` and the top-level system directories, read-only (a merged-`/usr` link stays a link)."""
    mounts = ['--ro-bind', '/usr', '/usr']
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            mounts += ['--symlink', os.readlink(path), path]
        elif os.path.isdir(path):
            mounts += ['--ro-bind', path, path]
    return mounts


def _read_only_mounts(paths: Iterable[str]) -> list[str]:
    """`paths`, read-only at their own path; their parents are made traversable (bubblewrap copies the host's modes,
    and a parent such as `/root` may be closed to the workspace's user)."""
    mounts: list[str] = []
    made: set[str] = set()
    kept: list[str] = []
    for path in sorted(set(paths)):
        if not any(path.startswith(outer + '/') for outer in kept):  # inside one mounted already
            kept.append(path)
    for path in kept:
        for parent in _parents(path):
            if parent not in made:
                made.add(parent)
                mounts += ['--perms', '0755', '--dir', parent]
        mounts += ['--ro-bind', path, path]
    return mounts


def _parents(path: str) -> list[str]:
    parents: list[str] = []
    while (path := os.path.dirname(path)) != '/':
        parents.append(path)
    return parents[::-1]
