"""skillshelf: skills for pydantic-ai agents, loaded only when the model needs them."""

from ._capability import DEFAULT_ID, Skills, import_skills
from ._catalog import DEFAULT_CATALOG_BUDGET, CatalogEntry, render_catalog
from ._discovery import SkippedSkill
from ._errors import SkillConflictError, SkillError, SkillFormatError, SkillWarning
from ._library import SkillLibrary
from ._resources import ResourceError
from ._search import SearchHit
from ._semantic import Encoder, SemanticUnavailableError
from ._skill import Skill
from ._toolset import SkillMatch

__all__ = (
    'DEFAULT_CATALOG_BUDGET',
    'DEFAULT_ID',
    'CatalogEntry',
    'Encoder',
    'ResourceError',
    'SearchHit',
    'SemanticUnavailableError',
    'Skill',
    'SkillConflictError',
    'SkillError',
    'SkillFormatError',
    'SkillLibrary',
    'SkillMatch',
    'SkillWarning',
    'Skills',
    'SkippedSkill',
    'import_skills',
    'render_catalog',
)
