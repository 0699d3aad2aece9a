"""Claude Code's command files (`.claude/commands/*.md`) as skills: named by their file, frontmatter optional, and
the same guarantees as a `SKILL.md` against hostile files."""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import TextPart

from skillshelf import LibraryOptions, SkillLibrary, Skills
from skillshelf.files import ReadPolicy
from skillshelf.markdown.bounded_read import MAX_SKILL_FILE_BYTES
from skillshelf.sources.commands import MAX_COMMAND_DEPTH, discover_commands

from hang_detector import finishes
from scripted_model import Script, call, tool_returns
from warnings_said import said

FIX_ISSUE = """\
---
description: Fix a GitHub issue, test first.
argument-hint: [issue-number] [priority]
allowed-tools: Bash(gh issue view:*), Read
---
Fix issue $0 (priority $1): read it with `gh issue view $0`, write a failing test, then fix it.
"""


def commands(root: Path) -> Path:
    (root / 'git').mkdir(parents=True)
    (root / 'fix-issue.md').write_text(FIX_ISSUE, encoding='utf-8')
    (root / 'git' / 'commit.md').write_text('# Commit the staged changes\n\nWrite a short message.\n', encoding='utf-8')
    (root / 'deploy.md').write_text(
        '---\ndescription: Deploy the service.\ndisable-model-invocation: true\n---\nDeploy $ARGUMENTS.\n',
        encoding='utf-8',
    )
    (root / 'notes.txt').write_text('not a command', encoding='utf-8')
    return root


def skipped_warnings(build: object) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        assert callable(build)
        build()
    return said(caught)


def test_command_files_are_skills_named_by_their_file(tmp_path: Path) -> None:
    capability = Skills(command_directories=commands(tmp_path / 'commands'))
    script = Script([[call('load_skill', name='commit')], [call('read_skill_resource', name='commit', path='x.md')]])
    result = Agent(script.model(), capabilities=[capability]).run_sync('commit this')

    catalog = (script.requests[0].instructions or '').split('\n\n')[-1]
    assert catalog.splitlines() == [
        '- fix-issue: Fix a GitHub issue, test first.',
        '- commit: Commit the staged changes',  # no description: the first line, as in Claude Code
    ]
    [loaded] = tool_returns(result.all_messages(), 'load_skill')
    assert loaded == "Loaded skill 'commit'.\n\n# Commit the staged changes\n\nWrite a short message."
    [read] = tool_returns(result.all_messages(), 'read_skill_resource')
    assert script.requests[0].tools == ['load_skill', 'unload_skill']  # no files to read; pre-approvals to drop
    assert "Unknown tool name: 'read_skill_resource'" in str(read)
    skill = capability.library.skills['fix-issue']
    assert skill.origin == str(tmp_path / 'commands' / 'fix-issue.md')
    assert skill.folder is None
    assert skill.allowed_tools == ('Bash(gh issue view:*)', 'Read')
    assert skill.list_resources() == []


def test_a_user_invokes_a_command_with_arguments(tmp_path: Path) -> None:
    capability = Skills(command_directories=[commands(tmp_path / 'commands')])
    assert [(command.name, command.argument_hint) for command in capability.commands()] == [
        ('deploy', None),
        ('fix-issue', '[issue-number] [priority]'),  # unquoted `[a] [b]` is not YAML: read as Claude Code means it
        ('commit', None),  # a folder's files come before its sub-folders'
    ]
    script = Script([[TextPart('fixed')], [TextPart('deployed')]])
    agent = Agent(script.model(), capabilities=[capability])

    agent.run_sync('/fix-issue 42 high')
    [loaded] = tool_returns(script.requests[0].messages, 'load_skill')
    assert loaded.endswith(
        'Fix issue 42 (priority high): read it with `gh issue view 42`, write a failing test, then fix it.'
    )
    agent.run_sync('/deploy staging')  # `disable-model-invocation`: not in the catalog, still the user's to invoke
    assert str(tool_returns(script.requests[1].messages, 'load_skill')[0]).endswith('Deploy staging.')
    assert '- deploy' not in (script.requests[1].instructions or '')


def test_an_edited_command_is_read_again_at_the_next_run(tmp_path: Path) -> None:
    root = commands(tmp_path / 'commands')
    capability = Skills(command_directories=root)
    (root / 'git' / 'commit.md').write_text('---\ndescription: Commit, signed.\n---\nSign it.\n', encoding='utf-8')
    later = time.time_ns() + 10**9
    os.utime(root / 'git' / 'commit.md', ns=(later, later))  # a distinct mtime even on coarse clocks

    script = Script([[call('load_skill', name='commit')], [TextPart('done')]])
    result = Agent(script.model(), capabilities=[capability]).run_sync('commit')

    assert '- commit: Commit, signed.' in (script.requests[0].instructions or '')
    assert str(tool_returns(result.all_messages(), 'load_skill')[0]).endswith('Sign it.')


