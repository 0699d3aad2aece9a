"""The library: every skill an agent can load, collected from its sources (`collection`), kept up to date and
searchable (`index`), behind one facade (`SkillLibrary`) configured by `LibraryOptions`."""

from .library import SkillLibrary
from .options import LibraryOptions

__all__ = ('LibraryOptions', 'SkillLibrary')
