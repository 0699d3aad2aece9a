"""The conversations' folders of a `SkillSandbox` on the host: where each one is, whose it is, and how it goes.

Each workspace is a folder under the sandbox's root, named by the id of its `WorkspaceRef`:

    <root>/<id>/owner.json   the conversation it belongs to and, for an agent running as root, its own user id
    <root>/<id>/etc/         the sandbox's `hosts`, `passwd` and `group`
    <root>/<id>/workspace/   what commands see as `/workspace` (the only part a command sees)

Who may open one (`Folders.attach`): a folder made for a conversation opens for that conversation; a folder made
without one (`SandboxWorkspace(sandbox)`) opens only when the application passes it to a run itself, and becomes the
conversation's when the application names one (`SkillSandbox.workspace(conversation=..., ref=...)`). A message
history never opens a folder that is not its conversation's.

User ids (agents running as root): each workspace gets the next id from `UID_BASE`, counted once for the whole host
(see `uids`) and never given out again: no two workspaces, under any root (and no process left over from a deleted
one), share a process count.

Use: every operation through a backend records it, and a workspace where a command runs is in use (see `use`);
`prune` deletes only workspaces unused for its age and running nothing.

The root must be the agent user's own and closed to others, and every workspace is checked before it is used: no
link followed, owned as the sandbox made it, a user id it gave out (see `root`).

Deleting renames the folder out of the way first (to `.trash-...`, so it is gone at once for every reader), then
removes it with `rm -rf` in a worker thread: a tree 1,500 folders deep or of 200,000 files neither exhausts Python's
recursion nor holds up the event loop. A removal cut short leaves trash that `prune` finishes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai.workspaces import WorkspaceUnavailableError

from .bubblewrap import HOME, WORKSPACE_MOUNT, host_path
from .errors import ForeignWorkspaceError, UnsafeWorkspaceError, WorkspaceDeletedError
from .private import write_atomic
from .root import locked_root, opened_root, recorded_uids, verified_owner
from .uids import UID_BASE, next_uid
from .use import DELETED, idle_and_held, mark_used

__all__ = ('UID_BASE', 'Folders', 'Place', 'stop_commands', 'track_commands', 'workspace_deleted')

_ID = re.compile(r'[0-9a-f]{32}')
_TRASH = '.trash-'


@dataclass(frozen=True)
class Place:
    """One workspace's folders on the host."""

    path: Path
    """`<root>/<id>`."""
    uid: int | None
    """The user its commands run as (an agent running as root), else `None`."""

    @property
    def folder(self) -> Path:
        """What commands see as `/workspace`."""
        return self.path / 'workspace'

    @property
    def etc(self) -> Path:
        """The sandbox's `/etc` files."""
        return self.path / 'etc'


