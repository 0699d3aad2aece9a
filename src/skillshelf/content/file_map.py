"""The map of a skill's files that its load reply ends with: every file while the list is short; else the files its
instructions name, one by one, then the others with each folder of several files summed up
(`scripts/office/schemas/ (39 .xsd)`), so a skill carrying hundreds of schema files costs the model a line, not
pages. A folder's path given to `read_skill_resource` lists its files (see `folder_listing`), in pages.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Sequence

__all__ = ('MAP_CHARACTERS', 'file_map', 'folder_listing', 'named_files')

MAP_CHARACTERS = 600
"""The files are listed one by one while the list is at most this long; a longer one is summed up to about this."""
_READ = '`read_skill_resource`'
_PATH_WORDS = re.compile(r'[\w./-]+')
_STRIPPED = '.,:;'


def file_map(files: Sequence[str], instructions: str, budget: int = MAP_CHARACTERS) -> str:
    """The lines that show the model `files` (a skill's, as `read_skill_resource` serves them), for instructions
    that read `instructions`; `''` for a skill without files."""
    if not files:
        return ''
    every = ', '.join(files)
    if len(every) <= budget:
        return f'Files (read with {_READ}): {every}.'
    named = named_files(files, instructions)
    others = [path for path in files if path not in named]
    kept = _folders_of(named)
    items: list[tuple[str, int]] = []
    for fewest in (3, 2):  # folders of 3 files or more summed up first; of 2 when that is not short enough
        items = _summed_up(others, kept, fewest)
        if len(', '.join(item for item, _ in items)) + len(', '.join(named)) <= budget:
            break
    shown, left = _within(items, max(budget - len(', '.join(named)), budget // 3))
    more = f' and {left:,} more files (the path "." lists every file)' if left else ''
    lines = [f"Files (read with {_READ}; a folder's path lists its files):"]
    if named:
        lines.append(f'Named in the instructions: {", ".join(named)}.')
    if shown:
        lines.append(f'{"Others" if named else "All"}: {", ".join(shown)}{more}.')
    return '\n'.join(lines)


def named_files(files: Sequence[str], instructions: str) -> list[str]:
    """The files `instructions` mention, in the order of `files`: by their path in the skill (also at the end of a
    longer path, `${SKILL_DIR}/scripts/fill.py` once the folder is put in), as a Python module (`scripts.fill`), or
    by a file name no other file of the skill has (`fill.py`)."""
    mentioned: set[str] = set()
    for word in _PATH_WORDS.findall(instructions):
        word = word.rstrip(_STRIPPED)
        mentioned.add(word.removeprefix('./'))
        mentioned.update(word[index + 1 :] for index, character in enumerate(word) if character == '/')
        if '.' in word and '/' not in word:
            mentioned.add(word.replace('.', '/') + '.py')
    names = Counter(posixpath.basename(path) for path in files)
    return [
        path
        for path in files
        if path in mentioned or (names[base := posixpath.basename(path)] == 1 and '.' in base and base in mentioned)
    ]


def folder_listing(path: str, files: Sequence[str]) -> str | None:
    """The files of the skill's folder `path` (`scripts/office`, `scripts/`; `.` for all), one a line, for
    `read_skill_resource`; `None` when `path` is no folder of `files`."""
    text = path.strip()
    if not text or text.startswith('/'):
        return None
    folder = text.removeprefix('./').rstrip('/')
    folder = '' if folder in ('', '.') else folder + '/'
    inside = [file for file in files if file.startswith(folder)]
    if not inside or folder[:-1] in files:
        return None
    where = f'the folder {folder}' if folder else 'the skill'
    return f'{len(inside):,} file{"s" if len(inside) != 1 else ""} in {where}:\n' + '\n'.join(inside) + '\n'


def _folders_of(paths: Iterable[str]) -> set[str]:
    """Every folder holding one of `paths`, at any depth."""
    folders: set[str] = set()
    for path in paths:
        while (path := posixpath.dirname(path)) and path not in folders:
            folders.add(path)
    return folders


def _summed_up(files: Sequence[str], kept: set[str], fewest: int) -> list[tuple[str, int]]:
    """`files`, in order, each listed or counted in the outermost folder that holds at least `fewest` of them and
    none of the named files (their folders, `kept`, are shown open): each entry with the files it stands for."""
    counts = Counter(folder for path in files for folder in _ancestors(path))
    groups: dict[str, list[str]] = {}
    for path in files:
        folder = next(
            (folder for folder in reversed(_ancestors(path)) if folder not in kept and counts[folder] >= fewest), None
        )
        groups.setdefault(path if folder is None else folder + '/', []).append(path)
    return [
        (key, 1) if not key.endswith('/') else (f'{key} ({_kinds(members)})', len(members))
        for key, members in groups.items()
    ]


def _ancestors(path: str) -> list[str]:
    """The folders holding `path`, innermost first."""
    folders: list[str] = []
    while path := posixpath.dirname(path):
        folders.append(path)
    return folders


def _kinds(files: Sequence[str]) -> str:
    """`39 .xsd`, or `12 files: 8 .py, 3 .md, 1 other`."""
    suffixes = Counter(posixpath.splitext(path)[1].lower() or 'other' for path in files)
    if len(suffixes) == 1 and 'other' not in suffixes:
        return f'{len(files)} {next(iter(suffixes))}'
    top = suffixes.most_common(3)
    rest = len(files) - sum(count for _, count in top)
    parts = [f'{count} {suffix}' for suffix, count in top] + ([f'{rest} other'] if rest else [])
    return f'{len(files)} files: {", ".join(parts)}'


def _within(items: Sequence[tuple[str, int]], budget: int) -> tuple[list[str], int]:
    """The first `items` whose list fits in `budget` characters (one at least), and how many files are left out."""
    shown: list[str] = []
    size = 0
    for item, _ in items:
        if shown and size + len(item) + 2 > budget:
            break
        shown.append(item)
        size += len(item) + 2
    return shown, sum(count for _, count in items[len(shown) :])
