"""Moved: the needs checker of `skillshelf check` is `skillshelf.authoring.needs` (the authoring annex); importing from here still works for this release, with a
`DeprecationWarning`."""

from .._moved import forward

__getattr__ = forward('skillshelf.needs', 'skillshelf.authoring.needs')