class Folders:
    """The workspace folders under one root (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(host_path(str(root)))  # its real folder: a link above it cannot be retargeted later

    def folder(self, identifier: str) -> Path | None:
        """The `workspace` folder of workspace `identifier`, if there is one.

        Raises:
            SandboxRootError: the root is not safe to use.
            UnsafeWorkspaceError: the workspace is not as the sandbox made it.
        """
        if not _ID.fullmatch(identifier):
            return None
        with opened_root(self.root) as root_fd:
            owner = verified_owner(self.root, root_fd, identifier)
        return self.root / identifier / 'workspace' if owner is not None else None

    def create(self, conversation: str | None) -> tuple[str, Place]:
        """A new workspace belonging to `conversation` (to none: `None`); its id and folders."""
        with opened_root(self.root) as root_fd, locked_root(self.root, root_fd):
            identifier = secrets.token_hex(16)
            uid = next_uid(lambda: recorded_uids(root_fd)) if os.geteuid() == 0 else None
            os.mkdir(identifier, 0o700, dir_fd=root_fd)
            _write_owner(root_fd, identifier, conversation, uid)
            mark_used(root_fd, identifier)
        place = Place(self.root / identifier, uid)
        home = place.folder / HOME.removeprefix(WORKSPACE_MOUNT + '/')
        home.mkdir(parents=True)
        _write_etc(place.etc, uid)
        if uid is not None:
            for made in (place.folder, place.folder / '.skillshelf', home):
                os.chown(made, uid, uid)
        return identifier, place

    def attach(self, identifier: str, conversation: str | None, *, explicit: bool) -> Place:
        """The folders of workspace `identifier`, opened for `conversation`: by a message history's ref
        (`explicit=False`: only the conversation's own), or because the application passed it (`explicit=True`:
        any folder without a conversation given, else its own or one without an owner, which becomes its own).

        Raises:
            WorkspaceDeletedError: there is no such workspace (it was deleted).
            ForeignWorkspaceError: it is not `conversation`'s.
            SandboxRootError: the root is not safe to use.
            UnsafeWorkspaceError: the workspace is not as the sandbox made it.
        """
        if not _ID.fullmatch(identifier):
            raise WorkspaceUnavailableError(f'{identifier!r} does not name a skillshelf workspace')
        with opened_root(self.root) as root_fd:
            owner = verified_owner(self.root, root_fd, identifier)
            if owner is None:
                raise WorkspaceDeletedError(DELETED)
            if not explicit and (owner.conversation is None or owner.conversation != conversation):
                raise _foreign(identifier, owner.conversation)
            if explicit and conversation is not None and owner.conversation != conversation:
                if owner.conversation is not None:
                    raise _foreign(identifier, owner.conversation, explicit=True)
                _write_owner(root_fd, identifier, conversation, owner.uid)  # the application gives it its folder
            mark_used(root_fd, identifier)
        return Place(self.root / identifier, owner.uid)

    def check(self, identifier: str, conversation: str | None) -> None:
        """Refuse a message history's ref to workspace `identifier` unless it is `conversation`'s and as the sandbox
        made it (a ref accepted is a use: a run reopens the workspace); a workspace that no longer exists is left for
        its first operation to report.

        Raises:
            ForeignWorkspaceError: it belongs to another conversation, or to none.
            SandboxRootError: the root is not safe to use.
            UnsafeWorkspaceError: the workspace is not as the sandbox made it.
        """
        if not _ID.fullmatch(identifier):
            return
        with opened_root(self.root) as root_fd:
            owner = verified_owner(self.root, root_fd, identifier)
            if owner is not None and (owner.conversation is None or owner.conversation != conversation):
                raise _foreign(identifier, owner.conversation)
            if owner is not None:  # a run reopens it: a use, even if the run does nothing in it
                mark_used(root_fd, identifier)

    async def delete(self, identifier: str) -> bool:
        """Stop the workspace's commands and delete its folders (in a worker thread); whether there were any."""
        if not _ID.fullmatch(identifier):
            return False
        return await asyncio.to_thread(self._delete, identifier)

    async def prune(self, older_than: float) -> int:
        """Delete the workspaces not used for `older_than` seconds, and trash left by an interrupted delete (in a
        worker thread); how many workspaces."""
        return await asyncio.to_thread(self._prune, time.time() - older_than)

    def _delete(self, identifier: str) -> bool:
        with opened_root(self.root) as root_fd:
            trash = self._trash(root_fd, identifier)
        if trash is not None:
            self._dispose(identifier, trash)
        return trash is not None

    def _prune(self, cutoff: float) -> int:
        removed = 0
        with opened_root(self.root) as root_fd:
            for name in os.listdir(root_fd):
                if name.startswith(_TRASH):
                    _remove_tree(self.root / name)
                    continue
                if not _ID.fullmatch(name):
                    continue
                trash = None
                with contextlib.suppress(OSError, UnsafeWorkspaceError), idle_and_held(root_fd, name, cutoff) as idle:
                    trash = self._trash(root_fd, name) if idle else None  # moved while nothing can start there
                if trash is not None:
                    self._dispose(name, trash)
                    removed += 1
        return removed

    def _trash(self, root_fd: int, identifier: str) -> str | None:
        """Move the workspace out of the way (gone at once for every reader); the name it now has, or `None` if
        there was none."""
        trash = f'{_TRASH}{identifier}-{secrets.token_hex(4)}'
        try:
            os.rename(identifier, trash, src_dir_fd=root_fd, dst_dir_fd=root_fd)  # a link is moved, not followed
        except FileNotFoundError:
            return None
        except OSError:
            return identifier  # it cannot move (a read-only parent): removed where it is
        return trash

    def _dispose(self, identifier: str, trash: str) -> None:
        # Stopped after the move: a command that ends when killed then finds its folder gone, and says so.
        stop_commands(str(self.root / identifier / 'workspace'))
        _remove_tree(self.root / trash)


