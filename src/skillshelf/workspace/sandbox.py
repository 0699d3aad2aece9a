"""`SkillSandbox`: a pydantic-ai workspace in a bubblewrap sandbox, one folder per conversation.

`SkillSandbox` is a capability like pydantic-ai's `LocalWorkspace`: it supplies the run's workspace, a
`SandboxWorkspace` backend whose commands and file operations all run inside bubblewrap (see `bubblewrap`), so
they see the same files, and nothing of the host but the read-only system and Python installations. Each
conversation gets its own folder, created at its first operation and named by the `WorkspaceRef` pydantic-ai keeps
in the message history, so the next run of the conversation continues in it; a ref naming another conversation's
folder is refused. `Skills(scripts=True)` uses one when the agent has no other workspace.

Folders live under `root` until you delete them (`SkillSandbox.delete`, `SkillSandbox.prune`): whoever keeps a
conversation decides when its files go.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.workspaces import (
    CommandResult,
    FileEntry,
    SupportsCommands,
    SupportsFilesystem,
    SupportsRealpath,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceError,
    WorkspaceOutputLimitError,
    WorkspaceRef,
    WorkspaceTimeoutError,
    WorkspaceUnavailableError,
)

from ..errors import SkillError
from .bubblewrap import HOME, WORKSPACE_MOUNT, Layout, bwrap_command, interpreter_mounts
from .limits import ScriptLimits
from .process import Finished, run_process

__all__ = ('PROVIDER', 'SandboxWorkspace', 'SkillSandbox')

PROVIDER = 'skillshelf'
"""The provider of the refs `SkillSandbox` creates."""
MAX_CAPTURE_BYTES = 10 * 1024 * 1024
"""Output a command may write per stream before it is stopped with `WorkspaceOutputLimitError`."""
FILE_OPERATION_TIMEOUT = 120.0
"""Seconds one file operation may take inside the sandbox."""
UID_BASE = 1_900_000_000
"""The first user id given to a workspace when the agent runs as root (far from system and subordinate ranges)."""
_ID = re.compile(r'[0-9a-f]{32}')
_FILE_OPERATIONS = (Path(__file__).parent / 'fileops.py').read_text(encoding='utf-8')
_ERRORS: dict[str, type[Exception]] = {
    error.__name__: error
    for error in (
        FileNotFoundError,
        FileExistsError,
        IsADirectoryError,
        NotADirectoryError,
        PermissionError,
        ValueError,
    )
}


@dataclass
class SkillSandbox(AbstractCapability[Any]):
    """Supply each run a workspace in a bubblewrap sandbox, one folder per conversation (see the module docstring).

    ```python
    agent = Agent(model, capabilities=[SkillSandbox(python='/opt/skills-venv/bin/python'), Skills('skills', scripts=True)])
    ```

    Needs the `bwrap` program (Debian/Ubuntu: `apt-get install bubblewrap`) and a kernel that lets it create
    namespaces. Scripts run on `python` with the packages of its environment: make a virtual environment with what
    your skills need and name its interpreter here; it is mounted read-only.
    """

    root: str | Path | None = None
    """Where the conversations' folders are kept; default `skillshelf-workspaces-<uid>` in the temporary directory."""
    _: KW_ONLY
    python: str | None = None
    """The Python that runs `.py` scripts and `python`/`python3` commands (its `bin` comes first on `PATH`), with its
    virtual environment's packages; default: the agent's own interpreter."""
    mounts: Sequence[str] = ()
    """More host paths to show read-only at their own path (fonts, an office suite, a model's weights)."""
    limits: ScriptLimits = field(default_factory=ScriptLimits)
    """What one command may use (see `ScriptLimits`)."""
    network: bool = False
    """Let commands reach the network (off: only the loopback interface, so a server a script starts on
    `localhost` still answers)."""
    bwrap: str = 'bwrap'
    """The bubblewrap program, by name (looked up on `PATH`) or path."""
    id: str | None = 'skillshelf_sandbox'
    """Capability id."""

    def __post_init__(self) -> None:
        found = shutil.which(self.bwrap)
        if found is None:
            raise SkillError(
                f'the skill sandbox needs bubblewrap, but {self.bwrap!r} was not found: install it (e.g. `apt-get '
                "install bubblewrap`), or give the agent another workspace (pydantic-ai's `LocalWorkspace` runs "
                'commands unsandboxed, for skills you trust like your own code)'
            )
        self.bwrap = found
        self.root = Path(self.root) if self.root is not None else _default_root()
        if self.python is not None and not os.path.isfile(self.python):
            raise SkillError(f"the sandbox's python {self.python!r} is not a file; give the path of an interpreter")

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        """A new workspace for a new conversation, or the one `ref` names; `None` for a ref of another provider."""
        if ref is not None and ref.provider != PROVIDER:
            return None
        return SandboxWorkspace(self, ref, ctx.conversation_id)

    @property
    def folder_root(self) -> Path:
        """The folder holding the conversations' folders."""
        return Path(self.root or _default_root())

    def folder(self, ref: WorkspaceRef) -> Path | None:
        """The host folder of the workspace `ref` names (what a run wrote), or `None` if there is none."""
        if ref.provider != PROVIDER or not _ID.fullmatch(ref.id):
            return None
        folder = self.folder_root / ref.id / 'workspace'
        return folder if folder.is_dir() else None

    def delete(self, ref: WorkspaceRef) -> bool:
        """Delete the workspace `ref` names, stopping its commands first; returns whether there was one."""
        if ref.provider != PROVIDER or not _ID.fullmatch(ref.id):
            return False
        place = self.folder_root / ref.id
        _stop_commands(str(place / 'workspace'))
        existed = place.is_dir()
        shutil.rmtree(place, ignore_errors=True)
        return existed

    def prune(self, older_than: float) -> int:
        """Delete the workspaces not used for `older_than` seconds; returns how many."""
        cutoff = time.time() - older_than
        removed = 0
        for place in _places(self.folder_root):
            with contextlib.suppress(OSError):
                if (place / 'owner.json').stat().st_mtime < cutoff and self.delete(
                    WorkspaceRef(provider=PROVIDER, id=place.name)
                ):
                    removed += 1
        return removed


