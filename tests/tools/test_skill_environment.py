"""`Skills(environment=...)`: one setting points every workspace at the environment `skillshelf env` built.

The environment is built once for the module from the tests' own document skills (`pypdf` from the package index,
`pptxgenjs` and `docx` from npm). A probe skill written here says which Python and which `pptxgenjs` a script gets;
the PDF form workflow of `test_document_workflows` runs on it in `LocalWorkspace` and in the sandbox `Skills`
supplies. A sandbox that does not show the environment keeps its own, with a `SkillWarning` saying how to fix it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.messages import TextPart
from pydantic_ai.workspaces import Workspace
from test_document_workflows import fillable_form, form_values
from typer.testing import CliRunner

from skillshelf import Skills, SkillSandbox, SkillWarning
from skillshelf.authoring.cli.app import app
from skillshelf.errors import SkillError

from document_places import SKILLS
from sandbox_support import BWRAP_PROBLEM
from scripted_model import Script, call, tool_returns
from skill_files import write_skill
from warnings_said import said

WHERE_PY = 'import sys, pypdf\nprint(sys.prefix)\nprint(pypdf.__file__)\n'
WHERE_JS = "console.log(require.resolve('pptxgenjs'));\n"


@pytest.fixture(scope='module')
def environment(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The document skills' environment, made by `skillshelf env`."""
    if shutil.which('npm') is None:
        if os.environ.get('SKILLSHELF_REQUIRE_OFFICE'):
            pytest.fail('npm is not installed')
        pytest.skip('npm is not installed here')
    folder = tmp_path_factory.mktemp('skills') / 'env'
    result = CliRunner().invoke(app, ['env', str(SKILLS), '--venv', str(folder)])
    assert result.exit_code == 0, result.output
    return folder


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    library = tmp_path / 'probe-library'
    write_skill(library, 'probe', files={'scripts/where.py': WHERE_PY, 'scripts/where.js': WHERE_JS})
    return library


def capabilities(kind: str, tmp_path: Path) -> list[AbstractCapability[Any]]:
    """The workspace an application gives: `LocalWorkspace`, or none (`Skills` supplies its sandbox)."""
    if kind == 'local':
        (tmp_path / 'work').mkdir()
        return [LocalWorkspace(tmp_path / 'work')]
    if BWRAP_PROBLEM is not None:
        pytest.skip(BWRAP_PROBLEM)
    return []


def where(agent: Agent[None, str]) -> list[str]:
    result = agent.run_sync('Where do scripts run?')
    return [str(reply) for reply in tool_returns(result.all_messages(), 'run_skill_script')]


def probe_model() -> Script:
    return Script(
        [
            [call('load_skill', name='probe')],
            [call('run_skill_script', name='probe', script='scripts/where.py')],
            [call('run_skill_script', name='probe', script='scripts/where.js')],
            [TextPart('Done.')],
        ]
    )


@pytest.mark.parametrize('kind', ['local', 'sandbox'])
def test_scripts_run_on_the_environments_python_and_node_packages(
    kind: str, environment: Path, probe: Path, tmp_path: Path
) -> None:
    model = probe_model()
    skills = Skills(probe, scripts=True, script_approval=False, environment=environment)
    agent = Agent(model.model(), capabilities=[*capabilities(kind, tmp_path), skills])
    python, node = where(agent)
    site = next((environment / 'lib').glob('python*/site-packages'))
    assert python == (f'scripts/where.py exited with code 0.\nOutput:\n{environment}\n{site}/pypdf/__init__.py')
    pptxgenjs = environment / 'node' / 'node_modules' / 'pptxgenjs'
    assert node.startswith(f'scripts/where.js exited with code 0.\nOutput:\n{pptxgenjs}/'), node


