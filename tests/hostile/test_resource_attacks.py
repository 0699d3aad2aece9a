"""`read_skill_resource` attacks: no path a model sends reads anything outside the skill's own folder.

The attacks run through a real agent run (the model loads the skill, then fires every attack in one
response), and a hypothesis property throws generated paths at the resolver.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import LibraryOptions, ResourceError, Skill, SkillLibrary, Skills, SkillWarning
from skillshelf.capability.meta_tools import MAX_PAGED_BYTES
from skillshelf.content.base import MAX_LISTED_RESOURCES
from skillshelf.content.folder import (
    MAX_RESOURCE_DEPTH,
    hold_skill_folder,
    list_folder_resources,
    read_folder_resource,
)
from skillshelf.content.paths import MAX_PATH_CHARACTERS
from skillshelf.files import FolderChangedError, HardLinkedFileError, ReadPolicy, read_beneath
from skillshelf.markdown.frontmatter import SKILL_FILE

from folder_swaps import delete, swap_for_another_folder, swap_for_outside_link, swap_for_relative_outside_link
from reliability.ledger import case, example
from skill_files import write_skill

AREA = 'Resource reads'
SECRET = 'TOP-SECRET-4242'
NOTES = 'Inside notes: measure twice.'


def make_library(base: Path) -> Path:
    """`base/lib/demo` (the attacked skill), `base/lib/other` (a sibling), and secrets around them."""
    library = base / 'lib'
    files = {'notes.md': NOTES, 'sub/deep.md': 'Deep notes.', '.env': f'TOKEN={SECRET}', 'sub/.hidden': SECRET}
    demo = write_skill(library, 'demo', 'Read notes.md.', description='Demo skill.', files=files)
    (demo / 'inner-link.md').symlink_to('notes.md')
    write_skill(library, 'other', 'x', description='Other.', files={'notes.md': SECRET})
    (base / 'secret.txt').write_text(SECRET, 'utf-8')
    (library / 'secret.txt').write_text(SECRET, 'utf-8')
    (base / 'outside').mkdir()
    (base / 'outside' / 'secret.txt').write_text(SECRET, 'utf-8')
    (demo / 'escape.md').symlink_to(base / 'secret.txt')
    (demo / 'escape-dir').symlink_to(base / 'outside', target_is_directory=True)
    (demo / 'loop').symlink_to('loop')
    (demo / 'blob.bin').write_bytes(b'\x89PNG\r\n\x1a\n\x00\x00' + bytes(range(256)))
    (demo / 'latin1.txt').write_bytes('caf\xe9'.encode('latin-1'))
    (demo / 'huge.md').write_text('x' * (MAX_PAGED_BYTES + 1), 'utf-8')
    if hasattr(os, 'mkfifo'):
        os.mkfifo(demo / 'pipe.md')
    return library


@pytest.fixture
def library(tmp_path: Path) -> Path:
    return make_library(tmp_path)


# (attack, path the model sends, fragment the refusal must contain)
ATTACKS: list[tuple[str, str, str]] = [
    ('parent escape `..`', '../secret.txt', 'is not a path inside the skill folder'),
    ('parent escape after a real folder', 'sub/../../secret.txt', 'is not a path inside the skill folder'),
    ('parent escape into a sibling skill', '../other/notes.md', 'is not a path inside the skill folder'),
    ('deep parent escape', '../../../../../../etc/passwd', 'is not a path inside the skill folder'),
    ('absolute POSIX path', '/etc/passwd', 'is not a path relative to the skill folder'),
    ('absolute path to the secret', '{base}/secret.txt', 'is not a path relative to the skill folder'),
    ('home directory `~`', '~/.ssh/id_rsa', 'is not a path relative to the skill folder'),
    ("another user's home `~root`", '~root/.bashrc', 'is not a path relative to the skill folder'),
    ('Windows separators `..\\`', '..\\..\\secret.txt', 'is not a path inside the skill folder'),
    ('Windows drive path', 'C:\\Windows\\win.ini', 'is not a path relative to the skill folder'),
    ('Windows drive-relative path', 'C:secret.txt', 'is not a path relative to the skill folder'),
    ('UNC path', '\\\\server\\share\\secret.txt', 'is not a path relative to the skill folder'),
    ('URL-encoded `../`', '%2e%2e%2fsecret.txt', "no resource '%2e%2e%2fsecret.txt'"),
    ('URL-encoded dots, real slash', '%2e%2e/secret.txt', "no resource '%2e%2e/secret.txt'"),
    ('double URL-encoded', '%252e%252e%252fsecret.txt', 'no resource'),
    ('file:// URL', 'file:///etc/passwd', 'no resource'),
    ('fullwidth `．．／` (NFKC folds to ../)', '．．／secret.txt', 'is not a path inside the skill folder'),
    ('two-dot leader `‥` (NFKC folds to ..)', '‥/secret.txt', 'is not a path inside the skill folder'),
    ('fullwidth backslash `＼`', '..＼secret.txt', 'is not a path inside the skill folder'),
    ('division slash `∕` look-alike', '..∕secret.txt', 'is a hidden file'),
    ('division slash look-alike mid-path', 'sub∕..∕..∕secret.txt', 'no resource'),
    ('NUL byte truncation', 'notes.md\x00../../secret.txt', 'the path contains a NUL byte'),
    ('empty path', '', 'the path is empty'),
    ('whitespace path', ' \t ', 'the path is empty'),
    ('overlong path', 'a/' * (MAX_PATH_CHARACTERS // 2 + 1), f'the limit is {MAX_PATH_CHARACTERS:,}'),
    ('hidden file `.env`', '.env', 'is a hidden file'),
    ('hidden file in a sub-folder', 'sub/.hidden', 'is a hidden file'),
    ('symlink inside the skill to a file outside', 'escape.md', 'points outside the skill folder'),
    ('symlinked directory inside the skill to outside', 'escape-dir/secret.txt', 'points outside the skill folder'),
    ('symlink loop', 'loop', 'cannot'),
    ('binary file', 'blob.bin', 'is a binary file (266 bytes); only text resources can be read'),
    ('non-UTF-8 text', 'latin1.txt', 'is not UTF-8 text; only text resources can be read'),
    (
        'oversized file',
        'huge.md',
        f'is {MAX_PAGED_BYTES + 1:,} bytes, over the {MAX_PAGED_BYTES:,}-byte limit for one read',
    ),
    ('missing file', 'nope.md', "no resource 'nope.md'"),
]
if hasattr(os, 'mkfifo'):
    ATTACKS.append(('FIFO (would block a plain read)', 'pipe.md', 'is not a file'))

ALLOWED: list[tuple[str, str, str]] = [
    ('plain relative path', 'notes.md', NOTES),
    ('`./` and doubled slashes', './sub//deep.md', 'Deep notes.'),
    ('Windows separators inside the folder', 'sub\\deep.md', 'Deep notes.'),
    ('symlink that stays inside the skill', 'inner-link.md', NOTES),
    ('`..` that stays inside (`sub/../notes.md`)', 'sub/../notes.md', '<refused>'),
]


def run_attacks(capability: Skills[Any], paths: list[str]) -> tuple[dict[str, str], list[ModelMessage]]:
    """Load `demo`, then send every path in one response (tool calls run concurrently); returns path -> reply."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('load_skill', {'name': 'demo'})])
        if len(messages) == 3:
            return ModelResponse(
                parts=[
                    ToolCallPart('read_skill_resource', {'name': 'demo', 'path': path}, tool_call_id=f'attack-{index}')
                    for index, path in enumerate(paths)
                ]
            )
        return ModelResponse(parts=[TextPart('done')])

    result = Agent(FunctionModel(respond), capabilities=[capability]).run_sync('read everything')
    assert result.output == 'done'
    replies = {
        paths[int(part.tool_call_id.removeprefix('attack-'))]: str(part.content)
        for message in result.all_messages()
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_call_id.startswith('attack-')
    }
    assert len(replies) == len(paths)
    return replies, result.all_messages()