class SandboxWorkspace(WorkspaceBackend, SupportsCommands, SupportsFilesystem, SupportsRealpath):
    """One conversation's sandboxed workspace: created at its first operation (or attached to, by ref)."""

    def __init__(self, sandbox: SkillSandbox, ref: WorkspaceRef | None = None, conversation: str | None = None):
        """A workspace of `sandbox`: the one `ref` names, else a new one at the first operation. `conversation` is
        the conversation it belongs to: a new folder records it, and attaching to another's folder is refused."""
        self._sandbox = sandbox
        self._ref = ref
        self._conversation = conversation
        self._layout: Layout | None = None
        self._lock = asyncio.Lock()

    @property
    def ref(self) -> WorkspaceRef | None:
        """`skillshelf:<id>`, once the folder exists (or from construction, when attached by ref)."""
        return self._ref

    @property
    def python(self) -> str:
        """The interpreter that runs Python here: the sandbox's `python`, else the agent's own."""
        return self._sandbox.python or sys.executable

    async def working_dir(self) -> str:
        """`/workspace`, the folder as commands see it."""
        await self._ensure()
        return WORKSPACE_MOUNT

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        """Run `command` in the sandbox, starting in `/workspace` (see the `WorkspaceBackend` contract).

        Raises:
            WorkspaceTimeoutError: the command ran past `timeout` seconds; every process it started was killed.
            WorkspaceOutputLimitError: it wrote more than `MAX_CAPTURE_BYTES` to a stream.
            WorkspaceError: the workspace is over its size limit, or bubblewrap cannot start.
            WorkspaceUnavailableError: the folder is gone.
        """
        if isinstance(command, str) != shell:
            raise TypeError('a string command requires shell=True, and an argv sequence shell=False')
        argv = ['/bin/sh', '-c', command] if isinstance(command, str) else list(command)
        if not argv:
            raise ValueError('command must not be empty')
        layout = await self._ensure()
        limits = self._sandbox.limits
        await self._check_size(layout)
        finished = await self._launch(layout, argv, env, timeout=timeout, watch=lambda: _over(layout.folder, limits))
        if not os.path.isdir(layout.folder):
            raise WorkspaceUnavailableError('the workspace was deleted while the command ran')
        stdout, stderr = (data.decode('utf-8', 'replace') for data in (finished.stdout, finished.stderr))
        if finished.stopped == 'timeout':
            raise WorkspaceTimeoutError(
                f'command timed out after {timeout:g}s and was killed, with every process it started',
                stdout=stdout,
                stderr=stderr,
            )
        if finished.stopped == 'output':
            raise WorkspaceOutputLimitError(
                f'command wrote more than {MAX_CAPTURE_BYTES:,} bytes of output and was killed',
                limit=MAX_CAPTURE_BYTES,
                stdout=stdout,
                stderr=stderr,
            )
        if finished.stopped is not None:
            raise WorkspaceError(f'command stopped: {finished.stopped}')
        assert finished.exit_code is not None
        _raise_if_sandbox_failed(finished)
        return CommandResult(exit_code=finished.exit_code, stdout=stdout, stderr=stderr)

    async def read_bytes(self, path: str) -> bytes:
        return await self._file_operation('read', path)

    async def write_bytes(self, path: str, data: bytes) -> None:
        await self._file_operation('write', path, data)

    async def stat(self, path: str) -> FileEntry:
        return FileEntry(**json.loads(await self._file_operation('stat', path)))

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return [FileEntry(**entry) for entry in json.loads(await self._file_operation('list', path))]

    async def make_dir(self, path: str) -> None:
        await self._file_operation('mkdir', path)

    async def remove(self, path: str) -> None:
        await self._file_operation('remove', path)

    async def exists(self, path: str) -> bool:
        return bool(json.loads(await self._file_operation('exists', path)))

    async def realpath(self, path: str) -> str:
        return str(json.loads(await self._file_operation('realpath', path)))

    async def _file_operation(self, operation: str, path: str, data: bytes | None = None) -> bytes:
        if not path.startswith('/'):
            raise ValueError(f'path must be absolute, got {path!r}')
        layout = await self._ensure()
        if operation == 'write':
            await self._check_size(layout, adding=len(data or b''))
        argv = [sys.executable, '-I', '-S', '-c', _FILE_OPERATIONS, operation, path, WORKSPACE_MOUNT]
        finished = await self._launch(
            layout, argv, None, timeout=FILE_OPERATION_TIMEOUT, stdin=data if data is not None else b'', capture=1 << 40
        )
        if finished.stopped is not None:
            raise WorkspaceError(f'the file operation {operation} on {path!r} was stopped ({finished.stopped})')
        if finished.exit_code == 3:
            raise _file_error(finished.stderr, path)
        _raise_if_sandbox_failed(finished)
        if finished.exit_code != 0:
            message = finished.stderr.decode('utf-8', 'replace').strip()
            raise WorkspaceError(f'the file operation {operation} on {path!r} failed: {message}')
        return finished.stdout

    async def _launch(
        self,
        layout: Layout,
        argv: Sequence[str],
        env: Mapping[str, str] | None,
        *,
        timeout: float | None,
        stdin: bytes | None = None,
        capture: int = MAX_CAPTURE_BYTES,
        watch: Callable[[], str | None] | None = None,
    ) -> Finished:
        command = bwrap_command(self._sandbox.bwrap, layout, self._sandbox.limits, argv, env)
        running = _RUNNING.setdefault(layout.folder, set())
        mine: list[int] = []

        def started(pid: int) -> None:
            running.add(pid)
            mine.append(pid)

        try:
            return await run_process(
                command,
                cwd=layout.folder,
                env={'PATH': os.environ.get('PATH', '/usr/bin:/bin')},
                timeout=timeout,
                max_capture=capture,
                stdin=stdin,
                stop_on_overflow=True,
                watch=watch,
                watch_interval=2.0,
                started=started,
            )
        except FileNotFoundError:
            raise WorkspaceError(
                f'bubblewrap ({self._sandbox.bwrap}) is no longer installed, so nothing can run in the workspace'
            ) from None
        finally:
            running.difference_update(mine)

    async def _check_size(self, layout: Layout, adding: int = 0) -> None:
        limit = self._sandbox.limits.max_workspace_bytes
        used = await asyncio.to_thread(_folder_bytes, layout.folder, limit + 1)
        if used + adding > limit:
            raise WorkspaceError(
                f'the workspace holds {used:,} bytes, over its {limit:,}-byte limit: remove files before running '
                'anything more'
            )

    async def _ensure(self) -> Layout:
        async with self._lock:  # concurrent first operations create one folder
            if self._layout is None:
                self._layout = await asyncio.to_thread(self._create_or_attach)
            return self._layout

    def _create_or_attach(self) -> Layout:
        root = self._sandbox.folder_root
        if self._ref is not None:
            return self._attach(root, self._ref)
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        identifier = secrets.token_hex(16)
        place = root / identifier
        place.mkdir(mode=0o700)
        self._ref = WorkspaceRef(provider=PROVIDER, id=identifier)  # recorded at once: the folder exists now
        uid = _allocate_uid(root) if os.geteuid() == 0 else None
        (place / 'owner.json').write_text(
            json.dumps({'conversation': self._conversation, 'uid': uid}), encoding='utf-8'
        )
        folder = place / 'workspace'
        (folder / HOME.removeprefix(WORKSPACE_MOUNT + '/')).mkdir(parents=True)
        _write_etc(place / 'etc', uid)
        if uid is not None:
            for path in (folder, folder / '.skillshelf', folder / HOME.removeprefix(WORKSPACE_MOUNT + '/')):
                os.chown(path, uid, uid)
        return self._layout_of(place, uid)

    def _attach(self, root: Path, ref: WorkspaceRef) -> Layout:
        if not _ID.fullmatch(ref.id):
            raise WorkspaceUnavailableError(f'{ref.id!r} does not name a skillshelf workspace')
        place = root / ref.id
        try:
            owner = json.loads((place / 'owner.json').read_text(encoding='utf-8'))
        except (OSError, ValueError):
            raise WorkspaceUnavailableError('the workspace no longer exists (it was deleted)') from None
        if not (place / 'workspace').is_dir():
            raise WorkspaceUnavailableError('the workspace no longer exists (it was deleted)')
        if owner.get('conversation') not in (None, self._conversation) and self._conversation is not None:
            raise WorkspaceUnavailableError(
                'the message history names the workspace of another conversation; it is not opened (pass '
                "`workspace='new'` to start a fresh one)"
            )
        os.utime(place / 'owner.json')  # last used, for `prune`
        uid = owner.get('uid')
        return self._layout_of(place, uid if isinstance(uid, int) else None)

    def _layout_of(self, place: Path, uid: int | None) -> Layout:
        python = self.python
        mounts = (*interpreter_mounts(python), *(os.path.abspath(path) for path in self._sandbox.mounts))
        bin_folder = os.path.dirname(os.path.abspath(python))
        return Layout(
            folder=str(place / 'workspace'),
            etc=str(place / 'etc'),
            read_only=tuple(mounts),
            path_first=(bin_folder,),
            uid=uid,
            network=self._sandbox.network,
        )


