"""`skillshelf check` on what office skills need beyond Python: the Node packages their JavaScript loads or they
install (`npm install`, in a shell script or in their Markdown), looked for in npm's global folder, and the system
configuration under `/etc` a program reaches through links (LibreOffice's `/etc/libreoffice`), shown by the
sandbox or not."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from skillshelf.authoring.cli.app import app
from skillshelf.authoring.needs.system_links import configuration_of
from skillshelf.sandbox.system import system_configuration
from skillshelf.scripts.needs.node_source import javascript_packages, markdown_npm_installs, npm_install_packages
from skillshelf.scripts.node import global_node_modules

from skill_files import write_skill

DECK = textwrap.dedent(
    """\
    const pptxgen = require('pptxgenjs');
    const fs = require("fs");
    const { join } = require('node:path');
    const helper = require('./helper');
    const build = require('docx/build/index');
    const icons = require('@fortawesome/free-solid-svg-icons/faStar');
    const lazy = () => import('no-such-npm-package-xyz');
    import sharp from 'sharp';
    const dynamic = require(name);
    """
)
SKILL_BODY = textwrap.dedent(
    """\
    # Decks

    Install what the scripts load: `npm install -g pptxgenjs react@18`, then run them.
    Run npm install to set up the project (prose, not a command).

    ```bash
    npm install -g playwright sharp
    npm test
    ```
    """
)
SETUP = '#!/bin/bash\nset -e\nnpm i -g --silent docx@9.15.2 ./local-folder\nnpm install\nnode scripts/deck.js\n'


def test_the_packages_a_javascript_file_loads_are_read_from_its_require_and_import_calls() -> None:
    assert javascript_packages(DECK, module=False) == [
        'pptxgenjs',
        'docx',
        '@fortawesome/free-solid-svg-icons',
        'no-such-npm-package-xyz',
    ]
    assert javascript_packages(DECK, module=True)[-1] == 'sharp'  # an ES module's `import ... from`


def test_npm_install_commands_name_packages_in_shell_words_and_markdown_code_only() -> None:
    assert npm_install_packages(['install', '-g', 'pptxgenjs@4', '@scope/name@1.2', '$EXTRA', './here']) == [
        'pptxgenjs',
        '@scope/name',
    ]
    assert npm_install_packages(['install']) == []
    assert npm_install_packages(['run', 'build']) == []
    assert markdown_npm_installs(SKILL_BODY) == ['playwright', 'sharp', 'pptxgenjs', 'react']


def check(root: Path) -> dict[tuple[str, str], dict[str, Any]]:
    runner = CliRunner(env={'COLUMNS': '200', 'NO_COLOR': '1'})
    result = runner.invoke(app, ['check', str(root), '--json'])
    assert result.exit_code in (0, 1), result.output
    [skill] = json.loads(result.stdout)['skills']
    return {(need['kind'], need['name']): need for need in skill['needs']}


def test_check_looks_for_a_skills_node_packages_in_npms_global_folder(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        'decks',
        SKILL_BODY,
        files={'scripts/deck.js': DECK, 'scripts/setup.sh': SETUP, 'scripts/helper.js': 'module.exports = 1;\n'},
    )
    needs = check(tmp_path)
    packages = {name: need for (kind, name), need in needs.items() if kind == 'node-package'}
    assert {name: need['found_in'] for name, need in packages.items()} == {
        '@fortawesome/free-solid-svg-icons': ['scripts/deck.js'],
        'docx': ['scripts/deck.js', 'scripts/setup.sh'],
        'no-such-npm-package-xyz': ['scripts/deck.js'],
        'playwright': ['SKILL.md'],
        'pptxgenjs': ['SKILL.md', 'scripts/deck.js'],
        'react': ['SKILL.md'],
        'sharp': ['SKILL.md'],
    }
    assert needs['command', 'node']['found_in'] == ['scripts/deck.js', 'scripts/setup.sh']
    missing = packages['no-such-npm-package-xyz']
    assert missing['status'] == 'missing'
    assert missing['hint'].endswith('npm install -g no-such-npm-package-xyz')
    folder = global_node_modules()
    if folder is None:
        assert missing['detail'] == 'no npm here, so no globally installed Node packages'
        return
    assert missing['detail'] == f'not installed in {folder}'
    installed = [name for name in packages if os.path.isfile(os.path.join(folder, name, 'package.json'))]
    for name in installed:
        version = json.loads(Path(folder, name, 'package.json').read_text(encoding='utf-8'))['version']
        assert (packages[name]['status'], packages[name]['detail']) == ('ok', f'{name} {version} ({folder})')


def test_a_programs_configuration_under_etc_is_found_through_its_installations_links(tmp_path: Path) -> None:
    """An installation laid out as Debian's LibreOffice: `program/` holds the program, `share/` links into `/etc`."""
    shown = system_configuration()
    if not shown:
        pytest.skip('this machine has none of the system configuration the sandbox shows')
    installation = tmp_path / 'office'
    (installation / 'program').mkdir(parents=True)
    (installation / 'share').mkdir()
    program = installation / 'program' / 'office'
    program.write_text('#!/bin/sh\n', encoding='utf-8')
    (installation / 'share' / 'settings').symlink_to(os.path.join(shown[0], 'anything'))
    (installation / 'share' / 'secret').symlink_to('/etc/no-such-secret-xyz/key')
    (installation / 'share' / 'data').symlink_to('/usr/share')
    link = tmp_path / 'office-link'
    link.symlink_to(program)

    assert configuration_of(str(link)) == ((shown[0],), ('/etc/no-such-secret-xyz',))
    assert configuration_of(str(link), mounts=['/etc/no-such-secret-xyz']) == (
        (shown[0], '/etc/no-such-secret-xyz'),
        (),
    )


def test_check_says_libreoffice_gets_its_etc_configuration_in_the_sandbox(tmp_path: Path) -> None:
    if shutil.which('soffice', path='/usr/bin') is None or not os.path.isdir('/etc/libreoffice'):
        pytest.skip("Debian's LibreOffice is not installed here")
    write_skill(tmp_path, 'sheets', files={'scripts/recalc.py': 'import subprocess\nsubprocess.run(["soffice"])\n'})
    need = check(tmp_path)['command', 'soffice']
    assert (need['status'], need['detail']) == ('ok', '/usr/bin/soffice (with /etc/libreoffice, shown read-only)')
