"""The library: every skill an agent can load, collected from its sources (`collection`), kept up to date and
searchable (`index`), behind one facade (`SkillLibrary`) configured by `LibraryOptions`.

The two names are imported on first use (PEP 562), so a light module of this package (`name_filter`, say) can be
imported without the search machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .library import SkillLibrary
    from .options import LibraryOptions

__all__ = ('LibraryOptions', 'SkillLibrary')

_EXPORTS = {'SkillLibrary': '.library', 'LibraryOptions': '.options'}


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is used, then keep it here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