_RUNNING: dict[str, set[int]] = {}
"""The process groups of the commands running in each workspace folder of this process, so `delete` can stop them."""


def _stop_commands(folder: str) -> None:
    for pid in list(_RUNNING.get(folder, ())):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def _raise_if_sandbox_failed(finished: Finished) -> None:
    """bubblewrap's own failure (it exits 1 with one `bwrap: ...` line) is not the command's result."""
    error = finished.stderr.decode('utf-8', 'replace')
    if finished.exit_code == 1 and error.startswith('bwrap: ') and error.count('\n') <= 1:
        raise WorkspaceError(f'the sandbox could not start ({error.strip()})')


def _file_error(stderr: bytes, path: str) -> Exception:
    try:
        detail = json.loads(stderr)
        kind = _ERRORS.get(detail['type'], OSError)
    except (ValueError, KeyError, TypeError):
        return WorkspaceError(f'a file operation on {path!r} failed: {stderr.decode("utf-8", "replace")}')
    if kind is ValueError:
        return ValueError(detail['message'])
    number = detail.get('errno')
    return kind(number, detail['message'], path) if isinstance(number, int) else kind(detail['message'])


def _over(folder: str, limits: ScriptLimits) -> str | None:
    used = _folder_bytes(folder, limits.max_workspace_bytes + 1)
    if used > limits.max_workspace_bytes:
        return f'the workspace grew past its {limits.max_workspace_bytes:,}-byte limit'
    return None


