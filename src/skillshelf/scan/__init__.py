"""The content scan: what a skill says or ships that attacks the agent or the machine (hidden characters, prompt
injection, code fetched or decoded and run, credentials sent out, persistence, destructive commands, suspicious
dependencies), found by reading its files with Unicode's categories, `ast` and the shell parser of `check`;
nothing is run. `scan_skill` reports `Finding`s; a library refuses or warns about them as `ScanMode` says."""

from .finding import SEVERITIES, SHOWN, Finding, ScanMode, Severity, check_mode, refusal
from .scanner import scan_files, scan_frontmatter, scan_skill

__all__ = (
    'SEVERITIES',
    'SHOWN',
    'Finding',
    'ScanMode',
    'Severity',
    'check_mode',
    'refusal',
    'scan_files',
    'scan_frontmatter',
    'scan_skill',
)
