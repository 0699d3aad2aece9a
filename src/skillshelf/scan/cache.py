"""The scan's findings kept by the digest of each file's text: in memory for the process, and on disk beside
skillshelf's other caches (`files.cache_directory`) by `skillshelf scan`, so a scan run again (in CI, on a large
library) reads only the files that changed, and a library's first use of a skill scanned before reads its findings. The file is keyed by a digest of the scan's own source, so changed rules never reuse old findings.

It is only a cache: a file that cannot be read or written is ignored, and `SKILLSHELF_CACHE_DIR=off` turns it off
(whoever can write the cache folder could as well edit the skills).
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any, cast

from ..files import cache_directory, write_atomically
from .finding import Hit

__all__ = ('FindingsCache', 'findings_cache')

MAX_SHARD_ENTRIES = 4_000
"""Files kept per shard (about a million in all); past this a shard starts afresh."""


def _rules_digest() -> str:
    """A digest of the scan's source and of the shell parser it reads with: what the findings depend on."""
    here = Path(__file__).parent
    sources = [*sorted(here.glob('*.py')), here.parent / 'scripts' / 'needs' / 'shell.py']
    digest = hashlib.blake2b(digest_size=8)
    for source in sources:
        digest.update(source.read_bytes())
    return digest.hexdigest()


class FindingsCache:
    """Findings by file digest, in 256 shards by the digest's first byte (so a start that scans a few changed files
    rewrites a few small files, not one large one), each read from disk at its first use and written back by `save`
    when something was added to it."""

    def __init__(self) -> None:
        self._shards: dict[str, dict[str, tuple[Hit, ...]]] = {}
        self._added: set[str] = set()
        self._lock = threading.Lock()

    @staticmethod
    def key(path: str, text: str) -> str:
        """The digest a file's findings are kept under."""
        return hashlib.blake2b(f'{path}\0{text}'.encode('utf-8', 'surrogatepass'), digest_size=16).hexdigest()

    def get(self, key: str) -> tuple[Hit, ...] | None:
        """The findings kept for `key`, or `None`."""
        return self._shard(key[:2]).get(key)

    def put(self, key: str, hits: tuple[Hit, ...]) -> None:
        """Keep `hits` for `key` (written to disk at the next `save`)."""
        shard = self._shard(key[:2])
        if len(shard) >= MAX_SHARD_ENTRIES:
            shard.clear()
        shard[key] = hits
        self._added.add(key[:2])

    def clear(self) -> None:
        """Forget every finding kept in memory (the files stay)."""
        with self._lock:
            self._shards, self._added = {}, set()

    def save(self) -> None:
        """Write the shards that were added to since the last read or write."""
        directory = _directory()
        with self._lock:
            added, self._added = self._added, set()
            if directory is None:
                return
            for name in sorted(added):
                entries = self._shards.get(name, {})
                data = json.dumps({key: [list(hit) for hit in hits] for key, hits in entries.items()}).encode()
                write_atomically(directory / f'{name}.json', lambda file, data=data: file.write(data))

    def _shard(self, name: str) -> dict[str, tuple[Hit, ...]]:
        shard = self._shards.get(name)
        if shard is None:
            with self._lock:
                shard = self._shards.setdefault(name, _read(name))
        return shard


def _read(name: str) -> dict[str, tuple[Hit, ...]]:
    directory = _directory()
    if directory is None:
        return {}
    try:
        raw = cast('dict[str, list[list[Any]]]', json.loads((directory / f'{name}.json').read_bytes()))
        return {key: tuple(cast(Hit, tuple(hit)) for hit in hits) for key, hits in raw.items()}
    except (OSError, ValueError, TypeError):
        return {}


def _directory() -> Path | None:
    directory = cache_directory()
    return None if directory is None else directory / 'scan' / _RULES


_RULES = _rules_digest()
findings_cache = FindingsCache()
"""The process's one cache of findings."""
