"""skillshelf: skills for pydantic-ai agents, loaded only when the model needs them."""

from .capability.catalog import DEFAULT_CATALOG_BUDGET, CatalogEntry, render_catalog
from .capability.meta_tools import SkillMatch
from .capability.options import import_skills
from .capability.skills import DEFAULT_ID, SkillCommand, Skills, loaded_skills
from .content import SkillContent, TextContent
from .errors import ResourceError, ScriptError, SkillConflictError, SkillError, SkillFormatError, SkillWarning
from .library import LibraryOptions, SkillLibrary
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
from .workspace import ScriptLimits, ScriptResult, SkillSandbox

__all__ = (
    'DEFAULT_CATALOG_BUDGET',
    'DEFAULT_ID',
    'DEFAULT_THRESHOLD',
    'CatalogEntry',
    'DirectorySource',
    'Encoder',
    'EntryPointSource',
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
