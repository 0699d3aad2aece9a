"""What a block of code warned, as the tests read it.

`pytest.warns` records every warning raised while it is open, and a test that unpacks the record can catch one it
did not cause: a `ResourceWarning` for an event loop an earlier test left to the garbage collector (`run_sync` sets
one that pytest-asyncio later replaces) lands in whichever test runs when the collector does. The tests read only
the category they are about.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

from skillshelf import SkillWarning


def said(caught: Iterable[warnings.WarningMessage], category: type[Warning] = SkillWarning) -> list[str]:
    """The messages of the warnings of `category` (subclasses included) in `caught`, in order."""
    return [str(warning.message) for warning in caught if issubclass(warning.category, category)]