def test_every_path_attack_is_refused_in_a_real_run(library: Path, tmp_path: Path) -> None:
    paths = [path.replace('{base}', str(tmp_path)) for _, path, _ in ATTACKS]
    done = threading.Event()
    replies: dict[str, str] = {}
    messages: list[ModelMessage] = []

    def attack() -> None:
        nonlocal replies, messages
        replies, messages = run_attacks(Skills(library), paths)
        done.set()

    thread = threading.Thread(target=attack, daemon=True)
    thread.start()
    thread.join(60)
    assert done.is_set(), 'the run did not finish (a read blocked?)'

    assert SECRET not in repr(messages), 'a secret reached the model'
    for (attack_name, _, refusal), path in zip(ATTACKS, paths, strict=True):
        reply = replies[path]
        assert reply.startswith('Cannot read '), (attack_name, reply)
        assert refusal in reply, (attack_name, reply)
        assert 'Its resources are: ' in reply, 'the refusal lists what can be read'
        shown = reply.split(' Its resources are: ', 1)[0] + ' (then lists the files it can read)'
        case(AREA, attack_name, shown.replace(str(tmp_path), '<tmp>'), root=tmp_path)


def test_a_folder_path_lists_only_the_files_the_skill_lists_in_a_real_run(library: Path) -> None:
    listed = Skill.from_folder(library / 'demo').list_resources()
    replies, _ = run_attacks(Skills(library), ['.', 'sub', './sub/', 'escape-dir'])
    assert replies['.'] == f'{len(listed)} files in the skill:\n' + '\n'.join(listed) + '\n'
    assert replies['sub'] == replies['./sub/'] == '1 file in the folder sub/:\nsub/deep.md\n'
    assert replies['escape-dir'].startswith('Cannot read '), 'a folder the skill does not list is no folder of it'
    case(AREA, 'a folder of the skill (`.`, `sub`)', 'lists the files the skill lists beneath it, nothing else')


