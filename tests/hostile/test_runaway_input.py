"""Input that once stalled a run or made it grow without bound: each case runs a real agent (or reads a real zipped
package) at a size where the old quadratic or unbounded behaviour took minutes or hundreds of megabytes, under a
hang detector.

- A user's `/name a` followed by 200,000 spaces and a letter: the prompt pattern backtracked (a lazy `.*?` before
  `\\s*`), about 200 s; now the arguments are sliced off in one pass.
- `$` followed by thousands of digits in a skill's body: `int()` refused the number and the run raised.
- 600 KB of placeholders and 1,000 characters of arguments: a 200 MB load reply; now the expansion is capped and
  the model is told.
- Thousands of code blocks and placeholders: every placeholder scanned every block (154 s for 470 KB).
- A zipped package whose skill holds 6,000 empty folders: `zipfile.Path.iterdir` scanned the whole archive per
  folder (about 75 s).
"""

from __future__ import annotations

import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage

from skillshelf import PackageSource, Skills, SkillWarning
from skillshelf.capability.arguments import MAX_ADDED_CHARACTERS

from hang_detector import finishes
from reliability.ledger import case
from scripted_model import Script, call, tool_returns
from skill_files import write_skill
from warnings_said import said

SPACES = 200_000
"""A run of spaces where the old prompt pattern took about 200 s (it took 8 s at 40,000, growing as the square)."""


def run(capability: Skills[Any], prompt: str, *steps: Any, seconds: float = 30) -> list[ModelMessage]:
    """One real agent run, failing (not hanging) if it takes longer than `seconds`."""
    script = Script([[step] for step in steps])
    return finishes(lambda: Agent(script.model(), capabilities=[capability]).run_sync(prompt).all_messages(), seconds)


