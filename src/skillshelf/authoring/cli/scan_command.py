"""The `scan` command: the content scan of skill folders (what `Skills(scan=...)` and a registry's `publish` run),
every finding with its skill, file, line, rule and severity, and the library-level findings beside them."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from .options import AsJson
from .render import emit_json, out, print_skipped, skipped_json

__all__ = ('scan',)

_STYLES = {'critical': 'bold red', 'warning': 'yellow', 'info': 'dim'}


def scan(
    paths: Annotated[
        list[Path], typer.Argument(help='Skill folders, or library directories holding them.', metavar='PATH')
    ],
    as_json: AsJson = False,
    show_info: Annotated[bool, typer.Option('--info', help='Also show findings of severity info.')] = False,
) -> None:
    """Scan skills for content that attacks the agent or the machine: hidden characters, instructions to ignore
    the agent's instructions or hide from the user, code fetched or decoded and run, credentials sent out, writes
    that persist, destructive commands, suspicious dependencies; and near-duplicate skills and descriptions too
    generic to route on. Nothing is run. Exits 1 on a critical finding."""
    from ...errors import SkillWarning
    from ...scan import scan_skill
    from ...scan.cache import findings_cache
    from ...scan.library_rules import library_findings
    from ...sources.directory import discover

    findings: list[Any] = []
    skipped: list[Any] = []
    summaries: list[tuple[str, str, str]] = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', SkillWarning)  # a broken SKILL.md is listed as skipped below
        for path in paths:
            found = discover(path)
            skipped += found.skipped
            for skill in found.skills:
                findings += scan_skill(skill)
                summaries.append((skill.name, skill.description, skill.load_instructions(1500)))
    findings_cache.save()
    findings += library_findings(summaries)
    shown = [finding for finding in findings if show_info or finding.severity != 'info']
    critical = sum(finding.severity == 'critical' for finding in findings)
    if as_json:
        emit_json(
            {
                'skills': len(summaries),
                'critical': critical,
                'findings': [
                    {
                        'skill': f.skill,
                        'file': f.file,
                        'line': f.line,
                        'rule': f.rule,
                        'severity': f.severity,
                        'message': f.message,
                    }
                    for f in shown
                ],
                'skipped': skipped_json(skipped),
            }
        )
    else:
        _print(shown, len(summaries), critical)
        print_skipped(skipped)
    if critical:
        raise typer.Exit(1)


def _print(findings: list[Any], skills: int, critical: int) -> None:
    console = out()
    by_skill: dict[str, list[Any]] = {}
    for finding in findings:
        by_skill.setdefault(finding.skill, []).append(finding)
    for name, found in by_skill.items():
        worst = min(found, key=lambda f: ('critical', 'warning', 'info').index(f.severity)).severity
        console.print(Text.assemble(('✗ ' if worst == 'critical' else '! ', _STYLES[worst]), (name, 'bold')))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=2)
        grid.add_column(no_wrap=True, min_width=8)
        grid.add_column(style='dim', min_width=14, overflow='fold')
        grid.add_column(ratio=1, overflow='fold')
        for finding in found:
            where = f'{finding.file}:{finding.line}' if finding.line else finding.file
            grid.add_row(
                '', Text(finding.severity, _STYLES[finding.severity]), f'{where} {finding.rule}', finding.message
            )
        console.print(grid)
    flagged = len(by_skill)
    console.print(
        f'\n{skills} skill{"" if skills == 1 else "s"} scanned: {critical} critical finding'
        f'{"" if critical == 1 else "s"}; {flagged} skill{"" if flagged == 1 else "s"} with findings shown.'
    )
