"""Moved: the `SKILL.md` linter is `skillshelf.authoring.lint` (the authoring annex); importing from here still works for this release, with a
`DeprecationWarning`."""

from .._moved import forward

__getattr__ = forward('skillshelf.lint', 'skillshelf.authoring.lint')
