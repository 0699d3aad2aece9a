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


def out() -> Console:
    """A console on the current standard output (created per call, so test runners can capture it)."""
    return Console(file=sys.stdout, highlight=False, soft_wrap=False)


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
    """Sum up on standard error the folders left out, after the warning line of each, so a missing skill is never
    a mystery."""
    if skipped and not as_json:
        noun = 'folder was' if len(skipped) == 1 else 'folders were'
        err().print(
            f'{len(skipped)} skill {noun} skipped (see above); `skillshelf validate` says how to fix it.', markup=False
        )


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
        # A directory that holds no skill is reported itself (with where its skills may be): not a skipped file.
        named = {os.path.abspath(path) for path in places}
        skipped = [item for item in skipped if os.path.abspath(item.path) not in named]
    if skipped:
        count = f'{len(skipped)} SKILL.md file{" was" if len(skipped) == 1 else "s were"} skipped'
        hint = f'{count}: `skillshelf validate` says why, and how to fix {"it" if len(skipped) == 1 else "them"}.'
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
