"""Git repositories for the tests of git sources: `git` runs a command in one, `init_repository` makes one with an
identity to commit as, `commit` commits everything in it."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(*arguments: str, cwd: Path) -> str:
    """The output of `git arguments...` in `cwd`, stripped; a failure fails the test."""
    return subprocess.run(['git', *arguments], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def init_repository(path: Path) -> Path:
    """A new repository at `path` (made if missing) on branch `main`, with a committer identity of its own."""
    path.mkdir(parents=True, exist_ok=True)
    git('init', '-q', '-b', 'main', cwd=path)
    git('config', 'user.email', 'test@example.com', cwd=path)
    git('config', 'user.name', 'Test', cwd=path)
    return path


def commit(repository: Path, message: str) -> str:
    """Commit every file of `repository` with `message`; the new commit's hash."""
    git('add', '.', cwd=repository)
    git('commit', '-q', '-m', message, cwd=repository)
    return git('rev-parse', 'HEAD', cwd=repository)