@pytest.mark.parametrize(('name', 'path', 'content'), ALLOWED, ids=[name for name, _, _ in ALLOWED])
def test_legitimate_paths_still_read(library: Path, name: str, path: str, content: str) -> None:
    skill = Skill.from_folder(library / 'demo')
    if content == '<refused>':
        with pytest.raises(ResourceError, match='is not a path inside the skill folder') as refused:
            skill.read_resource(path)
        case(AREA, name, f'refused all the same (no `..` at all): {refused.value}')
    else:
        assert skill.read_resource(path) == content
        case(AREA, name, 'read')


def test_listing_shows_only_regular_inside_files(library: Path) -> None:
    skill = Skill.from_folder(library / 'demo')

    listed = skill.list_resources()

    assert listed == ['blob.bin', 'huge.md', 'inner-link.md', 'latin1.txt', 'notes.md', 'sub/deep.md']
    case(AREA, 'listing a folder with hidden files, outside links, loops and FIFOs', 'lists only: ' + ', '.join(listed))


def test_a_file_swapped_for_an_outside_symlink_after_discovery_is_refused(library: Path, tmp_path: Path) -> None:
    skill = Skill.from_folder(library / 'demo')
    assert skill.read_resource('notes.md') == NOTES
    (library / 'demo' / 'notes.md').unlink()
    (library / 'demo' / 'notes.md').symlink_to(tmp_path / 'secret.txt')

    with pytest.raises(ResourceError, match=r"'notes\.md' points outside the skill folder") as refused:
        skill.read_resource('notes.md')
    assert 'notes.md' not in skill.list_resources()
    case(AREA, 'file swapped for an outside symlink after discovery', f'refused: {refused.value}')


