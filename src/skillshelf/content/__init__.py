"""What a skill holds besides its name and description: instructions and files, behind one small interface
(`SkillContent`), kept in memory (`TextContent`), in a folder (`FolderContent`) or elsewhere (a registry's rows)."""

from .base import MAX_RESOURCE_BYTES, SkillContent, TextContent, read_text
from .folder import FolderContent
from .paths import safe_relative_path

__all__ = ('MAX_RESOURCE_BYTES', 'FolderContent', 'SkillContent', 'TextContent', 'read_text', 'safe_relative_path')
