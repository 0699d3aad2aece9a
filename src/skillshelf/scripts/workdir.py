"""A fresh work directory for each run: the model's input files written in first, what is left listed after."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from pathlib import Path

from ..content import safe_relative_path
from ..errors import ResourceError, ScriptError

MAX_INPUT_BYTES = 1024 * 1024
"""The model's input files for one run, in all."""
MAX_LISTED_FILES = 50
"""Files left by a run that are listed for the model."""


@contextmanager
def work_directory(files: Mapping[str, str], *, owner: int | None = None) -> Generator[Path]:
    """A new, empty directory holding `files` (relative path to text), deleted on exit; with `owner`, it and the
    files are given to that user id, so a run dropped to that user can write there.

    Raises:
        ScriptError: a path is not a plain relative path, or the files are too large.
    """
    size = sum(len(text.encode('utf-8', 'surrogatepass')) for text in files.values())
    if size > MAX_INPUT_BYTES:
        raise ScriptError(f'the input files are {size:,} bytes; the limit is {MAX_INPUT_BYTES:,}')
    directory = Path(tempfile.mkdtemp(prefix='skillshelf-run-'))
    try:
        for requested, text in files.items():
            try:
                relative = safe_relative_path(requested)
            except ResourceError as error:
                raise ScriptError(f'cannot write the input file: {error}') from None
            target = directory.joinpath(*relative.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding='utf-8', errors='replace')
        if owner is not None:
            _give(directory, owner)
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def left_files(directory: Path) -> dict[str, int]:
    """Regular files under `directory` (symlinks are not followed), by relative POSIX path, with their sizes."""
    found: dict[str, int] = {}
    for root, folders, names in os.walk(directory):
        folders.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            if os.path.isfile(path) and not os.path.islink(path):
                found[Path(path).relative_to(directory).as_posix()] = os.path.getsize(path)
            if len(found) >= MAX_LISTED_FILES:
                return found
    return found


def _give(directory: Path, owner: int) -> None:
    for root, folders, names in os.walk(directory):
        for name in (*folders, *names):
            os.chown(os.path.join(root, name), owner, owner, follow_symlinks=False)
    os.chown(directory, owner, owner)
