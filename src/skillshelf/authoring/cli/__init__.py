"""The `skillshelf` command line; its packages come with the `cli` extra: `pip install "skillshelf[cli]"`."""

from __future__ import annotations

import sys

__all__ = ('main',)

MISSING_EXTRA = (
    'The skillshelf command line needs packages that are not installed ({missing}).\n'
    'Install them with:  pip install "skillshelf[cli]"\n'
)


def main() -> None:
    """Run the command line (the `skillshelf` console script and `python -m skillshelf`)."""
    try:
        from .app import app
    except ImportError as error:
        if (error.name or '').split('.')[0] not in {'typer', 'rich', 'click'}:
            raise
        sys.stderr.write(MISSING_EXTRA.format(missing=error.name))
        raise SystemExit(1) from None
    app(prog_name='skillshelf')
