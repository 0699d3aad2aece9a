"""skillshelf: skills for pydantic-ai agents, loaded only when the model needs them."""

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
from .scripts import BubblewrapRunner, LocalRunner, ScriptLimits, ScriptRequest, ScriptResult, ScriptRunner
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

__all__ = (
    'DEFAULT_CATALOG_BUDGET',
    'DEFAULT_ID',
    'DEFAULT_THRESHOLD',
    'BubblewrapRunner',
    'CatalogEntry',
    'DirectorySource',
    'Encoder',
    'EntryPointSource',
    'FormatDeviation',
    'GitSource',
    'LibraryOptions',
    'LocalRunner',
    'PackageSource',
    'Ranker',
    'RankerFactory',
    'ResourceError',
    'ScriptError',
    'ScriptLimits',
    'ScriptRequest',
    'ScriptResult',
    'ScriptRunner',
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
