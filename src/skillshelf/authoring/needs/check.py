"""Checking needs against the environment that would run the scripts: the Python interpreter (asked in a
subprocess, so any interpreter can be checked, not only the one running this), and the programs on `PATH`.

By default the environment is `SkillSandbox`'s: its interpreter (`SkillSandbox(python=...)`, else the agent's own),
and the programs a sandboxed command finds, on the sandbox's `PATH`, among the host paths it shows, with the system
configuration under `/etc` they reach through links (LibreOffice's `/etc/libreoffice`: see `system_links`). With
`local`, it is a `LocalWorkspace`'s: the same interpreter, and this machine's `PATH`. Node packages are looked for in
the interpreter's skills environment (`<environment>/node/node_modules`, what `skillshelf env` installs) and in npm's
global folder (`npm root -g`), which both put on `NODE_PATH` for scripts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ...errors import SkillError
from ...sandbox.bubblewrap import command_path, visible_paths
from ...scripts.distributions import install_hint
from ...scripts.environment import node_modules_beside
from ...scripts.needs.model import Checked, Need, SkillNeeds
from ...scripts.node import global_node_modules
from .system_links import configuration_of

__all__ = ('PROBE_TIMEOUT', 'Environment', 'Facts', 'InterpreterError', 'SkillCheck', 'check_needs')

PROBE_TIMEOUT = 120.0
"""Seconds the interpreter may take to answer (a large environment's metadata takes a while to read)."""
_PROBE = (Path(__file__).parent / 'probe_script.py').read_text(encoding='utf-8')


class InterpreterError(SkillError):
    """The interpreter to check cannot be run, or did not answer."""


@dataclass(frozen=True)
class Environment:
    """Where the scripts would run."""

    python: str = field(default_factory=lambda: sys.executable)
    """The interpreter that runs Python scripts; default: this one, as `SkillSandbox()` would use."""
    local: bool = False
    """Look programs up on this machine's `PATH`, as a `LocalWorkspace` runs them, not as `SkillSandbox` sees them."""
    mounts: tuple[str, ...] = ()
    """More host paths the sandbox shows, as `SkillSandbox(mounts=...)`."""

    @property
    def path(self) -> str:
        """The `PATH` programs are looked up on."""
        return os.environ.get('PATH', os.defpath) if self.local else command_path(self.python)


@dataclass(frozen=True)
class Facts:
    """What the interpreter said about itself."""

    python: str
    """The interpreter, as given."""
    version: str
    """Its version (`3.11.9`)."""
    prefix: str
    """Its environment (`sys.prefix`)."""
    evaluator: str | None
    """Where versions and markers were evaluated from (`packaging`), or `None`: packages were looked up by name only."""
    path: str
    """The `PATH` programs were looked up on."""
    local: bool
    """Whether that is this machine's `PATH` (a `LocalWorkspace`) rather than `SkillSandbox`'s view."""


@dataclass(frozen=True)
class SkillCheck:
    """One skill's needs, checked."""

    skill: SkillNeeds
    """What it needs."""
    checked: tuple[Checked, ...]
    """Each need with its answer, in the order of `skill.needs` (standard-library modules the interpreter lacks
    last)."""

    @property
    def missing(self) -> int:
        """How many needs are missing and not optional."""
        return sum(item.counts for item in self.checked)


def check_needs(skills: Sequence[SkillNeeds], environment: Environment | None = None) -> tuple[Facts, list[SkillCheck]]:
    """Check every need of `skills` in `environment` (default: `SkillSandbox()`'s), asking the interpreter once.

    Raises:
        InterpreterError: the interpreter cannot be run or did not answer.
    """
    environment = environment or Environment()
    needs = [need for skill in skills for need in skill.needs]
    stdlib = [need for skill in skills for need in skill.stdlib]
    modules = sorted({need.name for need in (*needs, *stdlib) if need.kind == 'module'})
    packages = sorted({(need.name, need.spec) for need in needs if need.kind == 'package'})
    pythons = sorted({need.spec for need in needs if need.kind == 'python'})
    answer = _ask(environment.python, {'modules': modules, 'packages': packages, 'pythons': pythons})
    facts = Facts(
        environment.python,
        str(answer.get('version', '?')),
        str(answer.get('prefix', '?')),
        cast('str | None', answer.get('evaluator')),
        environment.path,
        environment.local,
    )
    visible = () if environment.local else visible_paths(environment.python, environment.mounts)
    results: list[SkillCheck] = []
    for skill in skills:
        checked = [_check(need, answer, environment, visible, facts) for need in skill.needs]
        for need in skill.stdlib:
            if not answer['modules'].get(need.name, True):
                checked.append(Checked(need, 'missing', _not_in_stdlib(facts.version), install_hint(need.name)))
        results.append(SkillCheck(skill, tuple(checked)))
    return facts, results


def _ask(python: str, request: dict[str, Any]) -> dict[str, Any]:
    if not os.path.isfile(python):
        raise InterpreterError(f'the interpreter {python!r} is not a file; give the path of a Python interpreter')
    try:
        completed = subprocess.run(
            [python, '-I', '-c', _PROBE],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except OSError as error:
        raise InterpreterError(f'cannot run the interpreter {python!r}: {error.strerror or error}') from None
    except subprocess.TimeoutExpired:
        raise InterpreterError(f'the interpreter {python!r} did not answer in {PROBE_TIMEOUT:g} s') from None
    try:
        answer = json.loads(completed.stdout)
    except ValueError:
        answer = None
    if completed.returncode != 0 or not isinstance(answer, dict):
        last = (completed.stderr.strip().splitlines() or ['no output'])[-1]
        raise InterpreterError(f'{python!r} did not answer as a Python 3 interpreter ({last})')
    return cast('dict[str, Any]', answer)


def _check(
    need: Need, answer: dict[str, Any], environment: Environment, visible: tuple[str, ...], facts: Facts
) -> Checked:
    if need.kind == 'module':
        return _module(need, answer)
    if need.kind == 'package':
        return _package(need, answer['packages'].get(need.spec, {}), facts)
    if need.kind == 'node-package':
        return _node_package(need, environment)
    if need.kind == 'python':
        satisfied = answer['pythons'].get(need.spec)
        if satisfied is None:
            return Checked(need, 'unknown', f'Python {facts.version}; {need.spec!r} could not be evaluated')
        detail = f'Python {facts.version}' + ('' if satisfied else f', not {need.spec}')
        return Checked(need, 'ok' if satisfied else 'missing', detail)
    return _command(need, environment, visible)


def _module(need: Need, answer: dict[str, Any]) -> Checked:
    owners = cast('list[list[str | None]]', answer['owners'].get(need.name, []))
    if answer['modules'].get(need.name):
        shown = ', '.join(f'{owner} {version}' if version else str(owner) for owner, version in owners)
        return Checked(need, 'ok', shown or 'found')
    return Checked(need, 'missing', 'not installed', install_hint(need.name))


def _package(need: Need, result: dict[str, Any], facts: Facts) -> Checked:
    installed = cast('str | None', result.get('installed'))
    if result.get('invalid'):
        return Checked(need, 'unknown', 'the requirement could not be read')
    if result.get('applies') is False:
        return Checked(need, 'ok', 'not needed here (its marker does not apply)')
    hint = f'pip install {_quoted(need.spec)}'
    if installed is None:
        return Checked(need, 'missing', 'not installed', hint)
    if result.get('satisfied') is False:
        return Checked(need, 'missing', f'{installed} installed, not {_specifier(need)}', hint)
    unchecked = facts.evaluator is None and any(mark in need.spec for mark in '<>=!~;')
    return Checked(need, 'ok', f'{installed}' + (' (version not checked: no `packaging` there)' if unchecked else ''))


def _command(need: Need, environment: Environment, visible: tuple[str, ...]) -> Checked:
    names = (need.name, *need.alternatives)
    for name in names:
        found = shutil.which(name, path=environment.path)
        if found is None:
            continue
        real = os.path.realpath(found)
        if environment.local:
            return Checked(need, 'ok', found)
        if any(_within(real, place) for place in visible):
            return _configured(need, found, environment)
        return Checked(
            need,
            'missing',
            f'{found} leads to {real}, which the sandbox does not show',
            f'SkillSandbox(mounts=[{os.path.dirname(real)!r}])',
        )
    elsewhere = None if environment.local else next(filter(None, (shutil.which(name) for name in names)), None)
    if elsewhere is not None:
        return Checked(
            need,
            'missing',
            f"not on the sandbox's PATH (this machine has {elsewhere}; the sandbox shows only /usr, the system "
            'folders, the interpreter and its mounts)',
            'install it system-wide (under /usr); if scripts run in a LocalWorkspace, check with --local',
        )
    either = ' or '.join(names)
    return Checked(need, 'missing', f'{either} not found on PATH', None)


def _configured(need: Need, found: str, environment: Environment) -> Checked:
    """A program the sandbox shows, with the `/etc` configuration it reaches through links (shown or not)."""
    shown, hidden = configuration_of(found, environment.mounts)
    if hidden:
        return Checked(
            need,
            'missing',
            f'{found} reads {", ".join(hidden)}, which the sandbox does not show',
            f'SkillSandbox(mounts={list(hidden)!r})',
        )
    return Checked(need, 'ok', found + (f' (with {", ".join(shown)}, shown read-only)' if shown else ''))


def _node_package(need: Need, environment: Environment) -> Checked:
    own = node_modules_beside(environment.python)
    folders = [folder for folder in (own, global_node_modules()) if folder is not None]
    hint = f'npm install -g {need.name}'
    for folder in folders:
        try:
            manifest: object = json.loads(Path(folder, need.name, 'package.json').read_text(encoding='utf-8'))
        except (OSError, ValueError):
            continue
        version = cast('dict[str, object]', manifest).get('version') if isinstance(manifest, dict) else None
        shown = f'{need.name} {version}' if isinstance(version, str) else need.name
        return Checked(need, 'ok', f'{shown} ({folder})')
    if not folders:
        return Checked(
            need, 'missing', 'no npm here, so no globally installed Node packages', f'install npm, then {hint}'
        )
    return Checked(need, 'missing', f'not installed in {" or ".join(folders)}', hint)


def _not_in_stdlib(version: str) -> str:
    running = '.'.join(map(str, sys.version_info[:2]))
    if version.startswith(running + '.'):
        return f'part of the standard library, but not in this Python ({version})'
    return f'in the standard library of Python {running}, not in this Python ({version})'


def _within(path: str, place: str) -> bool:
    return path == place or path.startswith(place.rstrip('/') + '/')


def _specifier(need: Need) -> str:
    return need.spec[len(need.name) :].split(';', 1)[0].strip() or need.spec


def _quoted(spec: str) -> str:
    return f'"{spec}"' if any(mark in spec for mark in '<>;[ ') else spec
