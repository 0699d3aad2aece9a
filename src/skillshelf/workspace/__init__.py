"""Skills that do real work: their scripts and files in the run's pydantic-ai workspace.

`SkillSandbox` supplies a workspace in a bubblewrap sandbox, one folder per conversation (`sandbox`, `bubblewrap`,
`folders` for the folders on the host and who may open them, `usage` for the size limit); `materialise` copies a
skill's files into any workspace; `scripts` runs a skill's script there within `ScriptLimits`.
"""

from .errors import ForeignWorkspaceError, SandboxBrokenError, WorkspaceFullError
from .limits import ScriptLimits
from .sandbox import PROVIDER, SandboxWorkspace, SkillSandbox
from .scripts import ScriptResult

__all__ = (
    'PROVIDER',
    'ForeignWorkspaceError',
    'SandboxBrokenError',
    'SandboxWorkspace',
    'ScriptLimits',
    'ScriptResult',
    'SkillSandbox',
    'WorkspaceFullError',
)
