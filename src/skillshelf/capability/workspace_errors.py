"""What the model is told when the workspace itself fails, rather than the command or file it asked for: a clause it
can act on, never a host path; and, where the fix is the developer's (a sandbox that cannot start, a workspace that
is not the conversation's), a `SkillWarning` for them with the details.

Any workspace's errors can say it themselves, read by duck typing (so the capability imports no workspace's classes):
`for_model`, the clause for the model, and `developer_must_act`, true when the developer must be warned.
"""

from __future__ import annotations

import warnings

from pydantic_ai.workspaces import Workspace, WorkspaceError

from .._text import without_paths
from ..errors import SkillWarning

__all__ = ('contained', 'stopped_at_limit', 'stopped_at_time_limit', 'workspace_problem')


def workspace_problem(error: WorkspaceError | OSError | ValueError) -> str:
    """The model's clause for `error` (no final period); warns the developer where the fix is theirs."""
    explained = getattr(error, 'for_model', None)
    if isinstance(explained, str):
        if getattr(error, 'developer_must_act', False) is True:
            warnings.warn(SkillWarning(f"the run's workspace cannot be used: {error}"), stacklevel=3)
        return explained.rstrip('.')
    if isinstance(error, OSError):  # its filename may be a host path
        return without_paths(error.strerror or type(error).__name__)
    return without_paths(str(error)) or type(error).__name__  # a workspace's message may name its host folder


def contained(workspace: Workspace) -> bool:
    """Whether the workspace kills everything a command started at its time limit, as its backend says
    (`kills_every_process`: skillshelf's sandbox, a PID namespace per command); pydantic-ai's `LocalWorkspace` kills
    the command's process group, which a process that started a session of its own (`setsid`, a daemon) has left."""
    return getattr(workspace.backend, 'kills_every_process', False) is True


_FULL = 'Nothing more can run or be written there until files are removed: tell the user.'
_AT_LIMIT = {
    'disk': f'it filled the workspace past its size limit. {_FULL}',
    'files': f'it made more files and folders than the workspace may hold. {_FULL}',
    'memory': (
        'its processes together used more memory than one command may have. Use less (work through the data in '
        'parts), or tell the user.'
    ),
}


def stopped_at_limit(stopped: str) -> str:
    """Why a run the workspace stopped at one of its own limits ended, and what to do next (`stopped` is a
    `CommandStoppedError`'s: `'disk'`, `'files'` or `'memory'`), as sentences after "<the run> was stopped: "."""
    return _AT_LIMIT.get(stopped, f'it passed a limit of the workspace ({stopped}).')


def stopped_at_time_limit(kills_every_process: bool) -> str:
    """Why a run stopped at its time limit ended, as it is true for the workspace it ran in (a clause): one that kills
    every process a command started (see `contained`) or not."""
    if kills_every_process:
        return 'it reached the time limit, and every process it started was killed'
    return (
        'it reached the time limit and was killed with its process group; a process it started in a session of its '
        'own (a daemon, `setsid`) may still be running in the workspace'
    )
