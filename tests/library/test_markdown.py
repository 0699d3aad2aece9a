"""SKILL.md folders: the Agent Skills frontmatter shapes, name rules, discovery order and broken skills."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from inline_snapshot import snapshot

import skillshelf.files
from skillshelf import (
    LibraryOptions,
    Skill,
    SkillConflictError,
    SkillError,
    SkillFormatError,
    SkillLibrary,
    SkillWarning,
)
from skillshelf.markdown import guarded_yaml
from skillshelf.markdown.frontmatter import read_body, read_frontmatter

from skill_files import dedented, write_skill
from warnings_said import said


def test_every_known_field_and_unknown_fields_are_kept(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path,
        'pdf-forms',
        text=dedented("""
        ---
        name: pdf-forms
        description: Fill PDF forms.
        license: Apache-2.0
        compatibility: Needs poppler-utils
        allowed-tools: Bash(pdftk:*) Read
        metadata:
          author: acme
          version: "1.2"
        when_to_use: When a user uploads a PDF form.
        triggers: [fill form, pdf form]
        tags: [pdf, forms]
        ---
        Body text.
        """),
    )
    skill = Skill.from_folder(folder)

    assert (skill.name, skill.description, skill.load_instructions()) == ('pdf-forms', 'Fill PDF forms.', 'Body text.')
    assert skill.metadata == snapshot(
        {
            'when_to_use': 'When a user uploads a PDF form.',
            'triggers': ['fill form', 'pdf form'],
            'tags': ['pdf', 'forms'],
            'author': 'acme',
            'version': '1.2',
            'license': 'Apache-2.0',
            'compatibility': 'Needs poppler-utils',
            'allowed-tools': ['Bash(pdftk:*)', 'Read'],
        }
    )
    assert skill.keywords == 'pdf forms fill form pdf form When a user uploads a PDF form.'


def test_three_dashes_inside_a_value_are_not_a_delimiter(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path,
        'dashes',
        text=dedented("""
        ---
        name: dashes
        description: "Separate sections with --- lines"
        ---
        Use --- between sections.
        ---
        Still body.
        """),
    )
    skill = Skill.from_folder(folder)
    assert skill.description == 'Separate sections with --- lines'
    assert skill.load_instructions() == 'Use --- between sections.\n---\nStill body.'


def test_an_unquoted_colon_in_a_description_is_recovered_with_a_warning(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path,
        'colons',
        text=dedented("""
        ---
        name: colons
        description: Review code. Use when: the user asks for a review
        ---
        Body.
        """),
    )
    with pytest.warns(SkillWarning, match='quoted a frontmatter value that contains ": "'):
        skill = Skill.from_folder(folder)
    assert skill.description == 'Review code. Use when: the user asks for a review'


def test_crlf_line_ends_and_a_byte_order_mark_are_accepted(tmp_path: Path) -> None:
    folder = tmp_path / 'windows'
    folder.mkdir()
    (folder / 'SKILL.md').write_bytes(
        b'\xef\xbb\xbf---\r\nname: windows\r\ndescription: Made on Windows.\r\n---\r\nBody.\r\n'
    )
    skill = Skill.from_folder(folder)
    assert (skill.description, skill.load_instructions()) == ('Made on Windows.', 'Body.')


@pytest.mark.parametrize(
    ('folder', 'text', 'problem'),
    [
        ('no-front', 'Just a body.\n', 'the file does not start with a `---` frontmatter line'),
        ('unclosed', '---\nname: unclosed\ndescription: x\n', 'the frontmatter is not closed by a `---` line'),
        ('No-Name', '---\ndescription: x\n---\n', 'the frontmatter has no `name` field'),  # nor a usable folder name
        ('no-desc', '---\nname: no-desc\n---\n', 'the frontmatter has no `description` field'),
        ('empty-desc', '---\nname: empty-desc\ndescription: "  "\n---\n', '`description` is empty'),
        ('list', '---\n- a\n- b\n---\n', 'the frontmatter is a YAML list, not a mapping of fields'),
        ('Number', '---\nname: 12\ndescription: x\n---\n', '`name` must be a string, not a YAML int'),
        ('Upper', '---\nname: Upper\ndescription: x\n---\n', "the name 'Upper' has upper-case letters"),
        ('a--b', '---\nname: a--b\ndescription: x\n---\n', "the name 'a--b' has consecutive hyphens"),
        ('-lead', '---\nname: -lead\ndescription: x\n---\n', "the name '-lead' starts or ends with a hyphen"),
        ('under.score', '---\nname: under.score\ndescription: x\n---\n', 'may only contain lower-case letters'),
        ('a' * 65, f'---\nname: {"a" * 65}\ndescription: x\n---\n', 'the name is 65 characters long; the limit is 64'),
        ('bad-yaml', '---\nname: [unclosed\ndescription: x\n---\n', 'the frontmatter is not valid YAML'),
        ('meta', '---\nname: meta\ndescription: x\nmetadata: [1]\n---\n', '`metadata` must be a mapping'),
    ],
)
def test_format_errors_name_the_problem(tmp_path: Path, folder: str, text: str, problem: str) -> None:
    directory = tmp_path / folder
    directory.mkdir()
    (directory / 'SKILL.md').write_text(text, encoding='utf-8')
    with pytest.raises(SkillFormatError) as raised:
        Skill.from_folder(directory)
    assert problem in raised.value.problem
    assert raised.value.path == directory / 'SKILL.md'


def test_unicode_lower_case_names_follow_the_format(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, 'café-notes', text='---\nname: café-notes\ndescription: Notes.\n---\n')
    assert Skill.from_folder(folder).name == 'café-notes'


def test_a_broken_skill_is_skipped_with_a_warning_and_never_hides_the_valid_ones(tmp_path: Path) -> None:
    write_skill(tmp_path, 'alpha', text='---\nname: alpha\ndescription: First.\n---\n')
    write_skill(tmp_path, 'broken', text='---\nname: broken\n---\n')
    write_skill(tmp_path, 'zeta', text='---\nname: zeta\ndescription: Last.\n---\n')
    (tmp_path / 'not-a-skill').mkdir()
    (tmp_path / '.hidden').mkdir()
    (tmp_path / 'README.md').write_text('# Our skills', encoding='utf-8')

    with pytest.warns(SkillWarning) as caught:
        library = SkillLibrary.build(options=LibraryOptions(directories=[tmp_path]))

    assert list(library.skills) == ['alpha', 'zeta']
    no_skill_md = 'the folder has no SKILL.md, so it is not a skill (skills in its sub-folders are not read)'
    assert said(caught) == [
        f'skipped {tmp_path / "broken" / "SKILL.md"}: the frontmatter has no `description` field',
        f'skipped {tmp_path / "not-a-skill"}: {no_skill_md}',
    ]
    assert [(s.path.relative_to(tmp_path).parts[0], s.problem) for s in library.skipped] == [
        ('broken', 'the frontmatter has no `description` field'),
        ('not-a-skill', no_skill_md),
    ]


def test_strict_mode_turns_a_skip_into_an_error(tmp_path: Path) -> None:
    write_skill(tmp_path, 'broken', text='---\nname: broken\n---\n')
    with pytest.raises(SkillError, match='the frontmatter has no `description` field'):
        SkillLibrary.build(options=LibraryOptions(directories=[tmp_path], strict=True))


def test_the_first_directory_wins_a_name_clash(tmp_path: Path) -> None:
    write_skill(tmp_path / 'project', 'lint', text='---\nname: lint\ndescription: Project lint rules.\n---\n')
    write_skill(tmp_path / 'user', 'lint', text='---\nname: lint\ndescription: User lint rules.\n---\n')

    with pytest.warns(SkillWarning, match='shadowed by .*project/lint'):
        library = SkillLibrary.build(options=LibraryOptions(directories=[tmp_path / 'project', tmp_path / 'user']))
    assert library.skills['lint'].description == 'Project lint rules.'


def test_a_python_skill_and_a_folder_skill_with_one_name_conflict(tmp_path: Path) -> None:
    write_skill(tmp_path, 'lint', text='---\nname: lint\ndescription: Lint.\n---\n')
    with pytest.raises(SkillConflictError, match=r"the Python skill 'lint' and the folder .* share a name"):
        SkillLibrary.build([Skill('lint', 'Python lint.')], LibraryOptions(directories=[tmp_path]))


def test_a_directory_that_is_itself_a_skill_folder_is_accepted(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, 'solo', text='---\nname: solo\ndescription: Alone.\n---\n')
    library = SkillLibrary.build(options=LibraryOptions(directories=[folder]))
    assert list(library.skills) == ['solo']
    assert library.refresh() is False
    (folder / 'SKILL.md').write_text('---\nname: solo\ndescription: Alone, edited.\n---\n', encoding='utf-8')
    assert library.refresh() is True
    assert library.skills['solo'].description == 'Alone, edited.'


def test_a_folder_skill_gets_its_toolset_when_a_tool_is_added(tmp_path: Path) -> None:
    skill = Skill.from_folder(write_skill(tmp_path, 'dice', text='---\nname: dice\ndescription: Roll dice.\n---\n'))
    assert skill.tool_names == []

    @skill.tool_plain
    def roll() -> int:  # pyright: ignore[reportUnusedFunction]
        return 4

    assert (skill.toolset.id, skill.tool_names) == ('skillshelf.dice', ['roll'])


def test_the_body_is_read_when_the_skill_is_loaded_not_when_it_is_discovered(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, 'lazy', text='---\nname: lazy\ndescription: Lazy.\n---\nOld body.\n')
    skill = Skill.from_folder(folder)
    (folder / 'SKILL.md').write_text('---\nname: lazy\ndescription: Lazy.\n---\nNew body.\n', encoding='utf-8')
    assert skill.load_instructions() == 'New body.'


def test_resources_are_listed_sorted_without_hidden_files_and_read_safely(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path,
        'docs',
        text='---\nname: docs\ndescription: Docs.\n---\n',
        files={'b/two_md': 'two', 'a_md': 'one', '.secret': 'hidden'},
    )
    skill = Skill.from_folder(folder)
    assert skill.list_resources() == ['a_md', 'b/two_md']
    assert skill.read_resource('b/two_md') == 'two'
    assert skill.read_resource('./b//two_md') == 'two'


def test_python_skill_names_follow_the_same_rules() -> None:
    with pytest.raises(SkillFormatError, match="skill 'Bad Name': the name 'Bad Name' has upper-case letters"):
        Skill('Bad Name', 'x')
    with pytest.raises(SkillFormatError, match='the description is empty'):
        Skill('fine', ' ')


FRONTMATTER_SHAPES = [
    'name: a\ndescription: plain',
    'name: a\ndescription: "quoted: with colon"\nmetadata:\n  author: x\n  tags: [one, two]',
    'name: a\ndescription: >\n  folded\n  text\nlist:\n  - one\n  - two: 2\n    three: 3',
    'base: &b {x: 1}\nuse: *b\nname: a',
    'name: a\nname: b',
    'name: a\nwhen: 2024-13-45',
    'nested:\n  a:\n    b:\n      c:\n        d: deep',
    '- - - - - x',
    '[' * 14 + ']' * 14,
]


@pytest.mark.parametrize('text', FRONTMATTER_SHAPES)
def test_the_pure_python_fallback_reads_common_frontmatter_as_libyaml_does(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without libyaml (a PyYAML built without it), the same guarded loader runs on the pure-Python parser."""
    assert guarded_yaml._BASE_LOADER is yaml.CSafeLoader  # pyright: ignore[reportPrivateUsage]

    def outcome() -> object:
        try:
            return ('value', guarded_yaml.load(text))
        except Exception as error:
            return ('error', type(error).__name__)

    with_libyaml = outcome()
    monkeypatch.setattr(guarded_yaml, '_BASE_LOADER', yaml.SafeLoader)
    monkeypatch.setattr(guarded_yaml, '_LOADER', guarded_yaml._loader_class(yaml.SafeLoader))  # pyright: ignore[reportPrivateUsage]
    assert outcome() == with_libyaml


