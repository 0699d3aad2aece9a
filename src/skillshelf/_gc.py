"""Pausing Python's cyclic garbage collector while a library is read or indexed.

Reading a library allocates many objects that live on (skills, frontmatter, index terms) and few that form cycles.
The collector runs after every 700 new objects and, as the heap grows, walks the objects that survived, so a large
library spends seconds in it (1.1-1.7 s of CPU at 100,000 skills); paused, it runs once afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Generator
from contextlib import contextmanager

__all__ = ('gc_paused',)


@contextmanager
def gc_paused() -> Generator[None]:
    """Run the block with the cyclic collector off, and on again after it if it was on before (it is process-wide: a
    block in another thread that paused it too finishes with it on)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
