"""The `env` command: build the environment the skills' scripts need (a virtual environment with their Python and
Node packages, the Debian packages of their programs), or write it as a container image recipe."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from .options import Directories, ImportPaths, build_library, require_skills
from .render import err, fail, note_skipped, out

if TYPE_CHECKING:
    from ...scripts.needs.model import SkillNeeds
    from ..environment.build import Outcome
    from ..environment.plan import EnvironmentPlan

__all__ = ('env',)


def env(
    directories: Directories = None,
    skill: ImportPaths = None,
    venv: Annotated[
        Path | None,
        typer.Option(
            '--venv',
            help='Make (or update) this virtual environment with the Python packages the skills need, and their '
            'Node packages in its node/ folder. Then: Skills(..., environment="FOLDER").',
            show_default=False,
        ),
    ] = None,
    system: Annotated[
        bool,
        typer.Option('--system', help='Install the Debian packages of the programs they run (apt-get, as root).'),
    ] = False,
    dockerfile: Annotated[
        Path | None,
        typer.Option(
            '--dockerfile',
            help='Write the same environment as a Dockerfile, for a container sandbox (the image holds it at '
            '/opt/skills-env).',
            show_default=False,
        ),
    ] = None,
    base: Annotated[
        str | None,
        typer.Option(
            '--base',
            help="The Dockerfile's base image: a Debian-based image on this machine (nothing is pulled). "
            'Default: debian:bookworm-slim.',
            show_default=False,
        ),
    ] = None,
) -> None:
    """Build the environment the skills' scripts need, from what `skillshelf check` finds.

    With --venv, a virtual environment gets the Python packages (by their distribution's name: PIL is pillow) and,
    in its node/ folder, the Node packages the skills load or install; the Debian packages of the programs they run
    (LibreOffice, poppler-utils, pandoc...) are listed with the apt-get line, or installed with --system as root.
    --dockerfile writes all of it as a container image recipe. Exits 1 if something could not be installed or is
    still missing, 2 if nothing was asked for.
    """
    from ...scripts.needs.scan import scan_skill

    if venv is None and dockerfile is None and not system:
        fail('say what to build: --venv FOLDER, --dockerfile FILE, or --system (or several)', code=2)
    if base is not None and dockerfile is None:
        fail('--base is the base image of --dockerfile: give that too', code=2)
    library = build_library(directories, skill)
    require_skills(library, directories)
    note_skipped(library.skipped, False)
    needs = [scan_skill(item) for item in library.skills.values()]
    problems = 0
    if dockerfile is not None:
        command = ['skillshelf', 'env', *map(str, directories or ()), '--dockerfile', str(dockerfile)]
        problems += _write_dockerfile(needs, dockerfile, base, command + (['--base', base] if base else []))
    if venv is not None or system:
        problems += _build(needs, venv, system)
    if problems:
        raise typer.Exit(1)


def _write_dockerfile(needs: list[SkillNeeds], path: Path, base: str | None, command: list[str]) -> int:
    from ..environment import DEFAULT_BASE, IMAGE_FOLDER, dockerfile, plan_environment

    plan = plan_environment(needs)
    try:
        path.write_text(dockerfile(plan, base or DEFAULT_BASE, command), encoding='utf-8')
    except OSError as error:
        fail(f'cannot write {path}: {error.strerror or error}')
    counts = f'{len(plan.debian)} Debian, {len(plan.python)} Python and {len(plan.node)} Node packages'
    out().print(f'Wrote {path}: {counts} on {base or DEFAULT_BASE}; the environment is at {IMAGE_FOLDER} in the image.')
    _print_plan(plan)
    return len(plan.unknown_programs) + len(plan.unmet)


def _build(needs: list[SkillNeeds], venv: Path | None, system: bool) -> int:
    from ..environment.build import build_environment
    from ..needs import InterpreterError

    try:
        with err().status('Installing what the skills need…'):
            outcome = build_environment(needs, venv.absolute() if venv is not None else None, system)
    except (OSError, InterpreterError) as error:
        fail(str(error))
    _print_outcome(outcome, system)
    return len(outcome.failed) + outcome.missing


def _print_plan(plan: EnvironmentPlan) -> None:
    console = out()
    for label, items in (('Python packages', plan.python), ('Node packages', plan.node)):
        if items:
            console.print(f'  {label}: {", ".join(item.name for item in items)}', markup=False)
    if plan.debian:
        console.print(f'  Debian packages: {" ".join(plan.debian)}', markup=False)
    for program in plan.unknown_programs:
        console.print(
            f'  Not installed: the program {program.name!r} ({", ".join(program.skills)}) has no known Debian '
            'package; install it yourself.',
            style='yellow',
            markup=False,
        )
    for sentence in plan.unmet:
        console.print(f'  Not met: {sentence}.', style='yellow', markup=False)


def _print_outcome(outcome: Outcome, system: bool) -> None:
    console = out()
    environment = outcome.environment
    for step in outcome.steps:
        if step.installed:
            console.print(f'Installed {step.what}: {", ".join(step.installed)}', style='green', markup=False)
        if step.failed:
            console.print(f'Could not install {step.what}: {", ".join(step.failed)}', style='bold red', markup=False)
            console.print(Text(step.error, 'red'))
    if not any(step.installed or step.failed for step in outcome.steps):
        console.print('Nothing to install: the environment had everything it could be given.')
    lacking = [(result.skill.name, item) for result in outcome.results for item in result.checked if item.counts]
    if lacking:
        console.print(f'\nStill missing ({outcome.facts.python}):', style='bold red')
        for name, item in lacking:
            hint = f' → {item.hint}' if item.hint else ''
            console.print(f'  {name}: {item.need.kind} {item.need.name}: {item.detail}{hint}', markup=False)
    programs = [program for program in outcome.plan.programs if program.packages]
    if programs and not system:
        packages = ' '.join(outcome.plan.debian)
        console.print(
            f'\nPrograms to install ({", ".join(program.name for program in programs)}), as root:\n'
            f'  apt-get install --no-install-recommends {packages}\n'
            'or run this command again with --system as root.',
            markup=False,
        )
    for program in outcome.plan.unknown_programs:
        console.print(f'No known Debian package for the program {program.name!r}: install it yourself.', markup=False)
    if environment is not None:
        folder = shlex.quote(environment.folder)
        console.print(
            f'\nEnvironment: {environment.folder}\n'
            f"  Skills(..., environment={environment.folder!r}) runs every workspace's scripts on it;\n"
            f'  skillshelf check DIR --python {folder}/bin/python checks it;\n'
            f'  outside skillshelf: PATH={folder}/bin:$PATH NODE_PATH={shlex.quote(environment.node_modules)}',
            markup=False,
        )
    summary = 'Nothing missing.' if not lacking and not outcome.failed else f'{len(lacking)} still missing.'
    console.print(summary, style='bold green' if summary == 'Nothing missing.' else 'bold red')
