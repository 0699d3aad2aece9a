"""`skillshelf env`: the skills' environment built from what `check` finds, on the tests' own document skills
(`tests/tools/document_skills`): a virtual environment with their Python package (`pypdf`, from the package index)
and, under its `node/`, their Node packages (`pptxgenjs`, `docx`, from npm's registry or its cache), after which
`check` on that interpreter reports nothing missing; and the same environment written as a Dockerfile.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from skillshelf.authoring.cli.app import app
from skillshelf.authoring.environment import DEBIAN_PACKAGES, plan_environment
from skillshelf.scripts.needs import scan_skill
from skillshelf.skill import Skill

from document_places import SKILLS
from skill_files import write_skill


def invoke(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    runner = CliRunner(env={'COLUMNS': '200', 'NO_COLOR': '1', **(env or {})})
    return runner.invoke(app, [str(arg) for arg in args])


def require_npm() -> None:
    """Skip without npm; where CI installed it (`SKILLSHELF_REQUIRE_OFFICE`), fail instead."""
    if shutil.which('npm') is not None:
        return
    if os.environ.get('SKILLSHELF_REQUIRE_OFFICE'):
        pytest.fail('npm is not installed')
    pytest.skip('npm is not installed here')


@pytest.fixture(scope='module')
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    """The document skills' environment, built once for the module."""
    require_npm()
    folder = tmp_path_factory.mktemp('skills') / 'env'
    return folder, invoke('env', SKILLS, '--venv', folder)


def checked(python: Path) -> tuple[int, dict[tuple[str, str, str], dict[str, Any]]]:
    result = invoke('check', SKILLS, '--python', python, '--json')
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    needs = {(skill['name'], need['kind'], need['name']): need for skill in report['skills'] for need in skill['needs']}
    return report['missing'], needs


def test_the_environment_gets_the_skills_python_and_node_packages_and_check_then_finds_nothing_missing(
    built: tuple[Path, Result],
) -> None:
    folder, result = built
    assert result.exit_code == 0, result.output
    assert 'Installed Python packages: pypdf\n' in result.stdout
    assert 'Installed Node packages: pptxgenjs, docx\n' in result.stdout
    assert f"Skills(..., environment='{folder}')" in result.stdout
    assert result.stdout.rstrip().endswith('Nothing missing.')
    assert sorted(
        path.name for path in (folder / 'node' / 'node_modules').glob('[!.]*') if path.name in ('pptxgenjs', 'docx')
    ) == ['docx', 'pptxgenjs']
    assert json.loads((folder / 'node' / 'package.json').read_text())['dependencies'].keys() == {'pptxgenjs', 'docx'}

    missing, needs = checked(folder / 'bin' / 'python')
    assert missing == 0
    assert needs['pdf-form', 'module', 'pypdf']['detail'].startswith('pypdf ')
    node_modules = folder / 'node' / 'node_modules'
    assert needs['slide-deck', 'node-package', 'pptxgenjs']['detail'].endswith(f'({node_modules})')
    assert needs['word-letter', 'node-package', 'docx']['detail'].endswith(f'({node_modules})')


def test_a_fresh_interpreter_lacks_pypdf_until_env_installs_it(tmp_path: Path, built: tuple[Path, Result]) -> None:
    """The check the environment passes is not one any interpreter passes: a bare one lacks the package."""
    import subprocess
    import sys

    bare = tmp_path / 'bare'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(bare)], check=True, timeout=120)
    missing, needs = checked(bare / 'bin' / 'python')
    assert missing >= 1
    assert needs['pdf-form', 'module', 'pypdf']['status'] == 'missing'


def test_running_it_again_installs_nothing(built: tuple[Path, Result]) -> None:
    folder, _ = built
    again = invoke('env', SKILLS, '--venv', folder)
    assert again.exit_code == 0, again.output
    assert 'Nothing to install' in again.stdout
    assert 'Installed' not in again.stdout


def test_a_package_that_cannot_be_installed_is_named_and_the_command_fails(tmp_path: Path) -> None:
    """pip finds nothing (no index: `PIP_NO_INDEX`, as a user sets pip's options): the report names the package and
    what pip said, and the exit code says it failed."""
    write_skill(tmp_path / 'lib', 'odd', files={'scripts/run.py': 'import skillshelf_no_such_module_xyz\n'})
    result = invoke('env', tmp_path / 'lib', '--venv', tmp_path / 'env', env={'PIP_NO_INDEX': '1'})
    assert result.exit_code == 1
    assert 'Could not install Python packages: skillshelf_no_such_module_xyz\n' in result.stdout
    assert 'No matching distribution found for skillshelf_no_such_module_xyz' in result.stdout
    assert 'odd: module skillshelf_no_such_module_xyz: not installed' in result.stdout
    assert (tmp_path / 'env' / 'bin' / 'python').exists()  # the environment is made, whatever failed in it


