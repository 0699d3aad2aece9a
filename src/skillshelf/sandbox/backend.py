"""`SandboxWorkspace`: the workspace backend of `SkillSandbox`, one conversation's folder, whose commands and file
operations all run inside bubblewrap (see `bubblewrap`), so they see the same files and nothing of the host but
the read-only system and Python installations.

A command runs within the time its caller gives (`timeout`), `MAX_CAPTURE_BYTES` of output per stream and the
sandbox's `SandboxLimits`: its processes, its memory, any one file it writes (no more than the room the workspace has
left, either) and what the workspace holds in all (watched while it runs: see `usage`). A file operation runs
`fileops.py` in the same sandbox; of them only a write is refused in a full workspace, so a full one can still be
listed, read and cleaned (why not through pydantic-ai's shell fallback: see `fileops`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

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

from . import seccomp
from .bubblewrap import WORKSPACE_MOUNT, Layout, bwrap_command, host_path, interpreter_mounts
from .errors import SandboxBrokenError, WorkspaceFullError
from .folders import Folders, Place, track_commands, workspace_deleted
from .limits import SandboxLimits
from .process import Finished, run_process
from .usage import WATCH_INTERVAL, DiskWatch, folder_bytes
from .use import in_use

__all__ = (
    'FILE_OPERATION_TIMEOUT',
    'MAX_CAPTURE_BYTES',
    'PROVIDER',
    'SandboxSettings',
    'SandboxWorkspace',
    'folders_of',
)

PROVIDER = 'skillshelf'
"""The provider of the refs `SkillSandbox` creates."""
MAX_CAPTURE_BYTES = 10 * 1024 * 1024
"""Output a command may write per stream before it is stopped with `WorkspaceOutputLimitError`."""
FILE_OPERATION_TIMEOUT = 120.0
"""Seconds one file operation may take inside the sandbox."""
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


class SandboxSettings(Protocol):
    """What a workspace needs of its `SkillSandbox` (a protocol, so this module does not import the capability's)."""

    @property
    def limits(self) -> SandboxLimits:
        """What one command may use."""
        ...

    @property
    def python(self) -> str | None:
        """The Python that runs scripts, or `None` for the agent's own."""
        ...

    @property
    def mounts(self) -> Sequence[str]:
        """More host paths shown read-only."""
        ...

    @property
    def network(self) -> bool:
        """Whether commands reach the network."""
        ...

    @property
    def bwrap(self) -> str:
        """The bubblewrap program's path."""
        ...

    @property
    def folder_root(self) -> Path:
        """The folder holding the conversations' folders."""
        ...


class SandboxWorkspace(WorkspaceBackend, SupportsCommands, SupportsFilesystem, SupportsRealpath):
    """One conversation's sandboxed workspace: created at its first operation (or attached to, by ref)."""

    label = 'SkillSandbox'
    """How skillshelf's messages name this workspace."""
    python_setting = 'SkillSandbox(python=...)'
    """Where the developer chooses the interpreter that runs Python here (see `python`)."""
    kills_every_process = True
    """At a command's time limit every process it started is killed (a PID namespace per command)."""
    isolated = True
    """Commands see nothing of the host but what is mounted read-only, so `Skills` may run one no one can be asked
    about (see `capability.isolation`)."""

    def __init__(
        self,
        sandbox: SandboxSettings,
        ref: WorkspaceRef | None = None,
        conversation: str | None = None,
        *,
        _selected: bool = False,
    ):
        """A workspace of `sandbox` (`SkillSandbox.workspace` makes one): the one `ref` names, else a new one at the
        first operation, belonging to `conversation`. It opens a folder of `conversation`'s, or one without a
        conversation (which becomes `conversation`'s); with no conversation, any folder of the sandbox."""
        self._sandbox = sandbox
        self._ref = ref
        self._conversation = conversation
        self._selected = _selected
        """Selected by a run (`SkillSandbox.get_workspace`): it opens only its conversation's folder."""
        self._layout: Layout | None = None
        self._lock = asyncio.Lock()

    @property
    def ref(self) -> WorkspaceRef | None:
        """`skillshelf:<id>`, once the folder exists (or from construction, when attached by ref)."""
        return self._ref

    @property
    def python(self) -> str:
        """The interpreter that runs Python here, at the same path as on the host, first on `PATH`: the sandbox's
        `python`, else the agent's own (see `host_path`). skillshelf's script tool runs Python scripts with it."""
        return host_path(self._sandbox.python or sys.executable)

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
            WorkspaceFullError: the workspace is over its size limit, or the command wrote past it and was stopped.
            SandboxBrokenError: bubblewrap is gone or cannot start.
            WorkspaceError: the command line is too long to start.
            WorkspaceDeletedError: the workspace was deleted.
        """
        if isinstance(command, str) != shell:
            raise TypeError('a string command requires shell=True, and an argv sequence shell=False')
        argv = ['/bin/sh', '-c', command] if isinstance(command, str) else list(command)
        if not argv:
            raise ValueError('command must not be empty')
        layout = await self._ensure()
        limit = self._sandbox.limits.max_workspace_bytes
        used = await self._check_size(layout)
        watch = DiskWatch(layout.folder, limit, used)
        finished = await self._launch(layout, argv, env, timeout=timeout, watch=watch, room=limit - used)
        if (deleted := workspace_deleted(layout.folder)) is not None:
            raise deleted
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
        if watch.reason is not None:  # the watch killed it (it may have seen the kill as its own end)
            raise WorkspaceFullError(f'command stopped: {watch.reason}', limit=limit, stdout=stdout, stderr=stderr)
        if (over := await watch.measure()) is not None:
            # It ended before the watch saw it cross the limit: said all the same, and the workspace stays full.
            raise WorkspaceFullError(
                f'command filled the workspace: {over}', limit=limit, exit_code=finished.exit_code, stdout=stdout,
                stderr=stderr,
            )  # fmt: skip
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
        argv = [host_path(sys.executable), '-I', '-S', '-c', _FILE_OPERATIONS, operation, path, WORKSPACE_MOUNT]
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
        watch: DiskWatch | None = None,
        room: int | None = None,
    ) -> Finished:
        limits = self._sandbox.limits
        if room is not None:  # no one file may take more than the room the workspace has left
            limits = dataclasses.replace(limits, max_file_bytes=max(1, min(limits.max_file_bytes, room)))
        filter_fd = seccomp.filter_pipe()
        command = bwrap_command(self._sandbox.bwrap, layout, limits, argv, env, filter_fd)
        running = track_commands(layout.folder)
        mine: list[int] = []

        def started(pid: int) -> None:
            running.add(pid)
            mine.append(pid)
            if watch is not None:
                watch.start(pid)
            if filter_fd is not None:
                os.close(filter_fd)  # bubblewrap has its own copy now

        try:
            async with in_use(layout.folder):  # recorded as used, and not pruned while it runs
                return await run_process(
                    command,
                    cwd=layout.folder,
                    env={'PATH': os.environ.get('PATH', '/usr/bin:/bin')},
                    timeout=timeout,
                    max_capture=capture,
                    stdin=stdin,
                    stop_on_overflow=True,
                    watch=watch,
                    watch_interval=WATCH_INTERVAL,
                    started=started,
                    pass_fds=() if filter_fd is None else (filter_fd,),
                )
        except OSError as error:
            raise workspace_deleted(layout.folder) or _launch_error(error, self._sandbox.bwrap) from None
        finally:
            if watch is not None:
                watch.close()
            running.difference_update(mine)
            if filter_fd is not None and not mine:  # it never started
                os.close(filter_fd)

    async def _check_size(self, layout: Layout, adding: int = 0) -> int:
        """What the workspace holds, refused if it is (or with `adding` bytes would be) over its limit."""
        limit = self._sandbox.limits.max_workspace_bytes
        used = await folder_bytes(layout.folder)
        if used + adding > limit:
            raise WorkspaceFullError(
                f'the workspace holds {used:,} bytes; with {adding:,} more it would pass its {limit:,}-byte limit: '
                'remove files before running or writing anything more',
                limit=limit,
                ran=False,
            )
        return used

    async def _ensure(self) -> Layout:
        async with self._lock:  # concurrent first operations create one folder
            if self._layout is None:
                self._layout = await asyncio.to_thread(self._create_or_attach)
            elif (deleted := workspace_deleted(self._layout.folder)) is not None:
                raise deleted
            return self._layout

    def _create_or_attach(self) -> Layout:
        folders = folders_of(self._sandbox)
        if self._ref is None:
            identifier, place = folders.create(self._conversation)
            self._ref = WorkspaceRef(provider=PROVIDER, id=identifier)  # recorded at once: the folder exists now
        elif self._ref.provider != PROVIDER:
            raise WorkspaceUnavailableError(f'{self._ref.provider}:{self._ref.id} is not a skillshelf workspace')
        else:
            place = folders.attach(self._ref.id, self._conversation, explicit=not self._selected)
        return self._layout_of(place)

    def _layout_of(self, place: Place) -> Layout:
        python = self.python
        mounts = (*interpreter_mounts(python), *(host_path(path) for path in self._sandbox.mounts))
        bin_folder = os.path.dirname(python)
        return Layout(
            folder=str(place.folder),
            etc=str(place.etc),
            read_only=tuple(mounts),
            path_first=(bin_folder,),
            uid=place.uid,
            network=self._sandbox.network,
        )


def folders_of(sandbox: SandboxSettings) -> Folders:
    """The folders of `sandbox` on the host."""
    return Folders(sandbox.folder_root)


def _launch_error(error: OSError, bwrap: str) -> WorkspaceError:
    """What a process that could not start means: a command line over the system's limit, or bubblewrap gone."""
    if error.errno == errno.E2BIG:
        return WorkspaceError(
            'the command line is too long to start: the system takes about 2 MB of arguments in all, and 128 KiB in '
            'any one; pass long input in a file instead'
        )
    if not os.access(bwrap, os.X_OK):
        return SandboxBrokenError(
            f'bubblewrap ({bwrap}) is gone or cannot be run ({error.strerror}), so nothing can run in the workspace: '
            'install it again (e.g. `apt-get install bubblewrap`)'
        )
    return WorkspaceError(f'the command could not start ({error.strerror})')


def _raise_if_sandbox_failed(finished: Finished) -> None:
    """bubblewrap's own failure (it exits 1 with one `bwrap: ...` line) is not the command's result."""
    error = finished.stderr.decode('utf-8', 'replace')
    if finished.exit_code == 1 and error.startswith('bwrap: ') and error.count('\n') <= 1:
        raise SandboxBrokenError(f'the sandbox could not start ({error.strip()})')


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
