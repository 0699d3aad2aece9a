"""The sandbox annex: `SkillSandbox`, a pydantic-ai workspace in a bubblewrap sandbox, one folder per conversation.

An application adds it like pydantic-ai's `LocalWorkspace` (`Agent(..., capabilities=[SkillSandbox(), Skills(...)])`);
`Skills(scripts=True)` makes one when the agent has no other workspace. Inside: the workspace backend (`sandbox`,
`backend`, with its file operations in `fileops`), what one command may use (`limits`), the bubblewrap command line
(`bubblewrap`), the conversations' folders on the host and who may open them (`folders`), the size watch (`usage`),
bounded processes (`process`), the seccomp filter (`seccomp`) and the errors (`errors`). The skills core never imports this package at import time.
"""

from .errors import ForeignWorkspaceError, SandboxBrokenError, WorkspaceFullError
from .limits import SandboxLimits
from .sandbox import PROVIDER, SandboxWorkspace, SkillSandbox

__all__ = (
    'PROVIDER',
    'ForeignWorkspaceError',
    'SandboxBrokenError',
    'SandboxLimits',
    'SandboxWorkspace',
    'SkillSandbox',
    'WorkspaceFullError',
)
