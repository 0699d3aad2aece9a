"""What goes wrong in skillshelf's sandboxed workspace, said twice: `str(error)` for the developer (it may name host
paths), `for_model` for the model (it never does, and tells it what to do next).

All are pydantic-ai `WorkspaceError`s, so code written for any workspace handles them, and `SkillError`s. The
capability reads `for_model`, and `developer_must_act` (then it warns the developer too), without importing them;
`WorkspaceFullError` and `MemoryLimitError` are the core's (`skillshelf.scripts.errors`), raised here when a command
fills a folder or passes its memory cap.
"""

from __future__ import annotations

from pydantic_ai.workspaces import WorkspaceError, WorkspaceUnavailableError

from ..errors import SkillError
from ..scripts.errors import MemoryLimitError, WorkspaceFullError

__all__ = (
    'ForeignWorkspaceError',
    'MemoryLimitError',
    'SandboxBrokenError',
    'SandboxRootError',
    'UnsafeWorkspaceError',
    'WorkspaceDeletedError',
    'WorkspaceFullError',
)


class ForeignWorkspaceError(WorkspaceUnavailableError, SkillError):
    """A ref names a sandbox workspace that is not this conversation's: another conversation's, or one made without a
    conversation (which opens only when the application passes it to a run itself). Raised when the run selects its
    workspace, before anything runs, so no run answers with another conversation's ref."""

    developer_must_act = True
    """The fix is the developer's: the capability warns them, with this error's message."""
    for_model = (
        "this conversation's workspace is not available to it, so no file can be read or written and nothing can run "
        'there. Do not retry: tell the user that the workspace could not be opened.'
    )
    """What the model is told, if a tool meets this error."""


class SandboxBrokenError(WorkspaceError, SkillError):
    """The sandbox cannot start a process on this host any more: bubblewrap was removed or cannot run (the message
    says which program and why)."""

    developer_must_act = True
    """The fix is the developer's: the capability warns them, with this error's message."""
    for_model = (
        'the sandbox that runs commands cannot start on this machine right now, so no file can be read or written '
        'and nothing can run in the workspace. Do not retry: tell the user that the sandbox is not working.'
    )
    """What the model is told."""


class SandboxRootError(WorkspaceError, SkillError):
    """The sandbox's root folder is not safe to keep workspaces in: it is a link, another user's, or open to other
    users (someone may have made it first, to plant workspaces there), or a file in it is a link. Never repaired
    silently: the message names the folder and what to do."""

    developer_must_act = True
    """The fix is the developer's: the capability warns them, with this error's message."""
    for_model = (
        "the folder that holds the sandbox's workspaces is not safe to use, so no file can be read or written and "
        'nothing can run in the workspace. Do not retry: tell the user that the sandbox is not set up safely.'
    )
    """What the model is told."""


class UnsafeWorkspaceError(WorkspaceUnavailableError, SkillError):
    """A workspace's folder on the host is not one the sandbox made: a part of it is a link, it belongs to another
    user, or it names a user id the sandbox never gave out (such as root's). It is refused before anything runs
    there."""

    developer_must_act = True
    """The fix is the developer's: the capability warns them, with this error's message."""
    for_model = (
        "this conversation's workspace cannot be opened: its folder failed the sandbox's safety checks, so no file "
        'can be read or written and nothing can run there. Do not retry: tell the user that the workspace could '
        'not be opened.'
    )
    """What the model is told."""


class WorkspaceDeletedError(WorkspaceUnavailableError, SkillError):
    """The workspace was deleted (`SkillSandbox.delete` or `prune`): its files are gone and nothing runs there; a
    backend kept from before says so at every operation."""

    for_model = (
        "this conversation's workspace was deleted, so its files are gone and nothing can run there. Do not retry: "
        'tell the user that the workspace was deleted.'
    )
    """What the model is told."""
