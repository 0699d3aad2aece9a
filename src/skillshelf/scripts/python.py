"""Which Python runs a skill's scripts in the run's workspace, and what the developer is told about it: once, when
it is not the agent's own interpreter; and, when a script lacks a module, where to install it for that workspace.

The workspace is named by what it is: one whose backend offers its interpreter (skillshelf's `SkillSandbox` does, by
duck typing: `python`, the interpreter's path there; `label`, its name in messages; `python_setting`, where the
developer chooses it), pydantic-ai's `LocalWorkspace`, or another one (a pydantic-ai-harness sandbox, a remote
service), by its class.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from pydantic_ai.workspaces import LocalWorkspaceBackend, Workspace

from ..errors import SkillWarning
from ..scripts.distributions import distribution_of
from .environment import SkillEnvironment

__all__ = ('WorkspaceKind', 'describe_workspace', 'missing_module_warning', 'python_for', 'workspace_layers_of')

_FELL_BACK: set[tuple[str, str]] = set()
"""The workspaces (by description) already warned that scripts run on their `python3`, or do not show the skills'
environment: once per process each."""


@dataclass(frozen=True)
class WorkspaceKind:
    """What kind of workspace runs the scripts, for the developer's messages."""

    kind: str
    """`offers-python` (its backend names the interpreter that runs Python there: skillshelf's sandbox), `local`
    (pydantic-ai's `LocalWorkspace`) or `other`."""
    label: str
    """How messages name it: `SkillSandbox`, `LocalWorkspace`, or a class (`pydantic_ai_harness.BubblewrapWorkspace`)."""
    python: str | None = None
    """The interpreter the backend offers, for `offers-python`."""
    python_setting: str | None = None
    """Where the developer chooses that interpreter (`SkillSandbox(python=...)`), if the backend says."""


def describe_workspace(workspace: Workspace) -> WorkspaceKind:
    """The kind of `workspace`: a wrapper from another package (a harness sandbox around a local folder) names it,
    else its backend."""
    layers = workspace_layers_of(workspace)
    foreign = [layer for layer in layers if not layer.__module__.startswith(('pydantic_ai.', 'skillshelf.'))]
    if foreign:
        return WorkspaceKind('other', f'{foreign[0].__module__.split(".")[0]}.{foreign[0].__name__}')
    backend = workspace.backend
    if isinstance(python := _offered(backend, 'python'), str):
        label = _offered(backend, 'label')
        setting = _offered(backend, 'python_setting')
        return WorkspaceKind(
            'offers-python',
            label if isinstance(label, str) else type(backend).__name__,
            python,
            setting if isinstance(setting, str) else None,
        )
    if isinstance(backend, LocalWorkspaceBackend):
        return WorkspaceKind('local', 'LocalWorkspace')
    return WorkspaceKind('other', type(backend).__name__)


async def python_for(workspace: Workspace, environment: SkillEnvironment | None = None) -> str:
    """The command that runs Python in `workspace`: the skills' `environment`'s interpreter where the workspace shows
    it (else the developer is told once); the interpreter its backend offers (skillshelf's sandbox); a workspace that
    can see the agent's own interpreter (a local one, a sandbox on this machine) uses that; anything else its
    `python3`, and the developer is told once (its packages are not the agent's)."""
    offered = _offered(workspace.backend, 'python')
    if environment is not None:
        if offered == environment.python or await workspace.exists(environment.python):
            return environment.python
        _warn_once(workspace, environment.folder, _unseen_environment, environment)
    if isinstance(offered, str):
        return offered
    if await workspace.exists(sys.executable):
        return sys.executable
    _warn_once(workspace, sys.executable, _own_python_unseen)
    return 'python3'


def _warn_once(workspace: Workspace, key: str, message: Callable[..., str], *args: object) -> None:
    described = describe_workspace(workspace)
    if (described.label, key) not in _FELL_BACK:
        _FELL_BACK.add((described.label, key))
        warnings.warn(SkillWarning(message(described, *args)), stacklevel=4)


def _own_python_unseen(described: WorkspaceKind) -> str:
    return (
        f'run_skill_script runs Python scripts with the `python3` of the workspace ({described.label}): the '
        f"agent's interpreter ({sys.executable}) is not visible there, so scripts get that python3's "
        "packages, not the agent's. Install what the skills need for it (`skillshelf check` lists it), or "
        'make the interpreter visible in the workspace'
    )


def _unseen_environment(described: WorkspaceKind, environment: SkillEnvironment) -> str:
    if described.kind == 'offers-python':
        remedy = (
            f'let Skills supply the sandbox (drop your {described.label}), or give it '
            f'{described.label}(python={environment.python!r})'
        )
    elif described.kind == 'local':
        remedy = 'make the folder readable by the agent'
    else:
        remedy = (
            f'mount {environment.folder} in it read-only at the same path, or, for a remote sandbox, build its image '
            'with `skillshelf env --dockerfile` and name the folder it has there'
        )
    return (
        f'Skills(environment={environment.folder!r}): the workspace that runs scripts ({described.label}) does not '
        f'show that folder, so scripts run on its own Python and Node packages instead: {remedy}'
    )


def missing_module_warning(skill: str, script: str, module: str, workspace: Workspace, python: str) -> SkillWarning:
    """The developer's warning that `script` of `skill` lacks `module` when run with `python` in `workspace`: the
    workspace named as it is, and where to install the module for it."""
    described = describe_workspace(workspace)
    distribution = distribution_of(module)
    package = f'the package {distribution!r}' if distribution else 'the package that provides it'
    command = f' (`pip install {distribution}`)' if distribution else ''
    if described.kind == 'offers-python':
        remedy = (
            f'install {package} in the environment of {described.python or python}{command}, the interpreter '
            f'{described.python_setting or described.label} runs scripts on, or name one that has it'
        )
    elif described.kind == 'local':
        remedy = f'scripts in a LocalWorkspace run on {python}: install {package} in its environment{command}'
    else:
        remedy = (
            f'scripts there run on {python} as that workspace sees it: install {package} for it{command}; for a '
            'remote sandbox, in its image'
        )
    return SkillWarning(
        f'skill {skill!r}: {script} needs the Python module {module!r}, which the workspace that runs scripts '
        f'({described.label}) lacks; {remedy}'
    )


def _offered(backend: object, name: str) -> object:
    """What a backend offers as `name` (a class attribute or property), or `None`."""
    return getattr(backend, name, None)


def workspace_layers_of(workspace: Workspace) -> list[type[object]]:
    """The workspace's wrapper classes and its backend's, outermost first."""
    try:
        from pydantic_ai.workspaces.workspace import workspace_layers
    except ImportError:  # a pydantic-ai without it: the backend alone
        return [type(workspace.backend)]
    return workspace_layers(workspace)