def _folder_bytes(folder: str, stop_at: int) -> int:
    """The bytes the files under `folder` take, counted up to `stop_at` (symlinks not followed)."""
    total = 0
    pending = [folder]
    while pending and total < stop_at:
        try:
            with os.scandir(pending.pop()) as scan:
                for entry in scan:
                    with contextlib.suppress(OSError):
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                        else:
                            total += entry.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            continue
    return total


def _allocate_uid(root: Path) -> int:
    """The lowest user id from `UID_BASE` that no other workspace under `root` has (under a lock: several agent
    processes may share the root)."""
    with open(root / '.lock', 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        taken: set[int] = set()
        for place in _places(root):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                uid = json.loads((place / 'owner.json').read_text(encoding='utf-8')).get('uid')
                if isinstance(uid, int):
                    taken.add(uid)
        uid = UID_BASE
        while uid in taken:
            uid += 1
        return uid


def _places(root: Path) -> list[Path]:
    try:
        return [path for path in root.iterdir() if _ID.fullmatch(path.name)]
    except OSError:
        return []


def _write_etc(etc: Path, uid: int | None) -> None:
    """The sandbox's `/etc`: `localhost` resolves, and the workspace's user has a name and a home."""
    etc.mkdir()
    user = uid if uid is not None else os.getuid()
    (etc / 'hosts').write_text('127.0.0.1 localhost\n::1 ip6-localhost ip6-loopback\n', encoding='utf-8')
    (etc / 'passwd').write_text(f'skills:x:{user}:{user}:skills:{HOME}:/bin/sh\n', encoding='utf-8')
    (etc / 'group').write_text(f'skills:x:{user}:\n', encoding='utf-8')


def _default_root() -> Path:
    return Path(tempfile.gettempdir()) / f'skillshelf-workspaces-{os.getuid()}'
