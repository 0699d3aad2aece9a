"""The digests of folder files hashed before, by the file's `stat`: kept in memory for the process and in a file of
skillshelf's cache directory for the next one, so a library read again, or a worker started again, hashes only the
files that changed.

A file's key is its device, inode, size, modification and change times: writing a file changes its change time,
which no one can set back, so an edited file is always hashed again. The cache only spares the check at load its
reads: every read of a locked folder skill's file hashes the bytes served (see `FolderContent.locked`), so a cache
file tampered with cannot get other bytes to the model or a workspace.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from ..files import cache_directory, write_atomically

__all__ = ('KnownDigests', 'known_digests')

MAX_KEPT = 500_000
"""Entries the cache file keeps at most; past it, only those this process used are written."""
_FILE = 'lock-digests-1.json'

_Key = tuple[int, int, int, int, int]


class KnownDigests:
    """Digests by absolute path, each with the `stat` key it was hashed at."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        """The cache file; `None` when caching is off."""
        self._known: dict[str, tuple[_Key, str]] | None = None
        self._used: set[str] = set()
        self._dirty = False
        self._lock = threading.Lock()

    def digest(self, where: str, info: os.stat_result, compute: Callable[[], str | None]) -> str | None:
        """The digest of the file at `where` whose `stat` is `info`: the one known for that key, else `compute()`,
        kept unless it is `None` (the file could not be read)."""
        key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        with self._lock:
            known = self._loaded().get(where)
            self._used.add(where)
        if known is not None and known[0] == key:
            return known[1]
        digest = compute()
        if digest is not None:
            with self._lock:
                self._loaded()[where] = (key, digest)
                self._dirty = True
        return digest

    def save(self) -> None:
        """Write the digests hashed since the last save to the cache file (a failure leaves the old one)."""
        with self._lock:
            if not self._dirty or self.path is None or self._known is None:
                return
            known = self._known
            if len(known) > MAX_KEPT:
                known = {where: known[where] for where in self._used if where in known}
            text = json.dumps({where: [*key, digest] for where, (key, digest) in known.items()})
            self._dirty = False
        write_atomically(self.path, lambda file: file.write(text.encode('utf-8', 'surrogatepass')))

    def _loaded(self) -> dict[str, tuple[_Key, str]]:
        if self._known is None:
            self._known = _read(self.path)
        return self._known


def _read(path: Path | None) -> dict[str, tuple[_Key, str]]:
    """The cache file's entries; none if it is missing or not what this module writes."""
    if path is None:
        return {}
    try:
        held: object = json.loads(path.read_text(encoding='utf-8', errors='surrogatepass'))
    except (OSError, ValueError):
        return {}
    if not isinstance(held, dict):
        return {}
    entries: dict[str, tuple[_Key, str]] = {}
    for where, value in cast('dict[str, Any]', held).items():
        if isinstance(value, list) and len(cast('list[Any]', value)) == 6:
            *key, digest = cast('list[Any]', value)
            if all(isinstance(part, int) for part in key) and isinstance(digest, str):
                entries[where] = (cast(_Key, tuple(key)), digest)
    return entries


_instances: dict[Path | None, KnownDigests] = {}
_instances_lock = threading.Lock()


def known_digests() -> KnownDigests:
    """The known digests of this process, kept in the cache directory as it is set now (`$SKILLSHELF_CACHE_DIR`)."""
    directory = cache_directory()
    path = None if directory is None else directory / _FILE
    with _instances_lock:
        if path not in _instances:
            _instances[path] = KnownDigests(path)
        return _instances[path]
