"""The conversations' folders of a `SkillSandbox` on the host: where each one is, whose it is, and how it goes.

Each workspace is a folder under the sandbox's root, named by the id of its `WorkspaceRef`:

    <root>/<id>/owner.json   the conversation it belongs to and, for an agent running as root, its own user id
    <root>/<id>/etc/         the sandbox's `hosts`, `passwd` and `group`
    <root>/<id>/workspace/   what commands see as `/workspace` (the only part a command sees)

Who may open one (`Folders.attach`): a folder made for a conversation opens for that conversation; a folder made
without one (`SandboxWorkspace(sandbox)`) opens only when the application passes it to a run itself, and becomes the
conversation's when the application names one (`SkillSandbox.workspace(conversation=..., ref=...)`). A message
history never opens a folder that is not its conversation's.

User ids (agents running as root): each workspace gets the next id from `UID_BASE`, counted in `<root>/.next-uid`
under a lock every agent process using the root shares, and never given out again: no two workspaces (and no process
left over from a deleted one) share a process count.

Deleting renames the folder out of the way first (to `.trash-...`, so it is gone at once for every reader), then
removes it with `rm -rf` in a worker thread: a tree 1,500 folders deep or of 200,000 files neither exhausts Python's
recursion nor holds up the event loop. A removal cut short leaves trash that `prune` finishes.
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
import subprocess
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai.workspaces import WorkspaceError, WorkspaceUnavailableError

from .bubblewrap import HOME, WORKSPACE_MOUNT
from .errors import ForeignWorkspaceError

__all__ = ('UID_BASE', 'Folders', 'Place', 'stop_commands', 'track_commands')

UID_BASE = 1_900_000_000
"""The first user id given to a workspace when the agent runs as root (far from system and subordinate ranges)."""
_LAST_UID = 4_294_967_294
"""The highest user id Linux gives out (`(uid_t) -1` means "unchanged")."""
_ID = re.compile(r'[0-9a-f]{32}')
_TRASH = '.trash-'
_DELETED = 'the workspace no longer exists (it was deleted)'


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
        self.root = root

    def folder(self, identifier: str) -> Path | None:
        """The `workspace` folder of workspace `identifier`, if there is one."""
        folder = self.root / identifier / 'workspace' if _ID.fullmatch(identifier) else None
        return folder if folder is not None and folder.is_dir() else None

    def create(self, conversation: str | None) -> tuple[str, Place]:
        """A new workspace belonging to `conversation` (to none: `None`); its id and folders."""
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        with _locked(self.root):  # the user id is counted and recorded before the next creator looks
            identifier = secrets.token_hex(16)
            uid = self._next_uid() if os.geteuid() == 0 else None
            path = self.root / identifier
            path.mkdir(mode=0o700)
            _write_owner(path, conversation, uid)
        place = Place(path, uid)
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
            WorkspaceUnavailableError: there is no such workspace (it was deleted).
            ForeignWorkspaceError: it is not `conversation`'s.
        """
        if not _ID.fullmatch(identifier):
            raise WorkspaceUnavailableError(f'{identifier!r} does not name a skillshelf workspace')
        path = self.root / identifier
        owner = _read_owner(path)
        if owner is None or not (path / 'workspace').is_dir():
            raise WorkspaceUnavailableError(_DELETED)
        owned_by, uid = owner
        if not explicit and (owned_by is None or owned_by != conversation):
            raise _foreign(identifier, owned_by)
        if explicit and conversation is not None and owned_by != conversation:
            if owned_by is not None:
                raise _foreign(identifier, owned_by, explicit=True)
            _write_owner(path, conversation, uid)  # the application gives its folder to a conversation
        with contextlib.suppress(OSError):
            os.utime(path / 'owner.json')  # last used, for `prune`
        return Place(path, uid)

    def check(self, identifier: str, conversation: str | None) -> None:
        """Refuse a message history's ref to workspace `identifier` unless it is `conversation`'s; a workspace that no
        longer exists is left for its first operation to report.

        Raises:
            ForeignWorkspaceError: it belongs to another conversation, or to none.
        """
        owner = _read_owner(self.root / identifier) if _ID.fullmatch(identifier) else None
        if owner is not None and (owner[0] is None or owner[0] != conversation):
            raise _foreign(identifier, owner[0])

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
        path = self.root / identifier
        trash = self.root / f'{_TRASH}{identifier}-{secrets.token_hex(4)}'
        try:
            os.rename(path, trash)
        except FileNotFoundError:
            return False
        except OSError:
            trash = path  # it cannot move (a read-only parent): removed where it is
        # Stopped after the move: a command that ends when killed then finds its folder gone, and says so.
        stop_commands(str(path / 'workspace'))
        _remove_tree(trash)
        return True

    def _prune(self, cutoff: float) -> int:
        removed = 0
        for entry in _entries(self.root):
            if entry.name.startswith(_TRASH):
                _remove_tree(entry)
                continue
            if not _ID.fullmatch(entry.name):
                continue
            with contextlib.suppress(OSError):
                if (entry / 'owner.json').stat().st_mtime < cutoff and self._delete(entry.name):
                    removed += 1
        return removed

    def _next_uid(self) -> int:
        """The next unused user id (under the root's lock)."""
        counter = self.root / '.next-uid'
        try:
            uid = int(counter.read_text(encoding='utf-8'))
        except (OSError, ValueError):  # first use, or the counter was lost: start after every id recorded
            recorded = [owner[1] for entry in _entries(self.root) if (owner := _read_owner(entry)) is not None]
            uid = max((known for known in recorded if known is not None), default=UID_BASE - 1) + 1
        uid = max(uid, UID_BASE)
        if uid > _LAST_UID:
            raise WorkspaceError(f'every user id from {UID_BASE:,} on has been given to a workspace under {self.root}')
        _write_atomic(counter, str(uid + 1))
        return uid


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


