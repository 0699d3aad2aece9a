"""Periodic sync of a `GitSource` (`sync_every`): the repository is fetched in the background, never in a run's way,
and a new commit is checked out at the next run start after it arrived, unless it changes a skill the lock holds.

A run start asks the source for its `version()`; that is when a sync is due, started (in a thread) or taken. A fetch
that fails (the network is down, the server refuses) keeps the commit checked out and says so with a `SkillWarning`,
once per failure; the next sync tries again. With a lock (`Skills(lock=...)`), a new commit that changes any file of
a skill the lock records is not checked out, as the library would refuse that skill: the agent keeps the commit it
has, and a warning names the skills and says how to accept the change (`skillshelf diff`, `skillshelf lock
--update`). A commit that changes only other files (new skills, which the lock refuses anyway, or a README) is taken.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import SkillError, SkillWarning

__all__ = ('GitSync', 'LockedNames')


@dataclass(frozen=True)
class LockedNames:
    """The skills a lock records, as a source needs them to keep to it."""

    names: frozenset[str]
    """The skill names the lock records."""
    path: str
    """The lock file, for messages."""


@dataclass
class GitSync:
    """One source's sync state: when it last fetched, the fetch under way, and the commit it brought."""

    every: float
    """Seconds between fetches."""
    last: float = field(default_factory=time.monotonic)
    """When the last fetch started (the clone counts as one)."""
    _fetching: threading.Thread | None = None
    _fetched: str | None = None
    """The commit the last finished fetch found for the ref, not yet taken or refused."""
    _failure: str | None = None
    """Why the last fetch failed, not yet said."""
    _refused: str | None = None
    """The last commit refused by the lock, so each is warned about once."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def due(self, now: float | None = None) -> bool:
        """Whether a fetch should start: `every` seconds since the last, and none under way."""
        with self._lock:
            running = self._fetching is not None and self._fetching.is_alive()
        return not running and (time.monotonic() if now is None else now) - self.last >= self.every

    def start(self, fetch: Callable[[], str]) -> None:
        """Run `fetch` (fetches and returns the ref's commit, or raises `SkillError`) in a daemon thread."""

        def run() -> None:
            try:
                commit, failure = fetch(), None
            except SkillError as error:
                commit, failure = None, str(error)
            with self._lock:
                self._fetched, self._failure = commit, failure

        with self._lock:
            self.last = time.monotonic()
            self._fetching = threading.Thread(target=run, name='skillshelf-git-sync', daemon=True)
            self._fetching.start()

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the fetch under way, if any (for tests and for a process that wants the update now)."""
        with self._lock:
            running = self._fetching
        if running is not None:
            running.join(timeout)

    def take(self, current: str, label: str, changed: Callable[[str, str], set[str]], lock: LockedNames | None) -> bool:
        """Whether to check out the fetched commit now: it differs from `current` and changes no skill of `lock`
        (`changed(old, new)` names the skill folders a commit changes). Warns about a failed fetch or a refused
        commit, once each."""
        with self._lock:
            fetched, failure = self._fetched, self._failure
            self._failure = None
        if failure is not None:
            warnings.warn(
                SkillWarning(f'{label}: the periodic fetch failed, the skills stay as they are: {failure}'),
                stacklevel=4,
            )
        if fetched is None or fetched == current:
            return False
        if lock is not None:
            held = sorted(changed(current, fetched) & lock.names)
            if held:
                if fetched != self._refused:
                    self._refused = fetched
                    warnings.warn(
                        SkillWarning(
                            f'{label}: commit {fetched[:12]} is not taken, as it changes {", ".join(held)}, which the '
                            f'lock file {lock.path} records; the skills stay at {current[:12]}. Review the change with '
                            f'`skillshelf diff --lock {lock.path}` and accept it with `skillshelf lock --update`'
                        ),
                        stacklevel=4,
                    )
                return False
        return True
