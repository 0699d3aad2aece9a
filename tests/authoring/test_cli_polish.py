"""The `skillshelf` command line as a skill author meets it: help that imports nothing heavy, warnings one line
each, an empty library called empty, and tables that wrap in a narrow terminal instead of cutting."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner, Result

import skillshelf
from skillshelf import SkillWarning
from skillshelf.authoring.cli.app import app
from skillshelf.authoring.cli.render import one_line_warnings

from skill_files import write_skill

BROKEN = 'name: broken\ndescription:\n  what: a mapping, not text'
"""A frontmatter no reading can make a skill of: its description is not text."""
GOOD = 'description: Formats Python code with black. Use when the user asks to format or tidy Python files.'

COMMANDS = (
    'list',
    'validate',
    'check',
    'show',
    'catalog',
    'search',
    'index',
    'eval',
    'publish',
    'unpublish',
    'serve-mcp',
)

HEAVY = (
    'pydantic_ai',
    'numpy',
    'yaml',
    'httpx',
    'sqlalchemy',
    'fastembed',
    'fastmcp',
    'skillshelf.library.library',
    'skillshelf.library.index',
    'skillshelf.skill',
)
"""Modules that help and argument parsing must not import: pydantic-ai and what the library needs to run."""

HELP_IMPORTS = textwrap.dedent(
    """
    import json, sys
    from skillshelf.authoring.cli.app import app

    def run(*args):
        try:
            app(list(args), prog_name='skillshelf')
        except SystemExit:
            pass

    run('--help')
    for command in {commands}:
        run(command, '--help')
    run('list', '--no-such-option')
    run('search', 'query', '--limit', '999')
    print(json.dumps(sorted(sys.modules)))
    """
)


def invoke(*args: str | Path, columns: int = 200) -> Result:
    runner = CliRunner(env={'COLUMNS': str(columns), 'NO_COLOR': '1'})
    return runner.invoke(app, [str(arg) for arg in args])


def flat(text: str) -> str:
    """`text` with its line breaks and runs of spaces made single spaces (Rich wraps messages at the width)."""
    return ' '.join(text.split())


# --- help imports nothing heavy -------------------------------------------------------------------


def imported_by(script: str) -> set[str]:
    completed = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    return set(json.loads(completed.stdout.splitlines()[-1]))


def test_help_and_argument_errors_import_neither_pydantic_ai_nor_the_library() -> None:
    modules = imported_by(HELP_IMPORTS.format(commands=COMMANDS))
    assert {'skillshelf.authoring.cli.app', 'typer', 'rich'} <= modules  # the script did run the app
    for name in HEAVY:
        assert not any(module == name or module.startswith(f'{name}.') for module in modules), name


def test_importing_the_package_imports_nothing_until_a_name_is_used() -> None:
    modules = imported_by('import json, sys, skillshelf; print(json.dumps(sorted(sys.modules)))')
    assert not any(module.startswith(('pydantic', 'skillshelf.')) for module in modules)


def test_every_public_name_is_the_object_of_its_module() -> None:
    from skillshelf.capability.skills import Skills
    from skillshelf.errors import SkillWarning as DefinedWarning

    assert skillshelf.Skills is Skills
    assert SkillWarning is DefinedWarning
    for name in skillshelf.__all__:
        assert getattr(skillshelf, name) is not None, name
    assert set(skillshelf.__all__) <= set(dir(skillshelf))
    with pytest.raises(AttributeError, match='no_such_name'):
        _ = skillshelf.no_such_name  # pyright: ignore[reportAttributeAccessIssue]


def test_the_search_limit_in_help_is_search_skills_limit() -> None:
    from skillshelf.authoring.cli.options import SEARCH_LIMIT_MAX
    from skillshelf.capability.meta_tools import MAX_SEARCH_LIMIT

    assert SEARCH_LIMIT_MAX == MAX_SEARCH_LIMIT


def test_each_command_still_has_its_help() -> None:
    for command in COMMANDS:
        result = invoke(command, '--help')
        assert result.exit_code == 0, command
        assert 'Usage: ' in result.stdout, command


# --- warnings, one line each ----------------------------------------------------------------------


def test_a_skipped_folder_is_one_warning_line_on_stderr_even_in_a_narrow_terminal(tmp_path: Path) -> None:
    write_skill(tmp_path, 'good', frontmatter=f'name: good\n{GOOD}')
    broken = write_skill(tmp_path, 'broken-' + 'and-long-' * 6, frontmatter=BROKEN) / 'SKILL.md'
    result = invoke('search', 'format python', tmp_path, columns=60)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith('warning:')]
    assert lines == [f'warning: skipped {broken}: `description` must be a string, not a YAML dict']
    assert 'SkillWarning' not in result.stderr
    assert '.py:' not in result.stderr  # no file and line number of the code that warned
    assert 'good' in result.stdout


def test_a_repaired_frontmatter_is_no_longer_silent(tmp_path: Path) -> None:
    write_skill(
        tmp_path, 'colon', frontmatter='name: colon\ndescription: Formats code: use when the user asks to format code.'
    )
    result = invoke('search', 'format code', tmp_path)
    assert result.exit_code == 0, result.output
    assert f'warning: {tmp_path / "colon" / "SKILL.md"}: quoted a frontmatter value' in result.stderr
    assert 'colon' in result.stdout


def test_a_python_skill_warning_is_one_line_without_the_source_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / 'polish_warned_skill.py').write_text(
        'from skillshelf import Skill\n'
        "notes = Skill.from_markdown('---\\nname: notes\\ndescription: Take notes. Use when asked to take notes.\\n"
        "python-tools: [x]\\n---\\nWrite it down.')\n",
        encoding='utf-8',
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, 'polish_warned_skill', raising=False)
    result = invoke('list', tmp_path, '--skill', 'polish_warned_skill:notes')
    monkeypatch.delitem(sys.modules, 'polish_warned_skill', raising=False)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        'warning: <SKILL.md text>: its `python-tools` are imported only from trusted directories; loaded without'
    ]
    assert 'from_markdown' not in result.stderr


def test_list_shows_skipped_folders_in_its_table_not_twice(tmp_path: Path) -> None:
    write_skill(tmp_path, 'good', frontmatter=f'name: good\n{GOOD}')
    write_skill(tmp_path, 'broken', frontmatter=BROKEN)
    result = invoke('list', tmp_path)
    assert result.exit_code == 0, result.output
    assert 'must be a string' in result.stdout
    assert 'warning:' not in result.stderr


def test_warnings_are_shown_once_each_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with one_line_warnings():
        for _ in range(2):
            warnings.warn(SkillWarning('skipped a/SKILL.md: the name\n  is wrong'), stacklevel=1)
        warnings.warn('something else', UserWarning, stacklevel=1)
    assert capsys.readouterr().err.splitlines() == [
        'warning: skipped a/SKILL.md: the name is wrong',
        'warning: UserWarning: something else',
    ]


# --- the library is empty -------------------------------------------------------------------------


@pytest.mark.parametrize(
    'command', [('search', 'format python'), ('catalog',), ('show', 'anything'), ('index',), ('eval', 'QUERIES')]
)
def test_commands_on_an_empty_library_say_so(tmp_path: Path, command: tuple[str, ...]) -> None:
    queries = tmp_path / 'queries.jsonl'
    queries.write_text('{"query": "format python", "relevant": ["black"]}\n', encoding='utf-8')
    library = tmp_path / 'library'
    library.mkdir()
    args = [str(queries) if arg == 'QUERIES' else arg for arg in command]
    for extra in ((), ('--json',)):
        if command[0] == 'show' and extra:
            continue
        result = invoke(*args, library, *extra)
        assert result.exit_code == 1, result.output
        assert f"error: the library is empty: no skills in '{library}'." in flat(result.stderr)
        assert 'A skill is a folder holding a SKILL.md file' in flat(result.stderr)
        assert 'No skill matches' not in result.output
        assert result.stdout == ''


def test_list_of_an_empty_library_says_so_and_hints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke('list')
    assert result.exit_code == 1, result.output  # a script learns the library is empty from the status too
    assert flat(result.stdout).startswith(f'The library is empty: no skills in the working directory ({tmp_path}).')
    assert '`skillshelf list path/to/skills`' in flat(result.stdout)
    as_json = invoke('list', '--json')
    assert as_json.exit_code == 1
    listing = json.loads(as_json.stdout)
    assert listing['skills'] == []
    assert listing['skipped'] == [{'path': str(tmp_path), 'problem': 'no skill was found in the directory'}]


def test_an_empty_library_of_skipped_folders_points_at_validate(tmp_path: Path) -> None:
    write_skill(tmp_path, 'broken', frontmatter=BROKEN)
    result = invoke('search', 'anything', tmp_path)
    assert result.exit_code == 1
    assert '1 SKILL.md file was skipped: `skillshelf validate` says why' in flat(result.stderr)
    listed = invoke('list', tmp_path)
    assert listed.exit_code == 1
    assert '1 SKILL.md file was skipped' in flat(listed.stdout)
    assert 'must be a string' in listed.stdout  # the table of skipped folders follows


# --- narrow terminals wrap rather than cut --------------------------------------------------------


def column(output: str, header: str) -> str:
    """The text of one table column, its folded lines joined, read from Rich's box characters."""
    lines = output.splitlines()
    top = next(index for index, line in enumerate(lines) if '┃' in line and header in line)
    while '━' not in lines[top]:  # a header folded onto several lines
        top += 1
    heads = [' '.join(part.split()) for part in lines[top - 1].split('┃')]
    position = next(index for index, head in enumerate(heads) if header.split()[-1] in head)
    cells: list[str] = []
    for line in lines[top + 1 :]:
        if '│' not in line:
            break
        cells.append(line.split('│')[position].strip())
    return ''.join(cells)


@pytest.mark.parametrize('columns', [80, 60])
def test_tables_fold_long_paths_and_names_instead_of_cutting_them(tmp_path: Path, columns: int) -> None:
    deep = tmp_path / ('folders-nested-' * 3) / 'deeper-still-and-deeper' / 'the-library-itself'
    name = 'formats-python-code-with-black-and-tidies-imports-too'
    folder = write_skill(deep, name, frontmatter=f'name: {name}\n{GOOD}')
    write_skill(deep, 'Broken', frontmatter=BROKEN)

    listed = invoke('list', deep, columns=columns)
    assert listed.exit_code == 0, listed.output
    assert column(listed.stdout, 'Source') == str(folder)
    assert column(listed.stdout, 'Name').startswith(name)
    assert column(listed.stdout, 'Path') == str(deep / 'Broken' / 'SKILL.md')
    assert column(listed.stdout, 'Files') == '0'  # the last column is still there

    found = invoke('search', 'format python code', deep, columns=columns)
    assert found.exit_code == 0, found.output
    assert column(found.stdout, 'Skill') == name

    for result in (listed, found):
        assert '…' not in result.stdout
        assert max(cell_len(line) for line in result.stdout.splitlines()) <= columns