@pytest.mark.parametrize(
    'deep',
    [
        'm: ' + '[' * 30_000 + ']' * 30_000,
        'm: ' + '{a: ' * 5_000 + '1' + '}' * 5_000,
        ''.join(f'{" " * level}k{level}:\n' for level in range(40)) + ' ' * 40 + 'v: 1',
        '- ' * 40 + 'x',
        '- ' * 20 + '[' * 20 + ']' * 20,
    ],
)
def test_deep_nesting_is_refused_before_anything_is_built(deep: str) -> None:
    # libyaml's composer recurses on the C stack: 30,000 brackets used to crash the process.
    with pytest.raises(guarded_yaml.YAMLRefusedError, match=f'nested more than {guarded_yaml.MAX_YAML_DEPTH} levels'):
        guarded_yaml.load(deep)


def test_a_parser_that_refuses_nesting_itself_still_gives_our_message(monkeypatch: pytest.MonkeyPatch) -> None:
    # PyYAML 6.0.4's libyaml scanner refuses deep flow nesting on its own, with its own wording, before the walk
    # reaches our limit; any parser may. Here a parser stops with its own error after a few brackets.
    class RefusesEarly(yaml.SafeLoader):
        def get_event(self) -> Any:
            if self.get_mark().index > 40:
                raise yaml.MarkedYAMLError(problem='some wording of its own', problem_mark=self.get_mark())
            return super().get_event()

    monkeypatch.setattr(guarded_yaml, '_BASE_LOADER', RefusesEarly)
    with pytest.raises(guarded_yaml.YAMLRefusedError, match=f'nested more than {guarded_yaml.MAX_YAML_DEPTH} levels'):
        guarded_yaml.load('m: ' + '[' * 300 + ']' * 300)
    with pytest.raises(yaml.YAMLError, match='some wording of its own'):  # not a nesting problem: its error stands
        guarded_yaml.load('m: [' + '[1], ' * 40 + ']')


