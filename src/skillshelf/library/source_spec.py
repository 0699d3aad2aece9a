"""The `sources` option of `Skills`: source objects, import paths naming them, or the spec's short forms."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, cast

from .._imports import import_object
from .._text import hide_passwords
from ..errors import SkillError
from ..sources import EntryPointSource, GitSource, PackageSource, SkillSource

__all__ = ('SourceSpec', 'resolve_sources')

SourceSpec = str | Mapping[str, Any]
"""An import path naming a source (or a list of them), or a short form such as `{'git': url, 'ref': 'v1.2'}` or
`{'registry': url, 'version': 41}`, or `{'mcp': url}` (an MCP server serving skills)."""

_FORMS = {
    'package': ('folder',),
    'entry_points': (),
    'git': ('ref', 'subdirectory', 'cache_dir', 'sync_every'),
    'registry': None,
    'mcp': ('namespace',),
}
"""Each short form's key (its main value) and the other keys it takes; a registry's are the options of the registry
annex's `RegistryPins`, checked there, so reading a spec imports no SQL toolkit (nor an `mcp` one, fastmcp)."""
_NUMBERS = frozenset({'sync_every'})
"""The keys whose values are numbers (checked by the source), not strings."""


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
    strings = [value for key, value in spec.items() if (key in kinds or kinds != ['registry']) and key not in _NUMBERS]
    if len(kinds) != 1 or not all(isinstance(value, str) for value in strings):
        raise SkillError(
            f'the `sources` option: {hide_passwords(repr(dict(spec)))} must have exactly one of {", ".join(_FORMS)} '
            'and string values'
        )
    kind = cast(str, kinds[0])
    options = cast('dict[str, Any]', {key: value for key, value in spec.items() if key != kind})
    main = cast(str, spec[kind])
    if kind == 'registry':
        from ..registry import RegistryPins, SkillRegistry  # the registry annex, only when a spec names a registry

        _check_options(kind, options, [option.name for option in fields(RegistryPins)])
        return SkillRegistry(main, **options)
    _check_options(kind, options, cast('tuple[str, ...]', _FORMS[kind]))
    if kind == 'mcp':
        from ..mcp import MCPSkillSource  # the MCP annex, only when a spec names an MCP server

        return MCPSkillSource(main, **options)
    if kind == 'package':
        return PackageSource(main, **options)
    if kind == 'entry_points':
        return EntryPointSource(main)
    cache: dict[str, Any] = {'cache_dir': Path(options.pop('cache_dir'))} if 'cache_dir' in options else {}
    return GitSource(main, **options, **cache)


def _check_options(kind: str, options: Mapping[str, object], allowed: Sequence[str]) -> None:
    """Refuse the keys of a `kind` short form that it does not take.

    Raises:
        SkillError: naming the keys it takes.
    """
    if unknown := sorted(set(options) - set(allowed)):
        raise SkillError(
            f'the `sources` option: a {kind!r} source takes {", ".join(allowed) or "nothing else"}, '
            f'not {", ".join(unknown)}'
        )