def test_a_skill_folder_swapped_for_an_outside_symlink_after_discovery_is_refused(
    library: Path, tmp_path: Path
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', SkillWarning)
        built = SkillLibrary.build(options=LibraryOptions(directories=[library]))
    skill = built.skills['demo']
    shutil.rmtree(library / 'demo')
    (tmp_path / 'outside' / 'notes.md').write_text(SECRET, 'utf-8')
    (library / 'demo').symlink_to(tmp_path / 'outside', target_is_directory=True)

    with pytest.raises(ResourceError, match='now points outside its library directory') as refused:
        skill.read_resource('notes.md')
    assert skill.list_resources() == []
    case(AREA, 'skill folder swapped for a symlink to outside after discovery', f'refused: {refused.value}')


def test_a_python_skill_refuses_the_same_paths() -> None:
    skill = Skill('inline', 'Inline.', resources={'a.md': 'A'})

    assert skill.read_resource('./a.md') == 'A'
    for path in ('../a.md', '/a.md', '~/a.md', '.a.md', 'a.md\x00'):
        with pytest.raises(ResourceError):
            skill.read_resource(path)
    case(AREA, 'Python skill resources with `..`, absolute, `~`, hidden and NUL paths', 'refused, like folder skills')


def test_reading_a_skill_that_is_not_loaded_is_refused(library: Path) -> None:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('read_skill_resource', {'name': 'other', 'path': 'notes.md'})])
        return ModelResponse(parts=[TextPart('done')])

    result = Agent(FunctionModel(respond), capabilities=[Skills(library)]).run_sync('peek')

    assert SECRET not in repr(result.all_messages())
    [reply] = [
        part.content
        for message in result.all_messages()
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    assert reply == "The skill 'other' is not loaded: call `load_skill` with 'other' first, then read its files."
    case(AREA, "reading another skill's file without loading it", str(reply))


def test_instructions_and_resources_are_data_not_templates(tmp_path: Path) -> None:
    body = 'Run $(rm -rf ~) and `id`; use ${HOME}, $ARGUMENTS, {name}, {{ 7*7 }}, {% if x %}, %(x)s and !`cmd`.'
    folder = tmp_path / 'lib' / 'demo'
    folder.mkdir(parents=True)
    (folder / 'SKILL.md').write_text(f"---\nname: demo\ndescription: '{{x}} $HOME'\n---\n{body}\n", 'utf-8')
    (folder / 'notes.md').write_text(body, 'utf-8')
    skill = Skill.from_folder(folder)

    assert skill.description == '{x} $HOME'
    assert skill.load_instructions() == body
    assert skill.read_resource('notes.md') == body
    case(
        AREA,
        'shell, template and format syntax in instructions and resources',
        'returned verbatim: no shell expansion, no template or format evaluation',
    )


SEGMENTS = st.sampled_from(
    [
        *['..', '.', '', 'notes.md', 'sub', 'deep.md', 'secret.txt', 'other', 'lib', 'escape.md', 'escape-dir', '~'],
        *[
            '.env',
            '%2e%2e',
            '．．',
            '‥',
            '\x00',
            'C:',
            '\\',
            '/',
            '＼',
            '／',
            '\u2024',
            '\u0307',
            ' ',
            'loop',
            'inner-link.md',
        ],
    ]
)


@settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=600,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    path=st.one_of(
        st.lists(SEGMENTS, max_size=8).map('/'.join),
        st.lists(SEGMENTS, max_size=8).map(''.join),
        st.text(max_size=30),
    )
)
def test_no_generated_path_reads_outside_the_skill(
    shared_library: tuple[Skill[Any], dict[str, str]], path: str
) -> None:
    skill, inside = shared_library
    try:
        text = skill.read_resource(path)
    except ResourceError as error:
        message = str(error)
        assert SECRET not in message
        kind = 'refused: ' + _refusal_kind(message)
    else:
        assert text in inside.values(), f'{path!r} read something that is not a file of the skill'
        kind = 'read a file inside the skill'
    example(
        'resource-paths',
        'Any model-sent path (`..`, `~`, drives, `%2e`, look-alike dots and slashes, NUL, hidden, links) reads a '
        'file inside the skill or is refused with a message; never a byte from outside',
        kind,
    )


def _refusal_kind(message: str) -> str:
    for needle in (
        *('not a path inside', 'not a path relative', 'hidden', 'NUL', 'empty', 'points outside', 'no resource'),
        *('is not a file', 'cannot be resolved', 'cannot be read', 'binary', 'not UTF-8', 'limit'),
    ):
        if needle in message:
            return needle
    return 'other'


@pytest.fixture(scope='module')
def shared_library() -> Iterator[tuple[Skill[Any], dict[str, str]]]:
    with tempfile.TemporaryDirectory() as directory:
        library = make_library(Path(directory))
        skill = Skill.from_folder(library / 'demo')
        inside = {
            path: (library / 'demo' / path).read_text('utf-8', errors='replace')
            for path in ['notes.md', 'sub/deep.md', 'SKILL.md']
        }
        yield skill, inside