def test_nesting_up_to_the_limit_is_read() -> None:
    limit = guarded_yaml.MAX_YAML_DEPTH
    # The root mapping is level 1 and the innermost scalar level `limit`.
    assert guarded_yaml.load('m: ' + '[' * (limit - 2) + '1' + ']' * (limit - 2)) is not None
    with pytest.raises(guarded_yaml.YAMLRefusedError):
        guarded_yaml.load('m: ' + '[' * (limit - 1) + '1' + ']' * (limit - 1))


# Bodies far larger than a frontmatter may be.
@pytest.mark.parametrize('body', ['plain words ' * 20_000, 'é' * 100_000, '日本語の説明' * 12_000, '🙂x' * 40_000])
@pytest.mark.parametrize('max_chars', [1, 4_097, 10_000])
def test_the_start_of_a_body_reads_as_the_start_of_the_whole_body(tmp_path: Path, body: str, max_chars: int) -> None:
    skill = Skill.from_folder(write_skill(tmp_path, 'demo', text=f'---\nname: demo\ndescription: Demo.\n---\n{body}\n'))
    assert skill.load_instructions(max_chars) == skill.load_instructions()[:max_chars]
    assert len(skill.load_instructions(max_chars)) == max_chars


BODY_CHARACTERS = st.sampled_from(list('ab \n\r\t\u3000\u00a0é日🙂-'))


