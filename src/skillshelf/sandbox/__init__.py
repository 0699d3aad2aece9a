"""The sandbox annex: `SkillSandbox`, a pydantic-ai workspace in a bubblewrap sandbox, one folder per conversation.

An application adds it like pydantic-ai's `LocalWorkspace` (`Agent(..., capabilities=[SkillSandbox(), Skills(...)])`);
`Skills(scripts=True)` makes one when the agent has no other workspace. Inside: the workspace backend (`sandbox`,
`backend`, with its file operations in `fileops`), what one command may use (`limits`), the bubblewrap command line
(`bubblewrap`) and the host's system configuration it shows (`system`), the conversations' folders on the host and
who may open them (`folders`), the safety of their root (`root`, on `private`), when each was last used (`use`), the
host's user ids for them (`uids`), the size watch (`usage`), bounded processes (`process`), the seccomp filter
(`seccomp`) and the errors (`errors`). The skills core never imports this package at import time.
"""

from .errors import (
    ForeignWorkspaceError,
    SandboxBrokenError,
    SandboxRootError,
    UnsafeWorkspaceError,
    WorkspaceDeletedError,
    WorkspaceFullError,
)
from .limits import SandboxLimits
from .sandbox import PROVIDER, SandboxWorkspace, SkillSandbox

__all__ = (
    'PROVIDER',
    'ForeignWorkspaceError',
    'SandboxBrokenError',
    'SandboxLimits',
    'SandboxRootError',
    'SandboxWorkspace',
    'SkillSandbox',
    'UnsafeWorkspaceError',
    'WorkspaceDeletedError',
    'WorkspaceFullError',
)
