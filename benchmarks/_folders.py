"""A benchmark library written to disk: each doc as a `SKILL.md` folder, as `scale.py`, `context_cost.py` and
`registry.py` measure a real folder library."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from _datasets import Doc


def skill_folder_name(name: str, taken: set[str]) -> str:
    """A valid, unused skill name derived from `name` (lower-case words joined by single hyphens)."""
    base = '-'.join(re.findall(r'[a-z0-9]+', name.lower()))[:60].strip('-') or 'skill'
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f'{base}-{n}', n + 1
    taken.add(candidate)
    return candidate


def write_skill_folders(docs: Sequence[Doc], directory: Path) -> list[str]:
    """Write each doc as `<directory>/<name>/SKILL.md`; return the names used, in order."""
    directory.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    names: list[str] = []
    for doc in docs:
        name = skill_folder_name(doc.name, taken)
        folder = directory / name
        folder.mkdir(exist_ok=True)
        description = ' '.join(doc.description.split())[:1024] or name
        text = f'---\nname: {name}\ndescription: {json.dumps(description, ensure_ascii=False)}\n---\n\n{doc.body}\n'
        (folder / 'SKILL.md').write_text(text, encoding='utf-8')
        names.append(name)
    # Flushed now, so the kernel's write-back of a just-written library does not land inside a timed start-up.
    if hasattr(os, 'sync'):  # not on Windows
        os.sync()
    return names