@pytest.mark.parametrize('kind', ['local', 'sandbox'])
def test_a_pdf_form_is_filled_on_the_environment(kind: str, environment: Path, tmp_path: Path) -> None:
    """The PDF form workflow of `test_document_workflows`, its `pypdf` the environment's: in `LocalWorkspace`, and in
    the application's own `SkillSandbox` told to show the environment (`mounts`)."""
    form = fillable_form(['full_name', 'city'])
    model = Script(
        [
            [call('load_skill', name='pdf-form')],
            [call('run_skill_script', name='pdf-form', script='scripts/fields.py', args=['form.pdf', 'fields.json'])],
            [
                call(
                    'write_file',
                    path='values.json',
                    content=json.dumps({'full_name': 'Ada Lovelace', 'city': 'London'}),
                )
            ],
            [
                call(
                    'run_skill_script',
                    name='pdf-form',
                    script='scripts/fill.py',
                    args=['form.pdf', 'values.json', 'f.pdf'],
                )
            ],
            [TextPart('Filled: f.pdf.')],
        ]
    )
    skills = Skills(
        SKILLS,
        scripts=True,
        file_tools=True,
        script_approval=False,
        preapproved_programs=['python3'],
        environment=environment,
    )
    run: dict[str, Any] = {}
    if kind == 'local':
        [workspace] = capabilities(kind, tmp_path)
        (tmp_path / 'work' / 'form.pdf').write_bytes(form)
    else:
        capabilities(kind, tmp_path)  # skips without bubblewrap
        sandbox = SkillSandbox(tmp_path / 'ws', mounts=[str(environment)])
        backend = sandbox.workspace(conversation='c')
        anyio.run(Workspace(backend).write_bytes, 'form.pdf', form)
        workspace, run = sandbox, {'workspace': backend, 'conversation_id': 'c'}
    agent = Agent(model.model(), capabilities=[workspace, skills])
    result = agent.run_sync('Fill in form.pdf for Ada Lovelace of London.', **run)
    assert tool_returns(result.all_messages(), 'run_skill_script') == [
        'scripts/fields.py exited with code 0.\nOutput:\n2 fields written to fields.json: full_name, city',
        'scripts/fill.py exited with code 0.\nOutput:\nfilled 2 of 2 fields into f.pdf',
    ]
    assert form_values(anyio.run(result.workspace.read_bytes, 'f.pdf')) == {
        'full_name': 'Ada Lovelace',
        'city': 'London',
    }


def test_a_sandbox_that_does_not_show_the_environment_keeps_its_own_and_says_how_to_fix_it(
    environment: Path, probe: Path, tmp_path: Path
) -> None:
    if BWRAP_PROBLEM is not None:
        pytest.skip(BWRAP_PROBLEM)
    model = probe_model()
    skills = Skills(probe, scripts=True, environment=environment)
    agent = Agent(model.model(), capabilities=[SkillSandbox(tmp_path / 'ws'), skills])
    with pytest.warns(SkillWarning, match='does not show that folder') as caught:
        python, _ = where(agent)
    [warned] = said(caught)
    assert warned == (
        f'Skills(environment={str(environment)!r}): the workspace that runs scripts (SkillSandbox) does not show that '
        'folder, so scripts run on its own Python and Node packages instead: let Skills supply the sandbox (drop your '
        f"SkillSandbox), or give it SkillSandbox(python='{environment}/bin/python')"
    )
    assert str(environment) not in python.split('\n')[2]  # the agent's own prefix, not the environment's


def test_the_setting_names_a_virtual_environment(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match=r'is not a virtual environment .* `skillshelf env SKILLS_DIR --venv FOLDER`'):
        Skills(SKILLS, scripts=True, environment=tmp_path)


def test_the_model_s_commands_find_the_environment_first_in_a_local_workspace(
    environment: Path, tmp_path: Path
) -> None:
    (tmp_path / 'work').mkdir()
    model = Script(
        [
            [call('run_command', command='python3 -c "import sys; print(sys.prefix)"')],
            [call('run_command', command='node -e "console.log(require.resolve(\'docx\'))"')],
            [TextPart('Done.')],
        ]
    )
    skills = Skills(
        SKILLS,
        file_tools=True,
        script_approval=False,
        preapproved_programs=['python3', 'node'],
        environment=environment,
    )
    agent = Agent(model.model(), capabilities=[LocalWorkspace(tmp_path / 'work'), skills])
    python, node = (str(reply) for reply in tool_returns(agent.run_sync('go').all_messages(), 'run_command'))
    assert python == f'Exit code 0.\n{environment}'
    assert node.startswith(f'Exit code 0.\n{environment}/node/node_modules/docx/'), node
