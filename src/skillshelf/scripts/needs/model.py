"""What a skill needs, as found in its files, and how the environment answered."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

__all__ = ('Checked', 'Need', 'NeedKind', 'SkillNeeds', 'Status', 'merge', 'normalise')

NeedKind = Literal['module', 'package', 'node-package', 'command', 'python']
"""`module`: a top-level Python import; `package`: a distribution declared in `requirements.txt` or a PEP 723
header; `node-package`: an npm package a JavaScript file loads or the skill installs; `command`: a program run by
name; `python`: a Python version."""
Status = Literal['ok', 'missing', 'unknown']
"""`unknown`: the check could not decide (a marker or version it cannot evaluate); never counted as missing."""


@dataclass(frozen=True)
class Need:
    """One thing a skill's scripts need from the environment."""

    kind: NeedKind
    """What it is (see `NeedKind`)."""
    name: str
    """The import name (`PIL`), distribution (`pillow`), npm package (`pptxgenjs`), program (`node`), or `python`."""
    spec: str = ''
    """A package's requirement as written (`pillow>=10; python_version < "3.13"`), or a Python version specifier
    (`>=3.10`); empty otherwise."""
    found_in: tuple[str, ...] = ()
    """Where it was found: a file of the skill (`scripts/fill.py`), or `SKILL.md compatibility`."""
    optional: bool = False
    """Every use found is guarded (`try: import x` / `except ImportError`, `command -v x`, `shutil.which('x')`):
    the script copes without it, so its absence is shown but not counted."""
    alternatives: tuple[str, ...] = ()
    """For a command: other programs any of which will do (ImageMagick is `magick` or `convert`)."""
    imports: tuple[str, ...] = ()
    """For a package: the import names of the skill's scripts it provides (`yaml` for `PyYAML`)."""


@dataclass(frozen=True)
class SkillNeeds:
    """Everything one skill needs, as its files say."""

    name: str
    """The skill's name."""
    needs: tuple[Need, ...] = ()
    """Its needs: packages, modules, commands, Python versions, in that order."""
    compatibility: str | None = None
    """Its `compatibility` field, verbatim (what could be read from it is in `needs` too)."""
    notes: tuple[str, ...] = ()
    """What could not be read (a script that does not parse, a file too large), so nothing is missed silently."""
    stdlib: tuple[Need, ...] = ()
    """Standard-library modules its scripts import (of the Python running this): checked too, since another Python
    may lack one (`distutils` left in 3.12; Debian's python3 has no `tkinter` without python3-tk)."""


@dataclass(frozen=True)
class Checked:
    """A need and what the environment said about it."""

    need: Need
    """The need."""
    status: Status
    """`ok`, `missing`, or `unknown`."""
    detail: str = ''
    """What was found (`/usr/bin/node`, `pillow 10.4.0`) or why it is missing."""
    hint: str | None = None
    """How to get it, when that is known (`pip install pillow`)."""

    @property
    def counts(self) -> bool:
        """Whether it makes the check fail: missing, and not optional."""
        return self.status == 'missing' and not self.need.optional


@dataclass
class _Seen:
    need: Need
    found_in: dict[str, None] = field(default_factory=dict[str, None])
    optional: bool = True


_ORDER = {'package': 0, 'module': 1, 'node-package': 2, 'command': 3, 'python': 4}


def merge(found: Iterable[tuple[Need, str]]) -> tuple[Need, ...]:
    """One need per kind and name from `(need, where)` sightings: the places joined, optional only if every
    sighting is, the first name, specifier and alternatives kept. Packages first, then modules, Node packages,
    commands and Python versions, each by name."""
    seen: dict[tuple[str, str], _Seen] = {}
    for need, where in found:
        key = (need.kind, _key(need))
        entry = seen.setdefault(key, _Seen(need))
        entry.found_in[where] = None
        entry.optional = entry.optional and need.optional
        if not entry.need.spec and need.spec:
            entry.need = replace(entry.need, spec=need.spec)
    return tuple(
        replace(entry.need, found_in=tuple(entry.found_in), optional=entry.optional)
        for _, entry in sorted(seen.items(), key=lambda item: (_ORDER[item[0][0]], item[0][1].lower()))
    )


def _key(need: Need) -> str:
    if need.kind == 'package':
        return normalise(need.name)
    return need.spec if need.kind == 'python' else need.name


def normalise(distribution: str) -> str:
    """A distribution's name as package indexes compare them (PEP 503): `PyYAML` and `pyyaml` are one."""
    return re.sub(r'[-_.]+', '-', distribution).lower()
