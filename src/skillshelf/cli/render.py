"""Small rendering helpers shared by the commands: consoles, JSON output, score bars."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from .probe import Size


def out() -> Console:
    """A console on the current standard output (created per call, so test runners can capture it)."""
    return Console(file=sys.stdout, highlight=False, soft_wrap=False)


def err() -> Console:
    """A console on the current standard error."""
    return Console(file=sys.stderr, highlight=False)


def emit_json(data: Any) -> None:
    """Print `data` as indented JSON, unwrapped and uncoloured, for scripts."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + '\n')


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error to standard error and exit with `code`."""
    err().print(f'[bold red]error:[/] {escape(message)}', markup=True)  # messages hold `[extras]` and paths
    raise typer.Exit(code)


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
