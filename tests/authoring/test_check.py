"""`skillshelf check`: what each skill's scripts need, read from their files (nothing of the skill is run), and what
the environment that would run them lacks, with the interpreter asked in a subprocess and programs looked up as
`SkillSandbox` or a `LocalWorkspace` would find them.

The skills are our own fixtures: scripts with imports (nested, guarded, local, relative), a PEP 723 header, a
`requirements.txt`, a node `#!`, a shell script and a `compatibility` field in prose.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from skillshelf.authoring.cli.app import app
from skillshelf.scripts.needs.shell import shell_commands

from reliability.ledger import case
from skill_files import write_skill

FILL = textwrap.dedent(
    """\
    #!/usr/bin/env python3
    import json
    import subprocess
    import shutil
    from typing import TYPE_CHECKING

    import pypdf
    from PIL import Image
    from scripts.util import shout
    from . import sibling

    try:
        import ujson_not_installed_here
    except ImportError:
        ujson_not_installed_here = None

    if TYPE_CHECKING:
        import pandas


    def render(path):
        import docx
        from fitz import open as open_pdf
        subprocess.run(['soffice-not-here', '--headless', path], check=True)
        subprocess.run(['ls'] + [path])
        try:
            subprocess.run(['gtimeout-not-here', '1', 'true'])
        except FileNotFoundError:
            pass
        if shutil.which('magick-not-here'):
            subprocess.run(['magick-not-here', path])
        subprocess.run('cat data.txt | sort', shell=True)
    """
)
HEADER = textwrap.dedent(
    """\
    # /// script
    # requires-python = ">=3.10"
    # dependencies = [
    #   "pyyaml>=5",
    #   "no-such-dist-xyz>=1",
    #   "pywin32; sys_platform == 'win32'",
    # ]
    # ///
    import yaml
    import no_such_dist_xyz
    """
)
REQUIREMENTS = 'pillow>=10  # images\n\n# comment\nno-such-pinned-xyz==1.0 \\\n    --hash=sha256:abc\n-r other.txt\n'
SERVE = '#!/usr/bin/env node\nrequire("http").createServer().listen(8080)\n'
PAGE = 'document.title = "a browser file, not run by node"\n'
RUN = textwrap.dedent(
    """\
    #!/usr/bin/env bash
    set -euo pipefail
    here="$(cd "$(dirname "$0")" && pwd)"
    usage() { echo "usage"; }
    if ! command -v rg-not-here >/dev/null; then
      grep -r x . | jq-not-here .
    else
      rg-not-here x
    fi
    case "$1" in
      start|stop) tar cf out.tar . ;;
      *) usage ;;
    esac
    cat <<EOF
    heredoc-word-not-a-command here
    EOF
    "$here/helper.sh" && ./local.sh
    """
)
COMPATIBILITY = 'Requires Python >= 3.10, git, and the nosuchtool-xyz CLI; pip install "markitdown[pptx]". Designed for Claude Code.'


@pytest.fixture(scope='module')
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp('check') / 'skills'
    write_skill(root, 'pdf-kit', files={'scripts/fill.py': FILL, 'scripts/util.py': 'def shout(x):\n    return x\n'})
    write_skill(root, 'pep-tool', files={'scripts/tool.py': HEADER})
    write_skill(root, 'gif-maker', files={'requirements.txt': REQUIREMENTS, 'core/make.py': 'from PIL import Image\n'})
    write_skill(root, 'web-kit', files={'scripts/serve.js': SERVE, 'assets/page.js': PAGE, 'scripts/run': RUN})
    write_skill(root, 'prose', fields={'compatibility': json.dumps(COMPATIBILITY)})
    write_skill(root, 'plain')
    return root


def invoke(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    runner = CliRunner(env={'COLUMNS': '200', 'NO_COLOR': '1', **(env or {})})
    return runner.invoke(app, [str(arg) for arg in args])


def as_json(*args: str | Path, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    result = invoke('check', *args, '--json', env=env)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def needs_of(report: dict[str, Any], skill: str) -> dict[tuple[str, str], dict[str, Any]]:
    [found] = [item for item in report['skills'] if item['name'] == skill]
    return {(need['kind'], need['name']): need for need in found['needs']}


def test_python_imports_and_started_programs_are_read_with_ast(library: Path) -> None:
    code, report = as_json(library)
    assert code == 1
    needs = needs_of(report, 'pdf-kit')
    assert set(needs) == {
        ('module', 'PIL'),
        ('module', 'docx'),
        ('module', 'fitz'),
        ('module', 'pypdf'),
        ('module', 'ujson_not_installed_here'),
        ('command', 'cat'),
        ('command', 'gtimeout-not-here'),
        ('command', 'ls'),
        ('command', 'magick-not-here'),
        ('command', 'soffice-not-here'),
        ('command', 'sort'),
    }  # not json (standard library), scripts (the skill's own), pandas (TYPE_CHECKING), sibling (relative)
    assert needs['module', 'pypdf']['status'] == 'ok'
    assert needs['module', 'pypdf']['detail'].startswith('pypdf ')
    assert needs['module', 'PIL']['status'] == 'ok'
    assert needs['module', 'PIL']['detail'].startswith('pillow ')  # the environment's own mapping
    assert (needs['module', 'docx']['status'], needs['module', 'docx']['hint']) == (
        'missing',
        'pip install python-docx',
    )
    assert needs['module', 'fitz']['hint'] == 'pip install pymupdf'
    assert needs['module', 'docx']['found_in'] == ['scripts/fill.py']
    for optional in ('ujson_not_installed_here', 'gtimeout-not-here', 'magick-not-here'):
        kind = 'module' if optional.startswith('ujson') else 'command'
        assert (needs[kind, optional]['status'], needs[kind, optional]['optional']) == ('missing', True), optional
    assert needs['command', 'soffice-not-here']['optional'] is False
    [skill] = [item for item in report['skills'] if item['name'] == 'pdf-kit']
    assert skill['missing'] == 3  # docx, fitz, soffice-not-here; the optional ones are shown, not counted


def test_a_pep_723_header_declares_packages_and_a_python(library: Path) -> None:
    _, report = as_json(library)
    needs = needs_of(report, 'pep-tool')
    assert set(needs) == {
        ('package', 'pyyaml'),
        ('package', 'no-such-dist-xyz'),
        ('package', 'pywin32'),
        ('python', 'python'),
    }  # `import yaml` and `import no_such_dist_xyz` are the declared packages, not needs of their own
    assert needs['package', 'pyyaml']['imports'] == ['yaml']
    assert needs['package', 'no-such-dist-xyz']['imports'] == ['no_such_dist_xyz']
    assert needs['package', 'pyyaml']['status'] == 'ok'
    assert needs['package', 'no-such-dist-xyz']['status'] == 'missing'
    assert needs['package', 'no-such-dist-xyz']['hint'] == 'pip install "no-such-dist-xyz>=1"'
    assert needs['package', 'pywin32']['status'] == 'ok'
    assert 'marker does not apply' in needs['package', 'pywin32']['detail']
    assert (needs['python', 'python']['spec'], needs['python', 'python']['status']) == ('>=3.10', 'ok')


def test_requirements_txt_is_read_and_what_it_cannot_read_is_said(library: Path) -> None:
    _, report = as_json(library)
    needs = needs_of(report, 'gif-maker')
    assert set(needs) == {('package', 'pillow'), ('package', 'no-such-pinned-xyz')}
    assert needs['package', 'pillow']['imports'] == ['PIL']
    assert needs['package', 'pillow']['found_in'] == ['requirements.txt', 'core/make.py']
    assert needs['package', 'pillow']['spec'] == 'pillow>=10'
    assert needs['package', 'no-such-pinned-xyz']['spec'] == 'no-such-pinned-xyz==1.0'
    [skill] = [item for item in report['skills'] if item['name'] == 'gif-maker']
    assert skill['notes'] == ["requirements.txt:6: '-r other.txt' not read (only package requirements are)"]


def test_shebangs_and_shell_commands(library: Path) -> None:
    _, report = as_json(library, '--local')
    needs = needs_of(report, 'web-kit')
    assert set(needs) == {
        ('command', 'node'),  # serve.js's #!; page.js has none (a browser file)
        ('command', 'bash'),  # run's #!
        ('command', 'cat'),  # the here-document's, not its words
        ('command', 'dirname'),
        ('command', 'grep'),
        ('command', 'jq-not-here'),
        ('command', 'rg-not-here'),
        ('command', 'tar'),
    }
    assert needs['command', 'node']['found_in'] == ['scripts/serve.js']
    assert needs['command', 'rg-not-here']['optional'] is True  # `command -v rg-not-here` first
    assert needs['command', 'jq-not-here']['optional'] is False


def test_the_compatibility_field_gives_what_it_says_plainly_and_is_shown_verbatim(library: Path) -> None:
    code, report = as_json(library, '--local')
    assert code == 1
    [skill] = [item for item in report['skills'] if item['name'] == 'prose']
    assert skill['compatibility'] == COMPATIBILITY
    needs = needs_of(report, 'prose')
    assert set(needs) == {
        ('python', 'python'),
        ('command', 'git'),
        ('command', 'nosuchtool-xyz'),
        ('package', 'markitdown'),
    }
    assert needs['command', 'git']['found_in'] == ['SKILL.md compatibility']
    assert needs['command', 'nosuchtool-xyz']['status'] == 'missing'
    assert needs['package', 'markitdown']['spec'] == 'markitdown[pptx]'


def test_the_table_names_each_skill_what_is_missing_and_how_to_get_it(library: Path) -> None:
    result = invoke('check', library)
    assert result.exit_code == 1
    output = result.stdout
    assert f'Environment: {sys.executable} (Python ' in output
    assert '✗  docx' in output
    assert 'not installed → pip install python-docx' in output
    assert '–  gtimeout-not-here' in output
    assert '(optional: the script checks for it)' in output
    assert 'compatibility: Requires Python >= 3.10' in output
    assert '✗  markitdown[pptx]  ' in output  # a requirement, not Rich markup
    assert 'Nothing to check in 1 skill: plain' in output
    assert 'missing in 5' in output  # pdf-kit, pep-tool, gif-maker, web-kit, prose


def test_nothing_missing_exits_0(tmp_path: Path) -> None:
    write_skill(tmp_path, 'ok', files={'scripts/a.py': 'import yaml\nimport json\n', 'scripts/b.sh': 'ls\n'})
    result = invoke('check', tmp_path)
    assert result.exit_code == 0, result.output
    assert '1 skill checked: nothing missing.' in result.stdout


def test_another_interpreter_is_asked_in_a_subprocess(tmp_path: Path) -> None:
    """A bare environment (no pip, so no `packaging`): packages are looked up by name; a standard-library module it
    lacks (as Debian's python3 lacks tkinter without python3-tk) is missing there."""
    venv = tmp_path / 'bare'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(venv)], check=True, timeout=120)
    [site] = venv.glob('lib/python*/site-packages')
    (site / 'sitecustomize.py').write_text('import sys\nsys.modules["tkinter"] = None\n', encoding='utf-8')
    (site / 'only_here.py').write_text('', encoding='utf-8')
    scripts = {'scripts/a.py': 'import yaml\nimport only_here\nimport tkinter\n', 'requirements.txt': 'pyyaml>=5\n'}
    write_skill(tmp_path / 'lib', 'probe', files=scripts)
    code, report = as_json(tmp_path / 'lib', '--python', venv / 'bin' / 'python')
    assert code == 1
    assert report['environment']['python'] == str(venv / 'bin' / 'python')
    assert report['environment']['prefix'] == str(venv)
    assert report['environment']['versions_checked_with'] is None
    needs = needs_of(report, 'probe')
    assert needs['package', 'pyyaml']['status'] == 'missing'  # the agent's environment has it; this one does not
    assert needs['module', 'only_here']['status'] == 'ok'
    assert needs['module', 'tkinter']['status'] == 'missing'
    assert needs['module', 'tkinter']['detail'].startswith('part of the standard library, but not in this Python')


