"""skillshelf: skills for pydantic-ai agents, loaded only when the model needs them.

The names below are imported when first used (PEP 562), so `import skillshelf` stays cheap for what needs only
part of it: the `skillshelf` command line shows its help without importing pydantic-ai.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .capability.catalog import DEFAULT_CATALOG_BUDGET, CatalogEntry, render_catalog
    from .capability.meta_tools import SkillMatch
    from .capability.options import import_skills
    from .capability.skills import DEFAULT_ID, SkillCommand, Skills, loaded_skills
    from .content import SkillContent, TextContent
    from .errors import (
        ResourceError,
        ScriptError,
        SkillConflictError,
        SkillError,
        SkillFormatError,
        SkillFormatWarning,
        SkillWarning,
    )
    from .library import LibraryOptions, SkillLibrary
    from .markdown.lenient import FormatDeviation
    from .ranking.lexical import DEFAULT_THRESHOLD, SearchDocument, SearchHit
    from .ranking.ranker import Ranker, RankerFactory, SearchOptions
    from .ranking.semantic import Encoder, SemanticUnavailableError
    from .skill import Skill
    from .sources import (
        DirectorySource,
        EntryPointSource,
        GitSource,
        PackageSource,
        SkillSource,
        SkippedSkill,
        SourceSkills,
    )
    from .workspace import ForeignWorkspaceError, ScriptLimits, ScriptResult, SkillSandbox

__all__ = (
    'DEFAULT_CATALOG_BUDGET',
    'DEFAULT_ID',
    'DEFAULT_THRESHOLD',
    'CatalogEntry',
    'DirectorySource',
    'Encoder',
    'EntryPointSource',
    'ForeignWorkspaceError',
    'FormatDeviation',
    'GitSource',
    'LibraryOptions',
    'PackageSource',
    'Ranker',
    'RankerFactory',
    'ResourceError',
    'ScriptError',
    'ScriptLimits',
    'ScriptResult',
    'SearchDocument',
    'SearchHit',
    'SearchOptions',
    'SemanticUnavailableError',
    'Skill',
    'SkillCommand',
    'SkillConflictError',
    'SkillContent',
    'SkillError',
    'SkillFormatError',
    'SkillFormatWarning',
    'SkillLibrary',
    'SkillMatch',
    'SkillSandbox',
    'SkillSource',
    'SkillWarning',
    'Skills',
    'SkippedSkill',
    'SourceSkills',
    'TextContent',
    'import_skills',
    'loaded_skills',
    'render_catalog',
)

_EXPORTS: dict[str, str] = {
    'CatalogEntry': '.capability.catalog',
    'DEFAULT_CATALOG_BUDGET': '.capability.catalog',
    'render_catalog': '.capability.catalog',
    'SkillMatch': '.capability.meta_tools',
    'import_skills': '.capability.options',
    'DEFAULT_ID': '.capability.skills',
    'SkillCommand': '.capability.skills',
    'Skills': '.capability.skills',
    'loaded_skills': '.capability.skills',
    'SkillContent': '.content',
    'TextContent': '.content',
    'ResourceError': '.errors',
    'ScriptError': '.errors',
    'SkillConflictError': '.errors',
    'SkillError': '.errors',
    'SkillFormatError': '.errors',
    'SkillFormatWarning': '.errors',
    'SkillWarning': '.errors',
    'LibraryOptions': '.library',
    'SkillLibrary': '.library',
    'FormatDeviation': '.markdown.lenient',
    'DEFAULT_THRESHOLD': '.ranking.lexical',
    'SearchDocument': '.ranking.lexical',
    'SearchHit': '.ranking.lexical',
    'Ranker': '.ranking.ranker',
    'RankerFactory': '.ranking.ranker',
    'SearchOptions': '.ranking.ranker',
    'Encoder': '.ranking.semantic',
    'SemanticUnavailableError': '.ranking.semantic',
    'Skill': '.skill',
    'DirectorySource': '.sources',
    'EntryPointSource': '.sources',
    'GitSource': '.sources',
    'PackageSource': '.sources',
    'SkillSource': '.sources',
    'SkippedSkill': '.sources',
    'SourceSkills': '.sources',
    'ForeignWorkspaceError': '.workspace',
    'ScriptLimits': '.workspace',
    'ScriptResult': '.workspace',
    'SkillSandbox': '.workspace',
}
"""Each public name and the module that defines it, imported on first use."""


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is used, then keep it here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names too, imported or not yet."""
    return sorted({*globals(), *__all__})