def test_a_skill_folder_nested_1100_levels_deep_loads_without_exhausting_the_stack(tmp_path: Path) -> None:
    folder = tmp_path / 'lib' / 'demo'
    folder.mkdir(parents=True)
    (folder / 'SKILL.md').write_text('---\nname: demo\ndescription: Deep.\n---\nBody.\n', 'utf-8')
    (folder / 'top.md').write_text('top', 'utf-8')
    deep = folder
    for _ in range(1100):  # os.walk recursed once per level and raised RecursionError
        deep = deep / 'd'
        deep.mkdir()
    (deep / 'bottom.md').write_text('bottom', 'utf-8')

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('load_skill', {'name': 'demo'})])
        return ModelResponse(parts=[TextPart('done')])

    try:
        result = Agent(FunctionModel(respond), capabilities=[Skills(tmp_path / 'lib')]).run_sync('go')
        listed = Skill.from_folder(folder).list_resources()
    finally:  # remove bottom-up: pytest's recursive temp-dir cleanup would hit the recursion limit too
        (deep / 'bottom.md').unlink()
        while deep != folder:
            deep.rmdir()
            deep = deep.parent

    assert result.output == 'done'
    assert listed == ['top.md']
    case(
        AREA,
        'a skill folder nested 1,100 levels deep (crashed the run with RecursionError)',
        f'loads; listing stops at {MAX_RESOURCE_DEPTH} levels: top.md',
    )


def test_a_skill_folder_with_thousands_of_files_lists_a_bounded_number(tmp_path: Path) -> None:
    folder = tmp_path / 'demo'
    folder.mkdir()
    (folder / 'SKILL.md').write_text('---\nname: demo\ndescription: Wide.\n---\n', 'utf-8')
    for index in range(2000):
        (folder / f'f{index:04}.md').write_text('x', 'utf-8')

    listed = Skill.from_folder(folder).list_resources()

    assert listed == [f'f{index:04}.md' for index in range(MAX_LISTED_RESOURCES)]
    case(AREA, 'a skill folder with 2,000 files', f'lists the first {MAX_LISTED_RESOURCES} in sorted order')


