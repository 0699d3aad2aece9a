"""A repository's root given as a library directory is read the way `GitSource` reads a repository (its `skills/`
folder), what is not read there is named, and the command line says only what is so: an empty library fails,
only `SKILL.md` files count as skipped skills, a shadowed skill is no mistake to fix, and piped rows never wrap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from skillshelf import LibraryOptions, SkillLibrary, SkillWarning
from skillshelf.authoring.cli.app import app

from skill_files import write_skill
from warnings_said import said

LONG_NAME = 'writes-commit-messages-in-the-conventional-commits-style'


def repository(root: Path) -> Path:
    """A repository laid out like Anthropic's: skills in `skills/`, a template skill at the root, documents."""
    write_skill(root / 'skills', 'pdf', 'Fill PDF forms.', description='Fills PDF forms.')
    write_skill(root / 'skills', LONG_NAME, 'Write the message.', description='Writes commit messages.')
    write_skill(root, 'template', 'Replace me.', description='A template for new skills.')
    (root / 'GEMINI.md').write_text('# Gemini\n', encoding='utf-8')
    (root / 'docs').mkdir()
    (root / 'docs' / 'guide.md').write_text('# Guide\n', encoding='utf-8')
    return root


def openai_like(root: Path) -> Path:
    """A repository laid out like OpenAI's: every skill in a hidden folder of `skills/`."""
    write_skill(root / 'skills' / '.curated', 'notion', 'Use Notion.', description='Works with Notion.')
    write_skill(root / 'skills' / '.system', 'installer', 'Install skills.', description='Installs skills.')
    (root / 'README.md').write_text('# Skills\n', encoding='utf-8')
    return root


def invoke(*args: str | Path, env: dict[str, str | None] | None = None) -> Result:
    runner = CliRunner(env={'COLUMNS': '200', 'NO_COLOR': '1', **(env or {})})
    return runner.invoke(app, [str(arg) for arg in args])


def flat(text: str) -> str:
    return ' '.join(text.split())


def test_a_repository_root_is_read_from_its_skills_folder(tmp_path: Path) -> None:
    root = repository(tmp_path / 'repo')
    with pytest.warns(SkillWarning) as caught:
        library = SkillLibrary.build(options=LibraryOptions(directories=[root], trusted_directories=[root]))
    assert list(library.skills) == ['pdf', LONG_NAME]
    assert library.skipped == []  # GEMINI.md and docs/ are the repository's, not skills that failed
    [warning] = said(caught)
    assert warning == (
        f'the skill directory {str(root)!r}: read from its skills/ folder; the skill folder template at its root is '
        f'not read: a skill folder may be listed in `directories` itself (e.g. {str(root / "template")!r})'
    )


def test_a_skill_folder_with_a_skills_folder_inside_is_read_as_the_skill(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, 'meta', 'Make skills.', description='Makes skills.')
    write_skill(folder / 'skills', 'example', 'An example skill it ships.')
    library = SkillLibrary.build(options=LibraryOptions(directories=[folder]))
    assert list(library.skills) == ['meta']


def test_hidden_folders_of_skills_beside_visible_skills_are_named_in_a_warning(tmp_path: Path) -> None:
    write_skill(tmp_path / 'repo' / 'skills', 'pdf', 'Fill PDF forms.')
    write_skill(tmp_path / 'repo' / 'skills' / '.system', 'installer', 'Install skills.')
    with pytest.warns(SkillWarning, match=r'its hidden folder \.system hold') as caught:
        library = SkillLibrary.build(options=LibraryOptions(directories=[tmp_path / 'repo']))
    assert list(library.skills) == ['pdf']
    assert f'list it as a directory (e.g. {str(tmp_path / "repo" / "skills" / ".system")!r})' in said(caught)[0]


def test_an_openai_like_root_names_its_hidden_folders_and_list_fails(tmp_path: Path) -> None:
    root = openai_like(tmp_path / 'openai')
    result = invoke('list', root)
    assert result.exit_code == 1, result.output
    text = flat(result.stdout)
    assert text.startswith(f'The library is empty: no skills in {str(root)!r}. A skill is a folder holding a SKILL.md')
    assert 'SKILL.md file was skipped' not in text  # nothing that was skipped is a SKILL.md
    assert 'its hidden folders .curated, .system hold skill folders' in text
    assert json.loads(invoke('list', root, '--json').stdout)['skills'] == []


def test_only_skill_md_files_count_as_skipped_skills(tmp_path: Path) -> None:
    library = tmp_path / 'lib'
    write_skill(library, 'broken', frontmatter='name: broken\ndescription:\n  what: a mapping, not text')
    (library / 'GEMINI.md').write_text('# Gemini\n', encoding='utf-8')
    (library / 'docs').mkdir()
    result = invoke('list', library)
    assert result.exit_code == 1
    assert 'no skills in' in flat(result.stdout)
    assert '1 SKILL.md file was skipped: `skillshelf validate` says why, and how to fix it.' in flat(result.stdout)


def test_a_deliberate_shadowing_is_not_a_mistake_to_fix(tmp_path: Path) -> None:
    mine, shared = tmp_path / 'mine', tmp_path / 'shared'
    write_skill(mine, 'pdf', 'My PDF rules.', description='Fills PDF forms, my way.')
    write_skill(shared, 'pdf', 'Shared PDF rules.', description='Fills PDF forms.')
    write_skill(shared, 'docs', frontmatter='name: docs\ndescription:\n  what: a mapping, not text')
    (shared / 'NOTES.md').write_text('# Notes\n', encoding='utf-8')
    result = invoke('search', 'fill a pdf form', mine, shared)
    assert result.exit_code == 0, result.output
    assert flat(result.stderr).endswith(
        '1 skill folder was skipped (see above); `skillshelf validate` says how to fix it. 1 skill is shadowed by a '
        'skill of the same name in an earlier directory (see above). 1 entry that is not a skill left out (see above).'
    )
    only_shadowed = invoke('search', 'fill a pdf form', mine, tmp_path / 'again')
    assert only_shadowed.exit_code == 1  # 'again' does not exist
    write_skill(tmp_path / 'again', 'pdf', 'Again.', description='Fills PDF forms.')
    only_shadowed = invoke('search', 'fill a pdf form', mine, tmp_path / 'again')
    assert 'validate' not in only_shadowed.stderr
    assert flat(only_shadowed.stderr).endswith(
        f'warning: skipped {tmp_path / "again" / "pdf"}: shadowed by {mine / "pdf"} (the earlier directory wins) '
        '1 skill is shadowed by a skill of the same name in an earlier directory (see above).'
    )


def test_listing_to_a_pipe_never_wraps_a_name(tmp_path: Path) -> None:
    root = repository(tmp_path / 'repo')
    env = {key: value for key, value in os.environ.items() if key != 'COLUMNS'}
    piped = subprocess.run(
        [sys.executable, '-m', 'skillshelf', 'list', str(root)], capture_output=True, text=True, env=env, check=True
    )
    rows = [line for line in piped.stdout.splitlines() if LONG_NAME in line]
    assert len(rows) == 1, piped.stdout  # `skillshelf list | grep name` finds the whole row
    assert str(root / 'skills' / LONG_NAME) in rows[0]
    narrow = invoke('list', root, env={'COLUMNS': '60'})  # a width asked for is still kept
    assert LONG_NAME not in narrow.stdout
