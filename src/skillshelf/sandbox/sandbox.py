"""`SkillSandbox`: a pydantic-ai workspace in a bubblewrap sandbox, one folder per conversation.

`SkillSandbox` is a capability like pydantic-ai's `LocalWorkspace`: it supplies the run's workspace, a
`SandboxWorkspace` backend (see `backend`) whose commands and file operations all run inside bubblewrap, so
they see the same files, and nothing of the host but the read-only system and Python installations. Each
conversation gets its own folder, created at its first operation and named by the `WorkspaceRef` pydantic-ai keeps
in the message history, so the next run of the conversation continues in it; a ref naming a folder that is not the
conversation's is refused when the run selects its workspace (see `folders`). `Skills(scripts=True)` uses one when
the agent has no other workspace.

Folders live under `root` until you delete them (`SkillSandbox.delete`, `SkillSandbox.prune`): whoever keeps a
conversation decides when its files go.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, ClassVar, cast

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

from ..errors import SkillError
from ..scripts.limits import ScriptLimits, given_sandbox_limits
from .backend import PROVIDER, SandboxWorkspace, folders_of
from .bubblewrap import host_path
from .limits import SandboxLimits

__all__ = ('PROVIDER', 'SandboxWorkspace', 'SkillSandbox')


@dataclass
class SkillSandbox(AbstractCapability[Any]):
    """Supply each run a workspace in a bubblewrap sandbox, one folder per conversation (see the module docstring).

    ```python
    agent = Agent(model, capabilities=[SkillSandbox(python='/opt/skills-venv/bin/python'), Skills('skills', scripts=True)])
    ```

    Needs the `bwrap` program (Debian/Ubuntu: `apt-get install bubblewrap`) and a kernel that lets it create
    namespaces. Scripts run on `python` with the packages of its environment: make a virtual environment with what
    your skills need and name its interpreter here; it is mounted read-only.
    """

    isolated: ClassVar[bool] = True
    """Its workspaces isolate commands from the host (see `SandboxWorkspace.isolated`), as `Skills` reads it when the
    agent is built."""

    root: str | Path | None = None
    """Where the conversations' folders are kept; default `skillshelf-workspaces-<uid>` in the temporary directory.
    It must be the agent user's own and closed to others (created so if missing; anything else is refused with
    `SandboxRootError`, see `root`)."""
    _: KW_ONLY
    python: str | None = None
    """The Python that runs `.py` scripts and `python`/`python3` commands (its `bin` comes first on `PATH`), with its
    virtual environment's packages; default: the agent's own interpreter."""
    mounts: Sequence[str] = ()
    """More host paths to show read-only at their own path (fonts, an office suite, a model's weights)."""
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    """What one command may use of the machine (see `SandboxLimits`); how long it may run and how much output the
    model sees are the tool's: `Skills(script_limits=ScriptLimits(...))`."""
    network: bool = False
    """Let commands reach the network (off: only the loopback interface, so a server a script starts on
    `localhost` still answers)."""
    bwrap: str = 'bwrap'
    """The bubblewrap program, by name (looked up on `PATH`) or path."""
    id: str | None = 'skillshelf_sandbox'
    """Capability id."""

    def __post_init__(self) -> None:
        found = shutil.which(self.bwrap)
        if found is None:
            raise SkillError(
                f'the skill sandbox needs bubblewrap, but {self.bwrap!r} was not found: install it (e.g. `apt-get '
                "install bubblewrap`), or give the agent another workspace (pydantic-ai's `LocalWorkspace` runs "
                'commands unsandboxed, for skills you trust like your own code)'
            )
        self.bwrap = found
        self.root = Path(self.root) if self.root is not None else _default_root()
        if self.python is not None and not os.path.isfile(self.python):
            raise SkillError(f"the sandbox's python {self.python!r} is not a file; give the path of an interpreter")
        if self.python is not None:
            self.python = host_path(self.python)  # the sandbox mounts only resolved folders
        self.limits = _sandbox_limits(cast(object, self.limits))

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        """A new workspace for a new conversation, or the one `ref` names if it is this conversation's; `None` for a
        ref of another provider.

        Raises:
            ForeignWorkspaceError: `ref` names another conversation's workspace, or one made without a conversation
                (checked here, reading one small file, so the run never answers with the ref of a folder it may not
                open).
        """
        if ref is not None and ref.provider != PROVIDER:
            return None
        if ref is not None:
            folders_of(self).check(ref.id, ctx.conversation_id)
        return SandboxWorkspace(self, ref, ctx.conversation_id, _selected=True)

    def workspace(self, *, conversation: str | None, ref: WorkspaceRef | None = None) -> SandboxWorkspace:
        """The workspace of `conversation`, for the application to use before (and between) its runs: a new one,
        made at its first operation, or the one `ref` names.

        ```python
        backend = sandbox.workspace(conversation=conversation_id)
        await Workspace(backend).write_bytes('contract.docx', uploaded)
        result = await agent.run('Fix the typos.', workspace=backend, conversation_id=conversation_id)
        ```

        The conversation's next runs reopen it from their message history. With `conversation=None` the workspace
        belongs to no conversation: it opens only where the application passes it, never from a message history.
        """
        return SandboxWorkspace(self, ref, conversation)

    @property
    def folder_root(self) -> Path:
        """The folder holding the conversations' folders."""
        return Path(self.root or _default_root())

    def folder(self, ref: WorkspaceRef) -> Path | None:
        """The host folder of the workspace `ref` names (what a run wrote), or `None` if there is none.

        A script may have left symlinks there that lead anywhere on the host: read outputs through the run's
        workspace (`result.workspace.read_bytes`), or do not follow links.

        Raises:
            UnsafeWorkspaceError: the folder is not as the sandbox made it (see `root`).
        """
        return folders_of(self).folder(ref.id) if ref.provider == PROVIDER else None

    async def delete(self, ref: WorkspaceRef) -> bool:
        """Delete the workspace `ref` names, stopping its commands first (in a worker thread: a workspace of
        200,000 files takes seconds); returns whether there was one."""
        return ref.provider == PROVIDER and await folders_of(self).delete(ref.id)

    async def prune(self, older_than: float) -> int:
        """Delete the workspaces not used for `older_than` seconds (in a worker thread); returns how many.

        Any operation through a backend is a use (a command, a file operation, opening it by ref, a run reopening
        it), and a workspace where a command or file operation is running, in any process of the host, is never
        pruned (see `use`)."""
        return await folders_of(self).prune(older_than)


def _sandbox_limits(limits: object) -> SandboxLimits:
    """`limits` as `SandboxLimits`: from an agent spec's mapping, or (deprecated) from a `ScriptLimits`."""
    if isinstance(limits, ScriptLimits):
        kept = ScriptLimits()
        ignored = [name for name in ('timeout', 'max_output_bytes') if getattr(limits, name) != getattr(kept, name)]
        note = (
            f' Its {" and ".join(ignored)} never applied here: the tool takes '
            f'{"them" if len(ignored) > 1 else "it"}, Skills(script_limits=ScriptLimits(...)).'
            if ignored
            else ''
        )
        warnings.warn(
            'SkillSandbox(limits=ScriptLimits(...)) is deprecated: pass SandboxLimits(...) (from skillshelf.sandbox).'
            + note,
            DeprecationWarning,
            stacklevel=4,
        )
        return SandboxLimits(**given_sandbox_limits(limits))
    if isinstance(limits, Mapping):
        try:
            return SandboxLimits(**cast('Mapping[str, Any]', limits))
        except TypeError as error:
            raise SkillError(f"the sandbox's `limits`: {error}") from None
    if not isinstance(limits, SandboxLimits):
        raise SkillError(f"the sandbox's `limits` must be SandboxLimits, not {limits!r}")
    return limits


def _default_root() -> Path:
    return Path(tempfile.gettempdir()) / f'skillshelf-workspaces-{os.getuid()}'