@pytest.mark.parametrize(
    ('prompt', 'arguments'),
    [
        pytest.param('/echo a' + ' ' * SPACES + 'x', ['a', 'x'], id='spaces-then-a-letter'),
        pytest.param('/echo a' + ' \t\n' * (SPACES // 3) + 'b c', ['a', 'b'], id='mixed-whitespace'),
        pytest.param('$echo ' + ' ' * SPACES + 'x', ['x', '$1'], id='codex-dollar'),
        pytest.param('   /echo' + ' ' * SPACES, ['$0', '$1'], id='spaces-only'),
    ],
)
def test_a_prompt_with_a_long_run_of_whitespace_invokes_in_one_pass(
    tmp_path: Path, prompt: str, arguments: list[str]
) -> None:
    write_skill(tmp_path, 'echo', 'First $0, then $1.', description='Echo its arguments.')
    messages = run(Skills(tmp_path), prompt)
    [loaded] = tool_returns(messages, 'load_skill')
    assert f'First {arguments[0]}, then {arguments[1]}.' in loaded
    case('Runs', f'a user prompt /name with {SPACES:,} whitespace characters in its arguments', loaded[:90])


@pytest.mark.parametrize(
    'prompt',
    ['/' + 'a' * SPACES, '/echo-' + '-' * SPACES + 'x', '/' + 'a-' * (SPACES // 2), 'hello' + ' ' * SPACES + '/echo'],
    ids=['long-name', 'long-hyphens', 'hyphenated-run', 'not-at-start'],
)
def test_a_prompt_that_is_no_invocation_is_refused_in_one_pass(tmp_path: Path, prompt: str) -> None:
    write_skill(tmp_path, 'echo', 'First $0.', description='Echo its arguments.')
    messages = run(Skills(tmp_path), prompt)
    assert tool_returns(messages, 'load_skill') == []


@pytest.mark.parametrize(
    ('body', 'kept'),
    [
        pytest.param('Pay $' + '9' * 5000 + ' now; use $0.', '$' + '9' * 5000, id='dollar-5000-digits'),
        pytest.param('Take $ARGUMENTS[' + '7' * 5000 + '] and $0.', '$ARGUMENTS[' + '7' * 5000 + ']', id='indexed'),
        pytest.param('Escaped \\$' + '1' * 9000 + ' and $0.', '$' + '1' * 9000, id='escaped'),
        pytest.param('```\nawk $' + '2' * 5000 + '\n```\nThen $0.', '$' + '2' * 5000, id='in-code'),
        pytest.param('Costs $1234567 (seven digits) for $0.', '$1234567', id='seven-digits'),
    ],
)
def test_a_placeholder_with_thousands_of_digits_stays_as_written(tmp_path: Path, body: str, kept: str) -> None:
    """`int()` refuses more than 4,300 digits: the load used to raise and end the run. A position of more than six
    digits names no argument, so it stays as written, whoever loads the skill."""
    write_skill(tmp_path, 'pay', body, description='Pay a bill.')
    capability = Skills(tmp_path)
    by_model = run(capability, 'pay it', *[call('load_skill', name='pay', arguments='now later')])
    by_user = run(capability, '/pay now later')
    for messages in (by_model, by_user):
        [loaded] = tool_returns(messages, 'load_skill')
        assert kept in loaded
        assert 'now' in loaded  # the real placeholder (or the appended arguments) still got them
    case(
        "The model's calls",
        f'a body with `{kept[:14]}…` ({len(kept):,} characters) loaded with arguments',
        'left as written',
    )


@pytest.mark.parametrize(
    ('placeholder', 'repeat'),
    [('$0 ', 200_000), ('$ARGUMENTS ', 55_000), ('${ARGUMENTS}', 50_000), ('$ARGUMENTS[0]', 46_000)],
    ids=['positional', 'whole', 'braced', 'indexed'],
)
def test_placeholders_cannot_blow_a_load_reply_up(tmp_path: Path, placeholder: str, repeat: int) -> None:
    """A 600 KB body of placeholders with 1,000 characters of arguments made a 200 MB reply: the arguments may add
    `MAX_ADDED_CHARACTERS` at most, the rest stay as written and the model is told, with the arguments once."""
    body = placeholder * repeat
    assert len(body) >= 550_000
    write_skill(tmp_path, 'fill', body, description='Fill a template.')
    arguments = 'w' * 1000
    messages = run(Skills(tmp_path), 'fill it', call('load_skill', name='fill', arguments=arguments))
    [loaded] = tool_returns(messages, 'load_skill')
    assert len(loaded) < len(body) + MAX_ADDED_CHARACTERS + 5_000
    assert loaded.count(arguments) == MAX_ADDED_CHARACTERS // (1000 - len(placeholder.strip())) + 1
    assert f'filling them all would add more than {MAX_ADDED_CHARACTERS:,} characters' in loaded
    assert loaded.endswith(f'ARGUMENTS: {arguments}')
    note = loaded[loaded.index('\n\n[') :][:120]
    case(
        'Runs',
        f'a {len(body) // 1000} KB body of `{placeholder.strip()}` loaded with 1,000 characters of arguments',
        note,
    )


def test_thousands_of_code_blocks_and_placeholders_cost_one_pass(tmp_path: Path) -> None:
    """Every placeholder used to be checked against every code block: 154 s for this body, now a binary search."""
    body = '```\nawk $1\n```\n' * 40_000 + 'Then $0 ' * 10_000
    write_skill(tmp_path, 'blocks', body, description='Many blocks.')
    messages = run(Skills(tmp_path), '/blocks first second')
    [loaded] = tool_returns(messages, 'load_skill')
    assert loaded.count('awk $1') == 40_000  # in code: left as written
    assert loaded.count('Then first') == 10_000
    case('Runs', '40,000 code blocks and 10,000 placeholders loaded with arguments', 'substituted in one pass')


@pytest.fixture
def zipped_package(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A package imported from a zip file: one skill holding 6,000 empty folders and one file, and 6,000 empty
    folders beside it."""
    name = 'hollow_skills'
    archive = tmp_path / 'hollow.zip'
    with zipfile.ZipFile(archive, 'w') as zipped:
        zipped.writestr(f'{name}/__init__.py', '')
        zipped.writestr(
            f'{name}/skills/hollow/SKILL.md', '---\nname: hollow\ndescription: Mostly folders.\n---\nRead.\n'
        )
        zipped.writestr(f'{name}/skills/hollow/d02999/notes.md', 'The only file.')
        for index in range(6_000):
            zipped.writestr(f'{name}/skills/hollow/d{index:05}/', '')
            zipped.writestr(f'{name}/skills/e{index:05}/', '')
    sys.path.insert(0, str(archive))
    yield name, archive
    sys.path.remove(str(archive))
    sys.modules.pop(name, None)


def test_a_zipped_package_of_thousands_of_empty_folders_reads_in_one_pass(zipped_package: tuple[str, Path]) -> None:
    name, _ = zipped_package
    read = finishes(lambda: PackageSource(name).read_skills(), 20)
    [skill] = read.skills
    assert skill.list_resources() == ['d02999/notes.md']
    assert len(read.skipped) == 6_000  # each empty folder beside it is no skill, and says so
    assert 'has no SKILL.md' in read.skipped[0].problem
    with pytest.warns(SkillWarning, match='has no SKILL.md') as warned:
        capability = finishes(lambda: Skills(sources=[PackageSource(name)]), 20)
    assert len(said(warned)) == 6_000
    messages = run(capability, '/hollow')
    assert 'Read.' in tool_returns(messages, 'load_skill')[0]
    case('Skill files', 'a zipped package whose skill holds 6,000 empty folders', 'read in one pass over the archive')