def workspace_deleted(folder: str) -> WorkspaceDeletedError | None:
    """The error for a workspace whose `folder` is gone (it was deleted), or `None` while it is there."""
    return None if os.path.isdir(folder) else WorkspaceDeletedError(DELETED)


_RUNNING: dict[str, set[int]] = {}
"""The process groups of the commands running in each workspace folder of this process, so `delete` can stop them."""


def track_commands(folder: str) -> set[int]:
    """The set the process groups of commands running in `folder` are kept in (add, then discard when they end)."""
    return _RUNNING.setdefault(folder, set())


def stop_commands(folder: str) -> None:
    """Kill every command of this process running in `folder`."""
    for pid in list(_RUNNING.get(folder, ())):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def _foreign(identifier: str, owned_by: str | None, *, explicit: bool = False) -> ForeignWorkspaceError:
    if explicit:
        return ForeignWorkspaceError(
            f'the sandbox workspace {identifier} belongs to another conversation, so it is not opened for this one'
        )
    if owned_by is None:
        return ForeignWorkspaceError(
            f'the sandbox workspace {identifier} was made without a conversation (`SandboxWorkspace(sandbox)`), so a '
            "message history does not reopen it: make a conversation's workspace with `SkillSandbox.workspace("
            "conversation=...)`, pass this one to every run with `workspace=`, or pass `workspace='new'`"
        )
    return ForeignWorkspaceError(
        f'the message history names the sandbox workspace {identifier}, which belongs to another conversation, so it '
        "is not opened: continue that conversation, or pass `workspace='new'` to start this run in a fresh workspace"
    )


def _remove_tree(path: Path) -> None:
    """Remove `path` and everything under it, however deep; a folder its owner may not enter (a sandbox may chmod
    its files) is opened up and removed too."""
    rm, chmod = shutil.which('rm'), shutil.which('chmod')
    if rm is None:  # not a GNU/Linux host: shutil's removal, which recurses
        with contextlib.suppress(RecursionError):
            shutil.rmtree(path, ignore_errors=True)
        return
    _quiet(rm, '-rf', '--', str(path))
    if os.path.lexists(path) and chmod is not None:
        _quiet(chmod, '-R', 'u+rwx', '--', str(path))
        _quiet(rm, '-rf', '--', str(path))


def _quiet(*argv: str) -> None:
    quiet = subprocess.DEVNULL
    subprocess.run(argv, stdin=quiet, stdout=quiet, stderr=quiet, check=False)


def _write_owner(root_fd: int, identifier: str, conversation: str | None, uid: int | None) -> None:
    folder = os.open(identifier, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=root_fd)
    try:
        write_atomic(folder, 'owner.json', json.dumps({'conversation': conversation, 'uid': uid}))
    finally:
        os.close(folder)


def _write_etc(etc: Path, uid: int | None) -> None:
    """The sandbox's `/etc`: `localhost` resolves, and the workspace's user has a name and a home."""
    etc.mkdir()
    user = uid if uid is not None else os.getuid()
    (etc / 'hosts').write_text('127.0.0.1 localhost\n::1 ip6-localhost ip6-loopback\n', encoding='utf-8')
    (etc / 'passwd').write_text(f'skills:x:{user}:{user}:skills:{HOME}:/bin/sh\n', encoding='utf-8')
    (etc / 'group').write_text(f'skills:x:{user}:\n', encoding='utf-8')
