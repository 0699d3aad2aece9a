"""Moved: the command line is `skillshelf.authoring.cli`; importing from here still works for this release, with a
`DeprecationWarning`."""

from .._moved import forward

__getattr__ = forward('skillshelf.cli', 'skillshelf.authoring.cli')
