"""Resolving `'package.module:attribute'` import paths, as agent specs and the command line name Python objects."""

from __future__ import annotations

import importlib

from .errors import SkillError

__all__ = ('import_object',)


def import_object(path: object, what: str) -> object:
    """The object named by `'package.module:attribute'` (the attribute may be dotted).

    `what` names the object in error messages, e.g. `'skill'` or `'encoder'`.

    Raises:
        SkillError: the path is malformed, the module cannot be imported, or it has no such attribute.
    """
    module_name, _, attribute = path.partition(':') if isinstance(path, str) else ('', '', '')
    if not module_name or not attribute:
        raise SkillError(f'the {what} import path {path!r} must look like "package.module:attribute"')
    try:
        target: object = importlib.import_module(module_name)
    except ImportError as error:
        raise SkillError(f'cannot import {module_name!r} for the {what} {path!r}: {error}') from error
    for part in attribute.split('.'):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise SkillError(f'module {module_name!r} has no attribute {attribute!r} (from {path!r})') from None
    return target
