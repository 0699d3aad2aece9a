"""`BubblewrapRunner`: each script runs in a bubblewrap (`bwrap`) sandbox that sees almost nothing of the host.

Inside the sandbox:

- `/skill` is the skill folder, read-only, mounted from the folder discovery accepted (an open descriptor, so a
  folder swapped for a symlink since cannot redirect it);
- `/workdir` is a fresh, writable directory, the current directory and `HOME`: the model's input files are written
  there first, and the files left there are listed after the run, then deleted;
- `/usr` (and `/bin`, `/lib*`), and the agent's Python installation, are there read-only so interpreters run;
  nothing else of the file system is;
- there is no network (a new, empty network namespace), no other process is visible (a new PID namespace), and the
  environment holds only `PATH`, `HOME`, `TMPDIR` and `LANG`;
- processes, memory per process and file size are capped with `prlimit`; an agent running as root drops the script
  to the `nobody` user first (root ignores the process cap);
- the run is killed at its time limit: killing `bwrap` ends the PID namespace and every process in it.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ScriptError, SkillError
from ..files import FolderChangedError
from .process import run_bounded
from .runner import ScriptLimits, ScriptRequest, ScriptResult
from .workdir import left_files, work_directory

SKILL_MOUNT = '/skill'
"""Where the skill folder appears inside the sandbox."""
WORK_MOUNT = '/workdir'
"""The run's work directory inside the sandbox (its current directory)."""
NOBODY = 65534
"""The user an agent running as root runs scripts as."""
_SYSTEM_DIRS = ('/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32')


@dataclass
class BubblewrapRunner:
    """Run each script in a bubblewrap sandbox: read-only skill folder, fresh work directory, no network, no
    secrets, limited time, output, processes and memory. The default runner of `Skills(scripts=True)`.

    Needs the `bwrap` program (Debian/Ubuntu: `apt-get install bubblewrap`) and a kernel that allows it to
    create namespaces.
    """

    limits: ScriptLimits = field(default_factory=ScriptLimits)
    """What one run may use."""
    bwrap: str = 'bwrap'
    """The bubblewrap program, by name (looked up on `PATH`) or path."""

    def __post_init__(self) -> None:
        found = shutil.which(self.bwrap)
        if found is None:
            raise SkillError(
                f'skill scripts run in a bubblewrap sandbox, but {self.bwrap!r} was not found: install bubblewrap '
                '(e.g. `apt-get install bubblewrap`), or pass `scripts=LocalRunner()` to run scripts unsandboxed '
                'if you trust every skill'
            )
        self.bwrap = found

    def skill_dir(self, folder: Path) -> str:
        """The mount point of every skill folder inside the sandbox."""
        return SKILL_MOUNT

    async def run(self, request: ScriptRequest) -> ScriptResult:
        """Run the script in a new sandbox; its work directory is deleted afterwards."""
        owner = NOBODY if os.geteuid() == 0 else None
        try:
            folder = request.folder.open()
        except FolderChangedError:
            raise ScriptError('the skill folder changed after the library was read; load the skill again') from None
        try:
            with work_directory(request.files, owner=owner) as workdir:
                finished = await run_bounded(
                    self.command(request, folder, str(workdir), as_nobody=owner is not None),
                    cwd=str(workdir),
                    env={'PATH': os.environ.get('PATH', '/usr/bin:/bin')},
                    timeout=self.limits.timeout,
                    max_output_bytes=self.limits.max_output_bytes,
                    pass_fds=(folder,),
                )
                files = left_files(workdir)
        finally:
            os.close(folder)
        output = finished.output.decode('utf-8', 'replace')
        if finished.exit_code == 1 and output.startswith('bwrap: ') and output.count('\n') <= 1:
            raise ScriptError(f'the sandbox could not start ({output.strip()})')
        return ScriptResult(finished.exit_code, output, finished.output_bytes, files)

    def command(self, request: ScriptRequest, folder: int, workdir: str, *, as_nobody: bool) -> list[str]:
        """The `bwrap` command line of one run; `folder` is the open skill folder, `workdir` the work directory."""
        isolation = ['--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try']
        if not as_nobody:
            isolation.append('--unshare-user')
        environment = ['--clearenv', '--setenv', 'PATH', '/usr/local/bin:/usr/bin:/bin']
        for name, value in (('HOME', WORK_MOUNT), ('TMPDIR', WORK_MOUNT), ('LANG', 'C.UTF-8')):
            environment += ['--setenv', name, value]
        mounts = [*_system_mounts(), *_prefix_mounts(request.interpreter[0])]
        mounts += ['--ro-bind-fd', str(folder), SKILL_MOUNT, '--bind', workdir, WORK_MOUNT, '--chdir', WORK_MOUNT]
        limits = [
            'prlimit',
            f'--nproc={self.limits.max_processes}',
            f'--as={self.limits.max_memory_bytes}',
            f'--fsize={self.limits.max_file_bytes}',
            '--',
        ]
        drop = [
            *('setpriv', f'--reuid={NOBODY}', f'--regid={NOBODY}', '--clear-groups'),
            *('--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--'),
        ]
        script = f'{SKILL_MOUNT}/{request.script.as_posix()}'
        return [
            self.bwrap,
            *isolation,
            '--die-with-parent',
            '--new-session',
            '--proc',
            '/proc',
            '--dev',
            '/dev',
            *mounts,
            *environment,
            '--',
            *(drop if as_nobody else []),
            *limits,
            *request.interpreter,
            script,
            *request.args,
        ]


def _system_mounts() -> list[str]:
    """`/usr` and the top-level system directories, read-only (a merged-`/usr` link stays a link)."""
    mounts = ['--ro-bind', '/usr', '/usr']
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            mounts += ['--symlink', os.readlink(path), path]
        elif os.path.isdir(path):
            mounts += ['--ro-bind', path, path]
    return mounts


def _prefix_mounts(interpreter: str) -> list[str]:
    """The agent's Python installation (its virtual environment and the base install) and the interpreter's own
    installation, read-only at their own paths, where they lie outside `/usr`; their parents are made traversable
    (bubblewrap copies the host's modes, and a parent such as `/root` may be closed to the `nobody` user)."""
    real = os.path.realpath(interpreter)
    prefixes = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        os.path.dirname(os.path.dirname(real)),
    }
    mounts: list[str] = []
    made: set[str] = set()
    for prefix in sorted(os.path.realpath(prefix) for prefix in prefixes):
        if prefix == '/' or any(prefix.startswith(top + '/') for top in ('/usr', *_SYSTEM_DIRS)):
            continue
        for parent in _parents(prefix):
            if parent not in made:
                made.add(parent)
                mounts += ['--perms', '0755', '--dir', parent]
        mounts += ['--ro-bind', prefix, prefix]
    return mounts


def _parents(path: str) -> list[str]:
    parents: list[str] = []
    while (path := os.path.dirname(path)) != '/':
        parents.append(path)
    return parents[::-1]