def test_the_dockerfile_builds_the_same_environment_on_a_local_base_image(tmp_path: Path) -> None:
    dockerfile = tmp_path / 'Dockerfile'
    result = invoke('env', SKILLS, '--dockerfile', dockerfile, '--base', 'skillshelf-test:bookworm')
    assert result.exit_code == 0, result.output
    assert f'Wrote {dockerfile}: 6 Debian, 1 Python and 2 Node packages on skillshelf-test:bookworm' in result.stdout
    lines = dockerfile.read_text(encoding='utf-8').splitlines()
    assert [line for line in lines if not line.startswith('#')] == [
        'FROM skillshelf-test:bookworm',
        'ENV DEBIAN_FRONTEND=noninteractive',
        'RUN apt-get update \\',
        ' && apt-get install -y --no-install-recommends python3 python3-venv libreoffice-calc libreoffice-impress '
        'libreoffice-writer nodejs poppler-utils npm \\',
        ' && rm -rf /var/lib/apt/lists/*',
        'RUN python3 -m venv /opt/skills-env',
        'RUN /opt/skills-env/bin/python -m pip install --no-cache-dir --disable-pip-version-check pypdf',
        'RUN mkdir -p /opt/skills-env/node && npm install --prefix /opt/skills-env/node --no-audit --no-fund '
        '--no-update-notifier pptxgenjs docx',
        'ENV PATH=/opt/skills-env/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin '
        'NODE_PATH=/opt/skills-env/node/node_modules',
    ]
    assert lines[0] == (
        f"# The environment these skills' scripts need, written by `skillshelf env {SKILLS} --dockerfile "
        f'{dockerfile} --base skillshelf-test:bookworm`.'
    )


def test_a_program_with_no_known_debian_package_is_named_and_the_command_fails(tmp_path: Path) -> None:
    write_skill(
        tmp_path / 'lib',
        'odd',
        files={'scripts/run.py': 'import subprocess\nfrom PIL import Image\nsubprocess.run(["frobnicate-xyz"])\n'},
    )
    dockerfile = tmp_path / 'Dockerfile'
    result = invoke('env', tmp_path / 'lib', '--dockerfile', dockerfile)
    assert result.exit_code == 1
    assert "the program 'frobnicate-xyz' (odd) has no known Debian package" in result.stdout
    text = dockerfile.read_text(encoding='utf-8')
    assert 'FROM debian:bookworm-slim\n' in text
    assert 'pip install --no-cache-dir --disable-pip-version-check pillow\n' in text  # PIL's distribution
    assert '# Not installed (no known Debian package): frobnicate-xyz, for odd\n' in text


def test_nothing_to_build_and_a_base_without_a_dockerfile_are_usage_errors(tmp_path: Path) -> None:
    nothing = invoke('env', SKILLS)
    assert nothing.exit_code == 2
    assert 'say what to build: --venv FOLDER, --dockerfile FILE, or --system' in nothing.output
    base = invoke('env', SKILLS, '--venv', tmp_path / 'env', '--base', 'x')
    assert base.exit_code == 2
    assert '--base is the base image of --dockerfile' in base.output
    assert not (tmp_path / 'env').exists()


def test_programs_it_cannot_install_without_system_are_listed_with_the_apt_line(tmp_path: Path) -> None:
    """Without `--system` nothing is installed with apt: the line that would is shown, and the program is still
    missing, so the command fails."""
    assert shutil.which('inkscape') is None, 'this test needs a machine without inkscape'
    write_skill(
        tmp_path / 'lib', 'drawing', files={'scripts/run.py': 'import subprocess\nsubprocess.run(["inkscape"])\n'}
    )
    result = invoke('env', tmp_path / 'lib', '--venv', tmp_path / 'env')
    assert result.exit_code == 1
    assert 'Programs to install (inkscape), as root:\n  apt-get install --no-install-recommends inkscape\n' in (
        result.stdout
    )
    assert 'drawing: command inkscape: inkscape not found on PATH' in result.stdout
    assert 'or run this command again with --system as root.' in result.stdout


def test_the_plan_names_distributions_and_debian_packages_of_what_skills_need(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        'docs',
        files={
            'scripts/a.py': 'import docx, fitz, yaml\nfrom PIL import Image\nimport subprocess\n'
            'subprocess.run(["pandoc", "x"])\ntry:\n    import lxml\nexcept ImportError:\n    lxml = None\n',
            'scripts/b.js': "const p = require('pptxgenjs');\n",
        },
    )
    plan = plan_environment([scan_skill(Skill.from_folder(tmp_path / 'docs'))])
    assert [item.name for item in plan.python] == ['python-docx', 'pymupdf', 'pillow', 'PyYAML']  # not lxml: optional
    assert [item.name for item in plan.node] == ['pptxgenjs']
    assert {program.name: program.packages for program in plan.programs} == {
        'pandoc': ('pandoc',),
        'node': ('nodejs',),
        'npm': ('npm',),
    }
    assert DEBIAN_PACKAGES['soffice'] == ('libreoffice-calc', 'libreoffice-impress', 'libreoffice-writer')
