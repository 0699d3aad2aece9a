"""`RegistryPins`: which revisions a worker reads from a skill registry, each option declared, documented and checked
here once (`SkillRegistry`'s keyword arguments and the spec's `{'registry': url, ...}` short form both build it).

Kept apart from the registry itself so that checking a spec needs no SQLAlchemy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from ..errors import SkillError

__all__ = ('RegistryPins',)


@dataclass(frozen=True)
class RegistryPins:
    """Which revisions of a registry's skills a worker reads; by default the live one of every skill.

    Raises:
        SkillError: an option has the wrong type (the message names it).
    """

    version: int | None = None
    """Read the registry as it was at this registry version (what `SkillRegistry.version()` returned then, as
    `skillshelf list --registry` shows it): every skill at the revision that was live then, skills published later
    left out, none of the later changes seen. A worker pinned this way never reads the catalog again. `None`: follow
    the live revisions."""
    pins: Mapping[str, int] = field(default_factory=dict[str, int])
    """Skills held at one revision each, by name (`{'deploy': 3}`), whatever is live or `version` says; the other
    skills follow `version` or the live revisions. A pin the registry cannot serve (no such skill or revision, or the
    revision that removed it) skips that skill with a warning."""

    def __post_init__(self) -> None:
        version = cast(object, self.version)
        if version is not None and (not isinstance(version, int) or isinstance(version, bool) or version < 0):
            raise SkillError(f'the `version` option must be a registry version (an integer from 0), not {version!r}')
        pins = cast(object, self.pins)
        if not isinstance(pins, Mapping):
            raise SkillError(f'the `pins` option must map skill names to revisions, e.g. {{"deploy": 3}}, not {pins!r}')
        for name, revision in cast('Mapping[Any, Any]', pins).items():
            if not isinstance(name, str) or not isinstance(revision, int) or isinstance(revision, bool) or revision < 1:
                raise SkillError(
                    f'the `pins` option must map skill names to revisions (integers from 1), not {name!r}: {revision!r}'
                )
        object.__setattr__(self, 'pins', dict(cast('Mapping[str, int]', pins)))

    @property
    def frozen(self) -> bool:
        """Whether nothing the worker reads can change: the whole registry is pinned to a version."""
        return self.version is not None
