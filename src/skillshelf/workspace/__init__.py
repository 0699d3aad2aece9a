"""Moved: `skillshelf.workspace` is `skillshelf.sandbox` (the sandbox annex) and `skillshelf.scripts` (running a
skill's scripts in any workspace); importing from here still works for this release, with a `DeprecationWarning`."""

from .._moved import forward

__getattr__ = forward('skillshelf.workspace', 'skillshelf.sandbox', 'skillshelf.scripts')