def test_an_interpreter_that_cannot_run_is_an_error_not_a_report(tmp_path: Path) -> None:
    write_skill(tmp_path, 'one', files={'scripts/a.py': 'import yaml\n'})
    missing = invoke('check', tmp_path, '--python', tmp_path / 'nope')
    assert missing.exit_code == 2
    assert 'is not a file; give the path of a Python interpreter' in ' '.join(missing.stderr.split())
    not_python = tmp_path / 'fake'
    not_python.write_text('#!/bin/sh\necho hello\n', encoding='utf-8')
    not_python.chmod(0o755)
    wrong = invoke('check', tmp_path, '--python', not_python)
    assert wrong.exit_code == 2
    assert 'did not answer as a Python 3 interpreter' in ' '.join(wrong.stderr.split())


def test_programs_are_looked_up_as_the_sandbox_sees_them(tmp_path: Path) -> None:
    """A program on this machine's PATH outside what `SkillSandbox` shows is missing in the sandbox and there with
    `--local`; a link in the interpreter's folder that leads outside is missing until the sandbox mounts its target."""
    tools = tmp_path / 'tools'
    tools.mkdir()
    for name in ('hosttool-xyz', 'linked-xyz'):
        (tools / name).write_text('#!/bin/sh\n', encoding='utf-8')
        (tools / name).chmod(0o755)
    venv = tmp_path / 'env'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(venv)], check=True, timeout=120)
    (venv / 'bin' / 'linked-xyz').symlink_to(tools / 'linked-xyz')
    write_skill(tmp_path / 'lib', 'tooly', files={'scripts/go.sh': 'hosttool-xyz\nlinked-xyz\n'})
    env = {'PATH': f'{tools}:{os.environ["PATH"]}'}
    python = venv / 'bin' / 'python'

    _, sandbox = as_json(tmp_path / 'lib', '--python', python, env=env)
    needs = needs_of(sandbox, 'tooly')
    host = needs['command', 'hosttool-xyz']
    assert host['status'] == 'missing'
    assert host['detail'].startswith(f"not on the sandbox's PATH (this machine has {tools / 'hosttool-xyz'}")
    linked = needs['command', 'linked-xyz']
    assert linked['status'] == 'missing'
    assert linked['detail'] == f'{venv}/bin/linked-xyz leads to {tools}/linked-xyz, which the sandbox does not show'
    assert linked['hint'] == f'SkillSandbox(mounts=[{str(tools)!r}])'

    _, mounted = as_json(tmp_path / 'lib', '--python', python, '--mount', tools, env=env)
    assert needs_of(mounted, 'tooly')['command', 'linked-xyz']['status'] == 'ok'
    code, local = as_json(tmp_path / 'lib', '--python', python, '--local', env=env)
    assert code == 0
    assert needs_of(local, 'tooly')['command', 'hosttool-xyz']['detail'] == str(tools / 'hosttool-xyz')