@settings(max_examples=200, deadline=None)
@given(st.lists(BODY_CHARACTERS, max_size=60).map(''.join), st.integers(1, 40))
def test_a_body_is_the_text_after_the_closing_line_stripped(
    tmp_path_factory: pytest.TempPathFactory, body: str, wanted: int
) -> None:
    folder = tmp_path_factory.mktemp('skills') / 'demo'
    folder.mkdir()
    skill_file = folder / 'SKILL.md'
    skill_file.write_bytes(f'---\r\nname: demo\r\ndescription: Demo.\r\n---\r\n{body}'.encode())
    whole = body.replace('\r\n', '\n').strip() if '\r' not in body.replace('\r\n', '') else None
    if whole is not None:
        assert read_body(skill_file).replace('\r\n', '\n') == whole
    assert read_body(skill_file, wanted) == read_body(skill_file)[:wanted]


class ShortReads:
    """The `os` module as `skillshelf.files` sees it, with reads that return at most a few bytes, as a network or
    FUSE file system may."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.calls = 0

    def read(self, descriptor: int, length: int) -> bytes:
        self.calls += 1
        return os.read(descriptor, min(length, self.most))

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)


def test_short_reads_give_the_same_frontmatter_and_body(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = ''.join(f'Step {n}: do the thing, then check it. 数据 {n}\n' for n in range(3000))  # > 64 KB
    folder = write_skill(tmp_path, 'long', text=f'---\nname: long\ndescription: A long skill.\n---\n\n{body}')
    expected = (read_frontmatter(folder / 'SKILL.md'), read_body(folder / 'SKILL.md'))
    short = ShortReads(most=4093)
    monkeypatch.setattr(skillshelf.files, 'os', short)

    assert (read_frontmatter(folder / 'SKILL.md'), read_body(folder / 'SKILL.md')) == expected
    assert expected[1] == body.strip()
    assert short.calls > len(body.encode()) // 4093  # the whole body came through the short reads


@pytest.mark.parametrize(
    ('field', 'patterns'),
    [
        (
            'allowed-tools: Bash(git:*) Bash(jq:*) Read',
            ['Bash(git:*)', 'Bash(jq:*)', 'Read'],
        ),  # the Agent Skills format
        ('allowed-tools: get_forecast, read_file', ['get_forecast', 'read_file']),  # Claude Code's commas
        ('allowed-tools: Read,Grep,Glob', ['Read', 'Grep', 'Glob']),
        (
            'allowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*)',
            ['Bash(git add:*)', 'Bash(git status:*)', 'Bash(git commit:*)'],
        ),
        (
            'allowed-tools: "Bash(npm run test, lint) WebFetch(domain:example.com)"',
            ['Bash(npm run test, lint)', 'WebFetch(domain:example.com)'],
        ),
        (
            'allowed-tools:\n  - Read\n  - Bash(git add:*)\n  - mcp__github__create_issue',
            ['Read', 'Bash(git add:*)', 'mcp__github__create_issue'],
        ),
        ('allowed-tools: [Read, Write, "Bash(ls -la:*)"]', ['Read', 'Write', 'Bash(ls -la:*)']),
        (
            'allowed-tools: >-\n  Read Grep\n  Bash(python scripts/fill.py:*)',
            ['Read', 'Grep', 'Bash(python scripts/fill.py:*)'],
        ),
        ('allowed-tools: Bash(git add:*', ['Bash(git add:*']),  # unclosed: kept whole, not split or dropped
        ('allowed-tools: " , "', []),
        ('allowed-tools:', []),
    ],
)
def test_allowed_tools_are_split_on_spaces_or_commas_outside_parentheses(
    tmp_path: Path, field: str, patterns: list[str]
) -> None:
    folder = tmp_path / 'demo'
    folder.mkdir()
    (folder / 'SKILL.md').write_text(
        f'---\nname: demo\ndescription: Shows demos.\n{field}\n---\nBody.\n', encoding='utf-8'
    )

    assert list(read_frontmatter(folder / 'SKILL.md').allowed_tools) == patterns
    assert Skill.from_folder(folder).metadata.get('allowed-tools', []) == patterns
