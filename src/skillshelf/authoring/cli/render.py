"""Small rendering helpers shared by the commands: consoles, JSON output, warnings, progress, skipped folders, an
empty library, score bars.

Only the standard library, Typer and Rich are imported here, as everywhere the commands are declared: the
library and pydantic-ai are imported by a command when it runs, so `--help` stays fast.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ...errors import SkillWarning

if TYPE_CHECKING:
    from rich.progress import Progress

    from ...sources.base import SkippedSkill
    from .probe import Size


PIPE_WIDTH = 100_000
"""The width of standard output when it is not a terminal and `COLUMNS` does not set one: wide enough that no table
row wraps, so `skillshelf list | grep name` finds every name whole."""


def out() -> Console:
    """A console on the current standard output (created per call, so test runners can capture it); one that never
    wraps a row when the output goes to a pipe or a file (see `PIPE_WIDTH`)."""
    piped = not sys.stdout.isatty() and not os.environ.get('COLUMNS')
    return Console(file=sys.stdout, highlight=False, soft_wrap=False, width=PIPE_WIDTH if piped else None)


def err() -> Console:
    """A console on the current standard error."""
    return Console(file=sys.stderr, highlight=False)


@contextmanager
def one_line_warnings() -> Generator[None]:
    """Show each warning raised inside as one line on standard error, `warning: <message>`, and each only once.

    Python's own format (file, line number, class and the source line of the `warn` call) tells a skill author
    nothing; the message says the file and the problem. Every `SkillWarning` is shown, whatever the warning filters
    outside say; other warnings follow those filters and name their class.
    """
    shown: set[str] = set()

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        text = ' '.join(str(message).split())
        if not issubclass(category, SkillWarning):
            text = f'{category.__name__}: {text}'
        if text not in shown:
            shown.add(text)
            err().print(Text.assemble(('warning:', 'yellow'), ' ', text), soft_wrap=True)

    with warnings.catch_warnings():
        warnings.simplefilter('always', SkillWarning)
        warnings.showwarning = show
        yield


def emit_json(data: Any) -> None:
    """Print `data` as indented JSON, unwrapped and uncoloured, for scripts."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + '\n')


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error to standard error and exit with `code`."""
    err().print(f'[bold red]error:[/] {escape(message)}', markup=True)  # messages hold `[extras]` and paths
    raise typer.Exit(code)


def progress_bar(label: str, quiet: bool) -> Progress:
    """A progress bar on standard error; it vanishes when done and never shows with `--json`."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn(f'[bold]{label}'),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err(),
        transient=True,
        disable=quiet,
    )


def note_skipped(skipped: Sequence[SkippedSkill], as_json: bool) -> None:
    """Sum up on standard error what was left out, after the warning line of each, so a missing skill is never a
    mystery; the fix is pointed at only where there is one (a skill shadowed by one of the same name in an earlier
    directory is how a library overrides a skill, not a mistake)."""
    if not skipped or as_json:
        return
    broken, shadowed, others = _kinds_of(skipped)
    notes: list[str] = []
    if broken:
        notes.append(
            f'{_count(broken, "skill folder was", "skill folders were")} skipped (see above); `skillshelf validate` '
            f'says how to fix {"it" if broken == 1 else "them"}.'
        )
    if shadowed:
        notes.append(
            f'{_count(shadowed, "skill is", "skills are")} shadowed by a skill of the same name in an earlier '
            'directory (see above).'
        )
    if others:
        notes.append(f'{_count(others, "entry that is", "entries that are")} not a skill left out (see above).')
    err().print(' '.join(notes), markup=False)


def _kinds_of(skipped: Sequence[SkippedSkill]) -> tuple[int, int, int]:
    """How many of `skipped` are skill folders that could not be read (a `SKILL.md` is there), skills shadowed on
    purpose, and entries that are no skill at all (`GEMINI.md`, `docs/`, an empty directory)."""
    shadowed = sum(item.problem.startswith(SHADOWED) for item in skipped)
    broken = sum(not item.problem.startswith(SHADOWED) and is_skill_file_skip(item) for item in skipped)
    return broken, shadowed, len(skipped) - broken - shadowed


SHADOWED = 'shadowed by '
"""How the library's reason for a shadowed skill starts (see `library.collection`)."""


def is_skill_file_skip(item: SkippedSkill) -> bool:
    """Whether a skipped entry is a `SKILL.md` (or a folder holding one) that could not be used."""
    return item.path.name == 'SKILL.md' or os.path.lexists(item.path / 'SKILL.md')


def _count(number: int, one: str, many: str) -> str:
    return f'{number} {one if number == 1 else many}'


def empty_library(places: Sequence[Path] | str, skipped: Sequence[SkippedSkill]) -> str:
    """Why there is nothing to show: `the library is empty: no skills in <places>`, and what to try.

    `places` are the library directories, or the name of where the skills come from (a registry).
    """
    if isinstance(places, str):
        where = places
    else:
        where = ', '.join(
            f'the working directory ({Path.cwd()})' if path == Path() else repr(str(path)) for path in places
        )
    # Only SKILL.md files count: a repository's other files and folders (`GEMINI.md`, `docs/`) and a directory that
    # holds no skill (reported with where its skills may be) are no skills that failed.
    broken = sum(is_skill_file_skip(item) and not item.problem.startswith(SHADOWED) for item in skipped)
    if broken:
        count = f'{broken} SKILL.md file{" was" if broken == 1 else "s were"} skipped'
        hint = f'{count}: `skillshelf validate` says why, and how to fix {"it" if broken == 1 else "them"}.'
    else:
        hint = (
            'A skill is a folder holding a SKILL.md file: give the directory that holds your skill folders '
            '(`skillshelf list path/to/skills`), or add a Python skill with --skill module:attribute.'
        )
    return f'the library is empty: no skills in {where}. {hint}'


def skipped_json(skipped: Sequence[SkippedSkill]) -> list[dict[str, str]]:
    """Skipped folders for `--json` output."""
    return [{'path': str(item.path), 'problem': item.problem} for item in skipped]


def print_skipped(skipped: Sequence[SkippedSkill]) -> None:
    """A table of the skipped folders and why, if there are any."""
    if not skipped:
        return
    table = Table(title='Skipped', title_style='bold yellow', title_justify='left', show_edge=False)
    table.add_column('Path', style='yellow', overflow='fold')  # fold: a path too long for the terminal wraps
    table.add_column('Problem', overflow='fold')
    for item in skipped:
        table.add_row(str(item.path), item.problem)
    out().print(table)


def size_text(size: Size) -> str:
    """`1,234 chars ≈ 309 tokens`."""
    return f'{size.characters:,} chars ≈ {size.tokens:,} tokens'


def size_json(size: Size) -> dict[str, int]:
    """A size for `--json` output."""
    return {'characters': size.characters, 'tokens': size.tokens}


def score_bar(score: float, width: int = 10) -> str:
    """A bar of `width` cells filled in proportion to a score in [0, 1]."""
    filled = round(max(0.0, min(score, 1.0)) * width)
    return '█' * filled + '·' * (width - filled)