# --- the shell reader, on its own -----------------------------------------------------------------


@pytest.mark.parametrize(
    ('script', 'expected'),
    [
        ('FOO=1 npm run build && cd "$DIR" || exit 1', {'npm': False}),
        ('x=$(git rev-parse HEAD); echo "$(uname -s)"', {'git': False, 'uname': False}),
        ('exec node server.js', {'node': False}),
        ('nohup env A=1 node s.js &', {'nohup': False, 'env': False, 'node': False}),
        ('if which pandoc; then pandoc a.md; fi', {'which': False, 'pandoc': True}),
        ('hash uv 2>/dev/null && uv sync', {'uv': True}),
        ('for f in *.md; do wc -l "$f"; done', {'wc': False}),
        ('[[ -f x ]] && curl -s http://x', {'curl': False}),
        ('echo "an open quote\nover two lines" | sed s/a/b/', {'sed': False}),
        ('cat <<-END\n\tnotacommand\n\tEND\nhead -1 x', {'cat': False, 'head': False}),
        ('build() {\n  make all\n}\nbuild', {'make': False}),
        ('$TOOL --version; "$DIR/run.sh"; ./x.sh; /usr/bin/true', {}),
        (
            'case "$1" in\n  -h|--help) usage ;;\n  go|run)\n    python3 -m x ;;\nesac',
            {'usage': False, 'python3': False},
        ),
    ],
)
def test_the_shell_reader_takes_only_the_first_word_of_each_command(script: str, expected: dict[str, bool]) -> None:
    assert shell_commands(script).commands == expected


