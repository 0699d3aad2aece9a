"""The `sources` option of `Skills`: source objects, import paths naming them, or the spec's short forms."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, cast

from .._imports import import_object
from .._text import hide_passwords
from ..errors import SkillError
from .base import SkillSource
from .git import GitSource
from .packages import EntryPointSource, PackageSource
from .registry_pins import RegistryPins

__all__ = ('SourceSpec', 'resolve_sources')

SourceSpec = str | Mapping[str, Any]
"""An import path naming a source (or a list of them), or a short form such as `{'git': url, 'ref': 'v1.2'}` or
`{'registry': url, 'version': 41}`."""

_FORMS = {
    'package': ('folder',),
    'entry_points': (),
    'git': ('ref', 'subdirectory', 'cache_dir'),
    'registry': tuple(option.name for option in fields(RegistryPins)),
}
"""Each short form's key (its main value) and the other keys it takes (a registry's: the options of `RegistryPins`,
which checks them)."""


def resolve_sources(value: object) -> list[SkillSource]:
    """The sources `value` names, in order.

    Raises:
        SkillError: naming the `sources` option, for anything that is not a source, an import path or a short form.
    """
    items = cast('Sequence[object]', value) if isinstance(value, (list, tuple)) else [value]
    if value == () or value is None:
        items = []
    sources: list[SkillSource] = []
    for item in items:
        if isinstance(item, str):
            sources.extend(_imported(item))
        elif isinstance(item, Mapping):
            sources.append(_short_form(cast('Mapping[object, object]', item)))
        elif isinstance(item, SkillSource):
            sources.append(item)
        else:
            raise SkillError(
                f'the `sources` option takes skill sources, import paths or short forms such as '
                f'{{"git": url, "ref": "main"}}, not {item!r}'
            )
    return sources


def _imported(path: str) -> list[SkillSource]:
    target = import_object(path, 'skill source')
    found = cast('list[object]', list(target)) if isinstance(target, (list, tuple)) else [target]  # pyright: ignore[reportUnknownArgumentType]
    if not all(isinstance(item, SkillSource) for item in found):
        raise SkillError(f'{path!r} does not name a skill source (an object with `read_skills` and `version`)')
    return cast('list[SkillSource]', found)


def _short_form(spec: Mapping[object, object]) -> SkillSource:
    kinds = [key for key in spec if key in _FORMS]
    strings = [value for key, value in spec.items() if key in kinds or kinds != ['registry']]
    if len(kinds) != 1 or not all(isinstance(value, str) for value in strings):
        raise SkillError(
            f'the `sources` option: {hide_passwords(repr(dict(spec)))} must have exactly one of {", ".join(_FORMS)} '
            'and string values'
        )
    kind = cast(str, kinds[0])
    options = cast('dict[str, Any]', {key: value for key, value in spec.items() if key != kind})
    if unknown := sorted(set(options) - set(_FORMS[kind])):
        allowed = ', '.join(_FORMS[kind]) or 'nothing else'
        raise SkillError(f'the `sources` option: a {kind!r} source takes {allowed}, not {", ".join(unknown)}')
    main = cast(str, spec[kind])
    if kind == 'package':
        return PackageSource(main, **options)
    if kind == 'entry_points':
        return EntryPointSource(main)
    if kind == 'git':
        cache: dict[str, Any] = {'cache_dir': Path(options.pop('cache_dir'))} if 'cache_dir' in options else {}
        return GitSource(main, **options, **cache)
    from .registry import SkillRegistry  # the `registry` extra, imported only when it is asked for

    return SkillRegistry(main, **options)
