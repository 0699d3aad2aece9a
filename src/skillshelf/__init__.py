"""skillshelf: skills for pydantic-ai agents, loaded only when the model needs them.

The public names are imported when first used (PEP 562), so `import skillshelf` stays cheap for what needs only part
of it: the `skillshelf` command line shows its help without importing pydantic-ai, and an agent without a sandbox
never imports the sandbox annex. `_PUBLIC` says where each name lives; the block for type checkers repeats it as
imports, which they can follow (a test holds the two equal).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .capability.catalog import (
        DEFAULT_CATALOG_BUDGET as DEFAULT_CATALOG_BUDGET,
    )
    from .capability.catalog import (
        CatalogEntry as CatalogEntry,
    )
    from .capability.catalog import (
        render_catalog as render_catalog,
    )
    from .capability.meta_tools import SkillMatch as SkillMatch
    from .capability.options import import_skills as import_skills
    from .capability.skills import (
        DEFAULT_ID as DEFAULT_ID,
    )
    from .capability.skills import (
        SkillCommand as SkillCommand,
    )
    from .capability.skills import (
        Skills as Skills,
    )
    from .capability.skills import (
        loaded_skills as loaded_skills,
    )
    from .content import SkillContent as SkillContent
    from .content import TextContent as TextContent
    from .errors import (
        ResourceError as ResourceError,
    )
    from .errors import (
        ScriptError as ScriptError,
    )
    from .errors import (
        SkillConflictError as SkillConflictError,
    )
    from .errors import (
        SkillError as SkillError,
    )
    from .errors import (
        SkillFormatError as SkillFormatError,
    )
    from .errors import (
        SkillFormatWarning as SkillFormatWarning,
    )
    from .errors import (
        SkillWarning as SkillWarning,
    )
    from .files import ReadPolicy as ReadPolicy
    from .library import LibraryOptions as LibraryOptions
    from .library import SkillLibrary as SkillLibrary
    from .markdown.lenient import FormatDeviation as FormatDeviation
    from .mcp import MCPSkillSource as MCPSkillSource
    from .ranking.documents import (
        DEFAULT_THRESHOLD as DEFAULT_THRESHOLD,
    )
    from .ranking.documents import (
        SearchDocument as SearchDocument,
    )
    from .ranking.documents import (
        SearchHit as SearchHit,
    )
    from .ranking.ranker import Ranker as Ranker
    from .ranking.ranker import RankerFactory as RankerFactory
    from .ranking.ranker import SearchOptions as SearchOptions
    from .ranking.semantic import Encoder as Encoder
    from .ranking.semantic import SemanticUnavailableError as SemanticUnavailableError
    from .sandbox import ForeignWorkspaceError as ForeignWorkspaceError
    from .sandbox import SandboxLimits as SandboxLimits
    from .sandbox import SkillSandbox as SkillSandbox
    from .scripts import ScriptLimits as ScriptLimits
    from .scripts import ScriptResult as ScriptResult
    from .skill import Skill as Skill
    from .sources import (
        DirectorySource as DirectorySource,
    )
    from .sources import (
        EntryPointSource as EntryPointSource,
    )
    from .sources import (
        GitSource as GitSource,
    )
    from .sources import (
        PackageSource as PackageSource,
    )
    from .sources import (
        SkillSource as SkillSource,
    )
    from .sources import (
        SkippedSkill as SkippedSkill,
    )
    from .sources import (
        SourceSkills as SourceSkills,
    )

_PUBLIC: dict[str, tuple[str, ...]] = {
    '.capability.catalog': ('DEFAULT_CATALOG_BUDGET', 'CatalogEntry', 'render_catalog'),
    '.capability.meta_tools': ('SkillMatch',),
    '.capability.options': ('import_skills',),
    '.capability.skills': ('DEFAULT_ID', 'SkillCommand', 'Skills', 'loaded_skills'),
    '.content': ('SkillContent', 'TextContent'),
    '.files': ('ReadPolicy',),
    '.errors': (
        'ResourceError',
        'ScriptError',
        'SkillConflictError',
        'SkillError',
        'SkillFormatError',
        'SkillFormatWarning',
        'SkillWarning',
    ),
    '.library': ('LibraryOptions', 'SkillLibrary'),
    '.markdown.lenient': ('FormatDeviation',),
    '.mcp': ('MCPSkillSource',),
    '.ranking.documents': ('DEFAULT_THRESHOLD', 'SearchDocument', 'SearchHit'),
    '.ranking.ranker': ('Ranker', 'RankerFactory', 'SearchOptions'),
    '.ranking.semantic': ('Encoder', 'SemanticUnavailableError'),
    '.sandbox': ('ForeignWorkspaceError', 'SandboxLimits', 'SkillSandbox'),
    '.scripts': ('ScriptLimits', 'ScriptResult'),
    '.skill': ('Skill',),
    '.sources': (
        'DirectorySource',
        'EntryPointSource',
        'GitSource',
        'PackageSource',
        'SkillSource',
        'SkippedSkill',
        'SourceSkills',
    ),
}
"""The public names, by the module that defines them."""

_MODULE_OF = {name: module for module, names in _PUBLIC.items() for name in names}

__all__ = tuple(sorted(_MODULE_OF))  # pyright: ignore[reportUnsupportedDunderAll]  # type checkers read the imports above


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is used, then keep it here."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names too, imported or not yet."""
    return sorted({*globals(), *__all__})