def test_hostile_command_files_are_skipped_with_a_warning_naming_each(tmp_path: Path) -> None:
    root = tmp_path / 'commands'
    root.mkdir()
    (root / 'good.md').write_text('Do the good thing.\n', encoding='utf-8')
    outside = tmp_path / 'secret.txt'
    outside.write_text('password', encoding='utf-8')
    hostile = {
        'huge.md': 'the file is larger than',
        'link.md': 'a symlink to outside its commands directory',
        'fifo.md': 'it is not a regular file',
        'bomb.md': 'the frontmatter is refused',
        'bad-yaml.md': 'the frontmatter is not valid YAML',
        'latin1.md': 'the file is not valid UTF-8',
        'hard.md': 'the file has other hard links',
        'Fix_Issue.md': 'rename the file',
        'empty.md': 'the command is empty',
        'unclosed.md': 'the frontmatter is not closed',
        'listy.md': 'not a mapping of fields',
        'surrogate.md': 'halves of UTF-16 pairs, which UTF-8 cannot hold',
    }
    (root / 'huge.md').write_bytes(b'x' * (MAX_SKILL_FILE_BYTES + 1))
    (root / 'link.md').symlink_to(outside)
    os.mkfifo(root / 'fifo.md')
    bomb = '---\na: &a [x, x, x, x, x, x, x, x, x]\n' + ''.join(
        f'{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, '
        f'*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n'
        for i in range(8)
    )
    (root / 'bomb.md').write_text(bomb + '---\nboom\n', encoding='utf-8')
    (root / 'bad-yaml.md').write_text('---\ndescription: {unclosed\n---\nbody\n', encoding='utf-8')
    (root / 'latin1.md').write_bytes('café\n'.encode('latin-1'))
    (tmp_path / 'elsewhere.md').write_text('hard linked', encoding='utf-8')
    os.link(tmp_path / 'elsewhere.md', root / 'hard.md')
    (root / 'Fix_Issue.md').write_text('Fix it.\n', encoding='utf-8')
    (root / 'empty.md').write_text('---\nargument-hint: x\n---\n\n', encoding='utf-8')
    (root / 'unclosed.md').write_text('---\ndescription: never closed\nbody\n', encoding='utf-8')
    (root / 'listy.md').write_text('---\n- a\n- b\n---\nbody\n', encoding='utf-8')
    (root / 'surrogate.md').write_text('---\ndescription: "\\ud800"\n---\nbody\n', encoding='utf-8')
    deep = root.joinpath(*[f'level{i}' for i in range(MAX_COMMAND_DEPTH + 1)])
    deep.mkdir(parents=True)
    (deep / 'deep.md').write_text('Too deep.\n', encoding='utf-8')
    os.symlink(tmp_path, root / 'linked-folder')

    built: list[SkillLibrary] = []
    warned = finishes(
        lambda: skipped_warnings(
            lambda: built.append(SkillLibrary.build(options=LibraryOptions(command_directories=[root])))
        ),
        10,
    )

    assert list(built[0].skills) == ['good']
    for name, problem in hostile.items():
        [line] = [line for line in warned if line.startswith(f'skipped {root / name}: ')]
        assert problem in line, line
    assert any(line.startswith(f'skipped {deep}: command folders nest at most') for line in warned)
    assert f'skipped {root / "linked-folder"}: a symlinked folder in a commands directory is not followed' in warned
    assert len(warned) == len(hostile) + 2
    assert 'password' not in repr(built[0].skills)


def test_hard_links_are_read_when_allowed(tmp_path: Path) -> None:
    root = tmp_path / 'commands'
    root.mkdir()
    (tmp_path / 'shared.md').write_text('Shared command.\n', encoding='utf-8')
    os.link(tmp_path / 'shared.md', root / 'shared.md')
    found = discover_commands(root, policy=ReadPolicy(allow_hard_links=True))
    assert [skill.name for skill in found.skills] == ['shared']
    assert found.skipped == []


@pytest.mark.parametrize('front', ['argument-hint: [pr]', 'argument-hint: "[pr]"'])
def test_argument_hints_read_as_claude_code_writes_them(tmp_path: Path, front: str) -> None:
    (tmp_path / 'review.md').write_text(f'---\n{front}\n---\nReview PR $0.\n', encoding='utf-8')
    [skill] = discover_commands(tmp_path).skills
    assert (skill.argument_hint, skill.description) == ('[pr]', 'Review PR $0.')
