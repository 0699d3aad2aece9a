"""The `skillshelf` commands: what a skill author needs to see what the model sees.

This module only assembles the Typer app; each command lives in the module named after what it is about. Declaring
the commands imports Typer, Rich and the standard library, nothing more: each command imports the library (and
pydantic-ai) when it runs, so `skillshelf --help` and a mistyped option answer at once.
"""

from __future__ import annotations

import typer

from .check_command import check
from .env_command import env
from .eval_command import eval_command
from .library_commands import index, list_skills, validate
from .lock_commands import diff, lock
from .model_view_commands import catalog, search, show
from .registry_commands import prune, publish, rollback, unpublish
from .render import one_line_warnings
from .scan_command import scan
from .serve_command import serve_mcp

__all__ = ('app',)

app = typer.Typer(
    name='skillshelf',
    help='See your skills the way the model sees them: list, validate, show, catalog, search and evaluate them; '
    'check what their scripts need, build their environment and scan what they contain; index them ahead of time.',
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode='markdown',
)


@app.callback()
def _every_command(context: typer.Context) -> None:
    """Runs before the command: its warnings (skipped or repaired skills) are shown one line each on stderr."""
    context.with_resource(one_line_warnings())


# Registered in the order `skillshelf --help` lists them.
app.command('list')(list_skills)
app.command()(validate)
app.command()(check)
app.command()(scan)
app.command()(env)
app.command()(show)
app.command()(catalog)
app.command()(search)
app.command()(index)
app.command('eval')(eval_command)
app.command()(publish)
app.command()(unpublish)
app.command()(rollback)
app.command('serve-mcp')(serve_mcp)
app.command()(prune)
app.command()(lock)
app.command()(diff)