def _read_owner(path: Path) -> tuple[str | None, int | None] | None:
    """The conversation and user id `path/owner.json` records, or `None` without a readable one."""
    try:
        owner = json.loads((path / 'owner.json').read_text(encoding='utf-8'))
    except (OSError, ValueError):
        return None
    if not isinstance(owner, dict):
        return None
    conversation, uid = owner.get('conversation'), owner.get('uid')  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return (
        conversation if isinstance(conversation, str) else None,
        uid if isinstance(uid, int) and not isinstance(uid, bool) else None,
    )


def _write_owner(path: Path, conversation: str | None, uid: int | None) -> None:
    _write_atomic(path / 'owner.json', json.dumps({'conversation': conversation, 'uid': uid}))


def _write_atomic(path: Path, text: str) -> None:
    partial = path.with_name(f'.{path.name}.{secrets.token_hex(4)}')
    partial.write_text(text, encoding='utf-8')
    os.replace(partial, path)


@contextlib.contextmanager
def _locked(root: Path) -> Generator[None]:
    """The root's lock, shared by every agent process (and thread) creating workspaces under it."""
    with open(root / '.lock', 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _entries(root: Path) -> list[Path]:
    try:
        return list(root.iterdir())
    except OSError:
        return []


def _write_etc(etc: Path, uid: int | None) -> None:
    """The sandbox's `/etc`: `localhost` resolves, and the workspace's user has a name and a home."""
    etc.mkdir()
    user = uid if uid is not None else os.getuid()
    (etc / 'hosts').write_text('127.0.0.1 localhost\n::1 ip6-localhost ip6-loopback\n', encoding='utf-8')
    (etc / 'passwd').write_text(f'skills:x:{user}:{user}:skills:{HOME}:/bin/sh\n', encoding='utf-8')
    (etc / 'group').write_text(f'skills:x:{user}:\n', encoding='utf-8')