def test_file_names_that_are_not_utf8_never_reach_the_model(tmp_path: Path) -> None:
    folder = tmp_path / 'lib' / 'demo'
    folder.mkdir(parents=True)
    (folder / 'SKILL.md').write_text('---\nname: demo\ndescription: Names.\n---\nBody.\n', 'utf-8')
    (folder / 'ok.md').write_text('ok', 'utf-8')
    (folder / os.fsdecode(b'caf\xe9.md')).write_text('latin-1 name', 'utf-8')

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('load_skill', {'name': 'demo'})])
        return ModelResponse(parts=[TextPart('done')])

    result = Agent(FunctionModel(respond), capabilities=[Skills(tmp_path / 'lib')]).run_sync('go')

    [loaded] = [
        part.model_response_str()
        for message in result.all_messages()
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    loaded.encode('utf-8')  # a lone surrogate here would make every provider request fail to encode
    assert 'Files (read with `read_skill_resource`): ok.md.' in loaded
    case(
        AREA,
        'a resource whose file name is not valid UTF-8',
        'left out of the listing, so no undecodable text reaches the model request',
    )


@st.composite
def skill_trees(draw: st.DrawFn) -> list[tuple[str, str, str]]:
    """Entries (kind, relative path, target) for a skill folder: files, hidden files, sub-folders and symlinks
    pointing inside, outside, to folders, to nothing and to themselves."""
    names = st.sampled_from(['a.md', 'b.txt', '.hidden', 'sub', 'deep', 'x.md', 'link', 'dir-link'])
    entries: list[tuple[str, str, str]] = []
    for _ in range(draw(st.integers(1, 10))):
        parent = draw(st.sampled_from(['', 'sub/', 'sub/deep/']))
        kind = draw(st.sampled_from(['file', 'file', 'dir', 'link-in', 'link-out', 'link-dir-out', 'dangling', 'loop']))
        entries.append((kind, parent + draw(names), draw(st.sampled_from(['a.md', 'sub/x.md', 'sub']))))
    return entries


@settings(
    derandomize=True, database=None, deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow]
)
@given(entries=skill_trees())
def test_every_listed_resource_is_inside_and_every_inside_file_is_listed(entries: list[tuple[str, str, str]]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        base = Path(directory)
        (base / 'outside').mkdir()
        (base / 'outside' / 'secret.md').write_text(SECRET, 'utf-8')
        folder = base / 'lib' / 'demo'
        folder.mkdir(parents=True)
        (folder / 'SKILL.md').write_text('---\nname: demo\ndescription: Tree.\n---\n', 'utf-8')
        for kind, relative, target in entries:
            path = folder / relative
            if os.path.lexists(path):
                continue
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except (FileExistsError, NotADirectoryError):
                continue  # a file already sits where a folder is wanted
            if kind == 'file':
                path.write_text(f'inside {relative}', 'utf-8')
            elif kind == 'dir':
                path.mkdir()
            elif kind == 'link-in':
                path.symlink_to(folder / target)
            elif kind == 'link-out':
                path.symlink_to(base / 'outside' / 'secret.md')
            elif kind == 'link-dir-out':
                path.symlink_to(base / 'outside', target_is_directory=True)
            elif kind == 'dangling':
                path.symlink_to(base / 'missing')
            else:
                path.symlink_to(path.name)
        skill = Skill.from_folder(folder)

        listed = skill.list_resources()

        expected = sorted(
            path.relative_to(folder).as_posix()
            for path in folder.rglob('*')
            if path.is_file()
            and not path.is_symlink()
            and path.name != 'SKILL.md'
            and not any(part.startswith('.') for part in path.relative_to(folder).parts)
            and not any(parent.is_symlink() for parent in path.relative_to(folder).parents if str(parent) != '.')
        )
        real_files = [name for name in listed if not (folder / name).is_symlink()]
        assert sorted(real_files) == expected, 'a regular file inside the skill is missing from the listing'
        for name in listed:
            text = skill.read_resource(name)
            assert SECRET not in text
            assert text.startswith('inside ')
    example(
        'resource-listing',
        'Any skill folder tree (files, hidden files, sub-folders, symlinks inside, outside, to folders, dangling, '
        'looping): every listed resource reads back from inside the skill and every regular inside file is listed',
        'nothing listed' if not listed else f'{min(len(listed), 4)}{"+" if len(listed) >= 4 else ""} listed',
    )


# --- Issue 23, classes 2 and 7: reads held to the folder discovery accepted, with no race -----------------------


def swap_for_sibling_link(folder: Path, outside: Path) -> None:
    shutil.rmtree(folder)
    folder.symlink_to('other', target_is_directory=True)


# (what happens to `lib/demo` after it was held, the function doing it, what the refusal says it became)
FOLDER_SWAPS = [
    ('swapped for a symlink to an outside folder', swap_for_outside_link, 'it now points outside its library'),
    ('swapped for a relative symlink `../outside`', swap_for_relative_outside_link, 'it now points outside its'),
    ('swapped for a symlink to a sibling skill', swap_for_sibling_link, 'it is now a symlink to another folder'),
    (
        'replaced by another real folder with the same names',
        swap_for_another_folder,
        'it was replaced by another folder',
    ),
    ('deleted', delete, 'it was deleted or moved'),
]


@pytest.mark.parametrize(('name', 'swap', 'change'), FOLDER_SWAPS, ids=[name for name, _, _ in FOLDER_SWAPS])
def test_every_read_of_a_swapped_skill_folder_is_refused(
    library: Path, tmp_path: Path, name: str, swap: Any, change: str
) -> None:
    outside = tmp_path / 'outside'
    (outside / 'SKILL.md').write_text(f'---\nname: demo\ndescription: x\n---\n{SECRET}\n', 'utf-8')
    (outside / 'notes.md').write_text(SECRET, 'utf-8')
    held = hold_skill_folder(library / 'demo')
    assert read_beneath(held, [SKILL_FILE], 4096).endswith(b'Read notes.md.\n')

    swap(library / 'demo', outside)

    with pytest.raises(ResourceError, match='the skill folder changed after the library was read') as refused:
        read_folder_resource(held, 'notes.md')
    assert change in str(refused.value)
    assert str(tmp_path) not in str(refused.value)
    assert list_folder_resources(held) == []
    with pytest.raises(FolderChangedError):  # what the `SKILL.md` reader gets for `load_skill`
        read_beneath(held, [SKILL_FILE], 4096)
    case(AREA, f'skill folder {name} after discovery', f'SKILL.md and resources refused: {refused.value}')


def test_a_symlinked_skill_folder_inside_the_library_is_held_and_one_outside_is_refused(
    library: Path, tmp_path: Path
) -> None:
    (library / 'alias').symlink_to('demo', target_is_directory=True)
    (library / 'away').symlink_to(tmp_path / 'outside', target_is_directory=True)

    held = hold_skill_folder(library / 'alias')

    assert read_folder_resource(held, 'sub/deep.md') == 'Deep notes.'
    assert 'notes.md' in list_folder_resources(held)
    with pytest.raises(ResourceError, match='now points outside its library directory') as refused:
        hold_skill_folder(library / 'away')
    assert hold_skill_folder(tmp_path / 'outside', check_containment=False).path == str(tmp_path / 'outside')
    case(AREA, 'skill folder that is a symlink to outside its library', f'not accepted: {refused.value}')


def race(swap_once: Any, read_once: Any, reads: int) -> Counter[str]:
    """Run `swap_once` in a tight loop on another thread while this one calls `read_once` `reads` times; the
    reads start after the first swap, and every outcome is counted."""
    started, stop = threading.Event(), threading.Event()
    swaps = 0

    def swapper() -> None:
        nonlocal swaps
        while not stop.is_set():
            swap_once()
            swaps += 1
            started.set()

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    outcomes: Counter[str] = Counter()
    try:
        assert started.wait(30)
        for _ in range(reads):
            outcomes[read_once()] += 1
    finally:
        stop.set()
        thread.join(30)
    assert swaps > 0
    return outcomes


RACE_READS = 2_000


@pytest.mark.parametrize('link', ['absolute', 'relative'])
def test_an_intermediate_folder_swapped_for_an_outside_link_in_a_race_never_serves_outside_bytes(
    library: Path, tmp_path: Path, link: str
) -> None:
    demo = library / 'demo'
    (demo / 'sub' / 'file.md').write_text('inside', 'utf-8')
    (tmp_path / 'outside' / 'file.md').write_text(SECRET, 'utf-8')
    target = tmp_path / 'outside' if link == 'absolute' else Path('..', '..', 'outside')
    held = hold_skill_folder(demo)

    def swap_once() -> None:
        (demo / 'sub').rename(demo / '.parked')
        (demo / 'sub').symlink_to(target, target_is_directory=True)
        (demo / 'sub').unlink()
        (demo / '.parked').rename(demo / 'sub')

    def read_once() -> str:
        try:
            text = read_folder_resource(held, 'sub/file.md')
        except ResourceError as error:
            return 'outside' if SECRET in str(error) else 'refused'
        return 'outside' if SECRET in text else 'inside' if text == 'inside' else 'other'

    outcomes = race(swap_once, read_once, RACE_READS)

    assert outcomes['outside'] == 0, outcomes
    assert outcomes['other'] == 0, outcomes
    assert outcomes['inside'] + outcomes['refused'] == RACE_READS
    case(
        AREA,
        f'`sub/` swapped for an {link} symlink to an outside folder by a racing thread (was ~5 % outside reads)',
        f'{RACE_READS:,} racing reads of `sub/file.md`: each the inside file or a refusal, 0 outside',
    )


def test_a_skill_folder_swapped_in_a_race_never_serves_an_outside_skill_file(library: Path, tmp_path: Path) -> None:
    (tmp_path / 'outside' / 'SKILL.md').write_text(f'---\nname: demo\ndescription: x\n---\n{SECRET}\n', 'utf-8')
    demo = library / 'demo'
    held = hold_skill_folder(demo)

    def swap_once() -> None:
        demo.rename(library / '.parked')
        demo.symlink_to(tmp_path / 'outside', target_is_directory=True)
        demo.unlink()
        (library / '.parked').rename(demo)

    def read_once() -> str:
        try:
            text = read_beneath(held, [SKILL_FILE], 4096)
        except FolderChangedError:
            return 'refused'
        except FileNotFoundError:
            return 'missing'  # between the swapper's two renames the folder has no name
        return 'outside' if SECRET.encode() in text else 'inside'

    outcomes = race(swap_once, read_once, RACE_READS)

    assert outcomes['outside'] == 0, outcomes
    assert sum(outcomes.values()) == RACE_READS
    case(
        AREA,
        'the skill folder swapped for a symlink to an outside folder by a racing thread, while `SKILL.md` is read',
        f'{RACE_READS:,} racing reads: each the skill\'s own `SKILL.md` or "the skill folder changed", 0 outside',
    )


def test_a_hard_link_to_an_outside_file_is_refused_unless_allowed(library: Path, tmp_path: Path) -> None:
    demo = library / 'demo'
    os.link(tmp_path / 'secret.txt', demo / 'linked.md')
    os.link(demo / 'notes.md', demo / 'sub' / 'notes-again.md')
    held = hold_skill_folder(demo)

    with pytest.raises(ResourceError, match='has other hard links') as refused:
        read_folder_resource(held, 'linked.md')
    with pytest.raises(ResourceError, match='has other hard links'):
        read_folder_resource(held, 'notes.md')  # both names of a file linked inside the folder count
    listed = list_folder_resources(held)
    held_allowing = hold_skill_folder(demo, policy=ReadPolicy(allow_hard_links=True))
    allowed = list_folder_resources(held_allowing)

    assert 'linked.md' not in listed
    assert 'notes.md' not in listed
    assert 'sub/deep.md' in listed
    assert {'linked.md', 'notes.md', 'sub/notes-again.md'} <= set(allowed)
    assert read_folder_resource(held_allowing, 'linked.md') == SECRET
    with pytest.raises(HardLinkedFileError):
        read_beneath(held, ['linked.md'], 100)
    case(AREA, 'a hard link inside the skill to an outside file', f'refused and not listed: {refused.value}')
    case(AREA, 'the same hard link with `allow_hard_links=True`', 'read and listed, as the host asked')


# (name, links to create inside `demo` as (path, target), path the model asks for, expected text or refusal)
LINK_SHAPES: list[tuple[str, list[tuple[str, str]], str, str]] = [
    (
        'a chain of three symlinks that ends inside',
        [('a.md', 'b.md'), ('b.md', 'sub/c.md'), ('sub/c.md', 'deep.md')],
        'a.md',
        'Deep notes.',
    ),
    (
        'a chain that ends outside',
        [('a.md', 'b.md'), ('b.md', '{base}/secret.txt')],
        'a.md',
        'points outside the skill folder',
    ),
    ('`..` in a target that stays inside', [('sub/up.md', '../notes.md')], 'sub/up.md', NOTES),
    (
        '`..` in a target that climbs out',
        [('sub/out.md', '../../secret.txt')],
        'sub/out.md',
        'points outside the skill folder',
    ),
    (
        '`..` after a symlinked folder to outside',
        [('sub/x.md', '../escape-dir/../lib/demo/notes.md')],
        'sub/x.md',
        'points outside the skill folder',
    ),
    ('a symlinked folder pointing inside', [('alias', 'sub')], 'alias/deep.md', 'Deep notes.'),
    ('a symlinked folder pointing at the skill folder itself', [('self', '.')], 'self/self/notes.md', NOTES),
    (
        'a relative symlinked folder pointing outside',
        [('out', '../../outside')],
        'out/secret.txt',
        'points outside the skill folder',
    ),
    (
        'a symlinked folder pointing at the library',
        [('up', '..')],
        'up/other/notes.md',
        'points outside the skill folder',
    ),
    ('an absolute symlink to a file inside', [('abs.md', '{demo}/notes.md')], 'abs.md', NOTES),
    (
        'an absolute symlink through the library path to outside',
        [('abs.md', '{demo}/../secret.txt')],
        'abs.md',
        'points outside the skill folder',
    ),
    (
        'a chain of 41 symlinks',
        [(f'c{index}.md', f'c{index + 1}.md') for index in range(41)] + [('c41.md', 'notes.md')],
        'c0.md',
        'a symlink loop',
    ),
    ('a symlink to a folder, asked for as a file', [('dir.md', 'sub')], 'dir.md', 'is not a file'),
]


@pytest.mark.parametrize(('name', 'links', 'path', 'expected'), LINK_SHAPES, ids=[shape[0] for shape in LINK_SHAPES])
def test_symlinks_are_followed_only_while_they_stay_inside(
    library: Path, tmp_path: Path, name: str, links: list[tuple[str, str]], path: str, expected: str
) -> None:
    demo = library / 'demo'
    for link, target in links:
        (demo / link).symlink_to(target.replace('{base}', str(tmp_path)).replace('{demo}', str(demo)))
    skill = Skill.from_folder(demo)

    if expected in (NOTES, 'Deep notes.'):
        assert skill.read_resource(path) == expected
        case(AREA, f'symlinks: {name}', 'read (the walk stays inside the skill folder)')
    else:
        with pytest.raises(ResourceError, match=expected) as refused:
            skill.read_resource(path)
        assert str(tmp_path) not in str(refused.value)
        case(AREA, f'symlinks: {name}', f'refused: {refused.value}')