# --- hostile files --------------------------------------------------------------------------------


def test_hostile_scripts_are_noted_not_fatal_and_not_slow(tmp_path: Path) -> None:
    """Scripts written to hurt a reader: nesting deeper than Python's parser takes, a PEP 723 header line repeated
    (the PEP's own regular expression takes quadratic time on it), a shell script of open quotes, binary bytes under
    a script's name, a file over the size read."""
    files: dict[str, str | bytes] = {
        'scripts/deep.py': 'x = ' + '-' * 200_000 + '1\nimport deep_after\n',
        'scripts/long.py': 'import yaml\nx = 1' + ' + 1' * 300_000 + '\n',
        'scripts/headers.py': '# /// script\n' * 150_000 + 'import header_after\n',
        'scripts/quotes.sh': ('"\n' + 'jq .\n' * 21) * 8_000,
        'scripts/binary.py': b'import os\x00\xff\xfe' * 1000,
        'scripts/huge.py': 'import huge_after\n' + '#' * (3 * 1024 * 1024),
    }
    write_skill(tmp_path / 'lib', 'hostile', files=files)
    started = time.perf_counter()
    code, report = as_json(tmp_path / 'lib', '--local')
    seconds = time.perf_counter() - started
    [skill] = report['skills']
    notes = skill['notes']
    assert 'scripts/deep.py: not read as Python (MemoryError)' in notes
    assert 'scripts/long.py: not read as Python (RecursionError)' in notes
    assert any(note.startswith('scripts/huge.py: not read (') for note in notes)
    assert 'scripts/quotes.sh: only its first 128 KiB were read for commands' in notes
    needs = needs_of(report, 'hostile')
    assert ('module', 'header_after') in needs  # the header lines are comments; the import after them is read
    assert ('command', 'jq') in needs  # what lay between the open quotes was not lost entirely
    assert not any(name in ('deep_after', 'huge_after', 'os') for _, name in needs)
    assert code == 1
    assert seconds < 60  # minutes or hours before the reader was bounded
    case('Skill files', 'scripts that attack the dependency reader', f'{len(notes)} notes, {seconds:.1f} s: {notes}')
