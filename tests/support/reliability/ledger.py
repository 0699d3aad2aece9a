"""What the attack, fault, property and load tests tried and what skillshelf did, recorded as the tests run.

Tests call [`case`][] with the *observed* outcome (the message skillshelf produced, the state it ended
in), [`example`][] once per hypothesis example with the outcome's kind, and [`figure`][] for load
figures. The plugin in `plugin.py` marks each case passed or failed from the test reports and writes
`docs/reliability.md` at the end of a full run, so the document says what the suite proved, not what
someone believed.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

AREAS = ('Skill files', "The model's calls", 'Resource reads', 'Runs')


@dataclass
class Case:
    """One attack or fault, and how skillshelf handled it."""

    area: str
    name: str
    handling: str
    test: str
    passed: bool | None = None


@dataclass
class Property:
    """One hypothesis property: how many examples ran and what kinds of outcome they had."""

    name: str
    statement: str
    outcomes: Counter[str] = field(default_factory=Counter[str])
    test: str = ''
    passed: bool | None = None


@dataclass
class Ledger:
    cases: dict[tuple[str, str], Case] = field(default_factory=dict[tuple[str, str], Case])
    properties: dict[str, Property] = field(default_factory=dict[str, Property])
    figures: dict[str, tuple[int, str]] = field(default_factory=dict[str, tuple[int, str]])


LEDGER = Ledger()


def current_test() -> str:
    """The node id of the running test (without the `(call)` suffix)."""
    return os.environ.get('PYTEST_CURRENT_TEST', '').rsplit(' ', 1)[0]


def case(area: str, name: str, handling: str, *, root: Path | str | None = None) -> None:
    """Record that `name` was tried in `area` and skillshelf answered with `handling` (observed, not described)."""
    assert area in AREAS, area
    LEDGER.cases[(area, name)] = Case(area, name, _clean(handling, root), current_test())


def example(prop: str, statement: str, outcome: str) -> None:
    """Count one hypothesis example of property `prop`, whose outcome was of kind `outcome`."""
    entry = LEDGER.properties.setdefault(prop, Property(prop, statement))
    entry.outcomes[outcome] += 1
    entry.test = current_test()


def figure(name: str, value: int, detail: str) -> None:
    """Record a load figure, such as the number of concurrent runs held."""
    LEDGER.figures[name] = (value, detail)


_GIT_CACHE_KEY = re.compile(r'(/git/)[0-9a-f]{24}\b')
"""A git source's cache folder, named by a hash of its URL (a temporary path in the tests)."""
_TEMP = re.compile(r"(?:/private)?/(?:tmp|var/folders)/[^\s'\"`)]*")


def _clean(text: str, root: Path | str | None) -> str:
    """One line, without machine-specific temporary paths, short enough for a table cell."""
    if root is not None:
        text = text.replace(str(root), '<lib>')
    text = text.replace(f"'{os.getcwd()}'", "'<cwd>'")  # the checkout's path, wherever the tests run
    text = _TEMP.sub('<tmp>', text)
    text = _GIT_CACHE_KEY.sub(r'\1<key>', text)
    text = text.encode('utf-8', errors='backslashreplace').decode('utf-8')  # lone surrogates from odd file names
    text = ' '.join(text.split())
    return text if len(text) <= 220 else text[:219] + '…'
