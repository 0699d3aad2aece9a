"""Modules that moved: the old import path keeps working for one release, with a `DeprecationWarning` naming the new
one."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ('forward',)


def forward(old: str, *new: str) -> Callable[[str], Any]:
    """A module `__getattr__` for `old`: each name comes from the first of the `new` modules that has it, with a
    warning that names that module."""

    def __getattr__(name: str) -> Any:
        for module in new:
            value = getattr(importlib.import_module(module), name, forward)
            if value is not forward:
                warnings.warn(f'{old} has moved: import {name} from {module}', DeprecationWarning, stacklevel=2)
                return value
        raise AttributeError(f'module {old!r} has no attribute {name!r}')

    return __getattr__
