"""The start-up fast paths give what the general paths give (issue 31, item 10).

- A name in ASCII gets its skeleton without the confusables table, and the same skeleton.
- A frontmatter of text fields is built from the YAML nodes: the same mapping as PyYAML's constructor, a repeated
  key still refused.
- A description or heading without any word a "not for" cue contains is not searched, and nothing changes.
- The collector paused while a library is read is on again afterwards, unless someone else paused it.
- The index cache key takes a folder skill's folder as `os.path.abspath(skill.folder)` did, without the `Path`.
- A piece without an apostrophe (after NFKC) skips the contraction search and splits into the same words.
- Discovery holds a real skill folder by opening it, and every other entry as before; no descriptor is left open.
"""

from __future__ import annotations

import gc
import os
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skillshelf import LibraryOptions, Skill, SkillLibrary, SkillWarning
from skillshelf._gc import gc_paused
from skillshelf.content import FolderContent
from skillshelf.library import confusables, index
from skillshelf.library.confusables import skeleton
from skillshelf.markdown import guarded_yaml, names
from skillshelf.ranking import negatives, tokenize, when_to_use
from skillshelf.ranking.cache import CACHE_MIN_SKILLS

from skill_files import write_skill


def test_an_ascii_skeleton_is_the_tables_without_loading_it() -> None:
    table = confusables._prototypes()  # pyright: ignore[reportPrivateUsage]
    ascii_prototypes = {ord(c): p for c, p in table.items() if len(c) == 1 and c.isascii()}  # looked up per character
    assert ascii_prototypes == confusables._ASCII_PROTOTYPES  # pyright: ignore[reportPrivateUsage]
    for code in range(128):
        name = f'a{chr(code)}b{chr(code)}'
        slow = ''.join(table.get(c, c) for c in name.casefold().replace('_', '-'))  # NFD leaves ASCII as it is
        assert skeleton(name) == slow, repr(name)

    confusables._prototypes.cache_clear()  # pyright: ignore[reportPrivateUsage]
    assert skeleton('dep1oy-TOOL') == 'deploy-tool'
    assert confusables._prototypes.cache_info().currsize == 0  # pyright: ignore[reportPrivateUsage]
    assert skeleton('ԁеplоy') == 'deploy'  # not ASCII: the table is loaded
    assert skeleton('Straße') == skeleton('strasse')  # folds to ASCII: the fast path
    assert skeleton('data_analysis') == skeleton('data-analysis')


FRONTMATTERS = [
    'name: pdf\ndescription: Fill PDF forms.\n',
    'name: pdf\ndescription: "Quoted: with a colon"\nlicense: MIT\n',
    "name: 'pdf'\ndescription: >\n  Folded\n  text.\n",
    'name: pdf\ndescription: |\n  Literal\n  text.\n',
    'name: pdf\ndescription: x\nversion: 12\n',
    'name: pdf\ndescription: x\nenabled: true\n',
    'name: pdf\ndescription: x\nempty:\n',
    'name: pdf\ndescription: x\nwhen: 2024-01-02\n',
    'name: pdf\ndescription: !!str 12\n',
    'name: pdf\ndescription: ~\n',
    'name: pdf\ndescription: x\nmetadata:\n  keywords: [a, b]\n',
    'name: &n pdf\ndescription: *n\n',
    'base: &b {name: pdf}\n<<: *b\ndescription: x\n',
    '12: twelve\nname: pdf\n',
    '- a\n- b\n',
    'just text\n',
    '',
    '# only a comment\n',
]


@pytest.mark.parametrize('text', FRONTMATTERS)
def test_guarded_yaml_builds_what_the_constructor_builds(text: str) -> None:
    expected = yaml.load(text, Loader=yaml.SafeLoader)
    loaded = guarded_yaml.load(text)
    assert loaded == expected
    assert type(loaded) is type(expected)
    if isinstance(expected, dict):
        assert list(loaded) == list(expected)  # pyright: ignore[reportUnknownArgumentType]
        assert [type(v) for v in loaded.values()] == [type(v) for v in expected.values()]  # pyright: ignore


@pytest.mark.parametrize('text', ['name: a\nname: b\n', 'name: a\ndescription: x\n"name": c\n', 'a: 1\na: 2\n'])
def test_guarded_yaml_still_refuses_a_repeated_key(text: str) -> None:
    with pytest.raises(guarded_yaml.YAMLRefusedError, match='appears twice'):
        guarded_yaml.load(text)


DESCRIPTIONS = [
    'Fill PDF forms.',
    'Fill PDF forms. Not for scanned images.',
    'Review code. NOT FOR production deploys; use deploy-check.',
    "Draft emails. Don't use for newsletters.",
    'Take notes in another notebook. Annotation helper.',
    'Plan trips. Never use for visas. Avoid using it for flights.',
    'Skip this for small repos. skip it when tired.',
    'Sort lists. ſkip this for tiny ones.',  # IGNORECASE matches ſ to s
    'Sort lists. Do not usİng it for sets.',
    'Sort lists. Do not use it\tfor sets.\nNot\tfor maps.',
    '数据分析。不适用于图像处理。',
    'Résumé writer — not intended for cover letters.',
    '',
]


@pytest.mark.parametrize('description', DESCRIPTIONS)
def test_the_cue_words_only_skip_descriptions_without_a_cue(description: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = negatives.split_description(description)
    monkeypatch.setattr(negatives, '_may_have_cue', lambda description: True)
    assert fast == negatives.split_description(description)


@pytest.mark.parametrize(
    'description', [*DESCRIPTIONS, 'Skip it when the file is huge. Avoid using it twice; ſkip it if asked.']
)
def test_the_cue_lookahead_only_skips_positions_no_cue_starts_at(description: str) -> None:
    cue = negatives._CUE  # pyright: ignore[reportPrivateUsage]
    plain = re.compile(cue.pattern.removeprefix('(?=[dnas不])'), cue.flags)
    for start in range(len(description) + 1):
        found, expected = cue.search(description, start), plain.search(description, start)
        assert (found and found.span()) == (expected and expected.span())


NOT_HEADINGS = [
    'usage\nexamples',
    'when not to use',
    "when n't to use",
    "don't trigger on",
    'when to skip',
    '1. not for',
    'anti-triggers',
    'is not for',
    'out of scope',
    '不适用场景',
    'notes\nannotations\nanother section',
]


WHEN_TO_USE_HEADINGS = [
    'usage\nexamples',
    'when to use',
    'when to reach for it',
    'use this skill when',
    'use me when',
    '2. triggers',
    'activation',
    'trigger phrases',
    '何时使用',
    '触发条件',
    '适用场景',
    'how to use\nuser stories\ntriggering events',
]


@pytest.mark.parametrize(
    ('says', 'pattern', 'titles'),
    [
        *((negatives.says_when_not_to_use, negatives._NOT_HEADING, titles) for titles in NOT_HEADINGS),  # pyright: ignore[reportPrivateUsage]
        *((when_to_use.says_when_to_use, when_to_use._WHEN_TO_USE, titles) for titles in WHEN_TO_USE_HEADINGS),  # pyright: ignore[reportPrivateUsage]
    ],
)
def test_the_heading_words_only_skip_titles_without_such_a_heading(
    says: Callable[[str], bool], pattern: re.Pattern[str], titles: str
) -> None:
    assert says(titles) == (pattern.search(titles) is not None)


def test_gc_paused_restores_the_collector() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError, match='inside'), gc_paused():
        raise ValueError('inside')
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # paused by someone else: left to them
    finally:
        gc.enable()


def test_the_cache_key_takes_the_folder_as_its_path_did(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_skill(tmp_path / 'lib', 'pdf-forms')
    monkeypatch.chdir(tmp_path)
    for spelled in ['lib/pdf-forms', 'lib/./pdf-forms/', './lib//pdf-forms', str(tmp_path / 'lib' / 'pdf-forms')]:
        skill = Skill.from_folder(spelled)
        assert skill.folder is not None
        expected = os.path.abspath(skill.folder)
        assert index._folder(skill) == expected == str(tmp_path / 'lib' / 'pdf-forms')  # pyright: ignore[reportPrivateUsage]
    assert index._folder(Skill('weather', 'Forecasts.')) is None  # pyright: ignore[reportPrivateUsage]


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from(['a', 'z', '0', '9', 'Z', '-', '_', ' ', 'é', 'ﬁ', '\u115f', '.']), max_size=70))
def test_the_plain_name_shortcut_agrees_with_every_rule(name: str) -> None:
    assert names.name_problem(name) == names._broken_rule(name)  # pyright: ignore[reportPrivateUsage]
    assert names.name_problem('a' * 64) is None
    assert names.name_problem('a' * 65) == names._broken_rule('a' * 65) is not None  # pyright: ignore[reportPrivateUsage]


@settings(max_examples=1000, deadline=None)
@given(st.text(st.sampled_from([*"ab'’ntsdlmrev", '＇', 'ʼ', '代', '码', 'É', ' ', '-', '_', '１']), max_size=30))
@example("don't")
@example('DON＇T')
@example('代码审查＇s')
def test_the_contraction_search_is_only_skipped_without_an_apostrophe(piece: str) -> None:
    normalised = piece if piece.isascii() else unicodedata.normalize('NFKC', piece).lower()
    expected = tokenize._WORD.findall(tokenize._CONTRACTION.sub(' ', normalised))  # pyright: ignore[reportPrivateUsage]
    assert tokenize._piece_words(piece) == expected  # pyright: ignore[reportPrivateUsage]


def _kept(library: SkillLibrary) -> dict[str, bytes | None]:
    """What each folder skill's `SKILL.md` holds for its next read (taken, so asking twice finds nothing)."""
    return {
        skill.name: skill.content.skill_file.take_kept()
        for skill in library.skills.values()
        if isinstance(skill.content, FolderContent)
    }


def test_discovery_hands_its_bytes_to_the_first_body_read_then_lets_them_go(tmp_path: Path, cache_dir: Path) -> None:
    root = tmp_path / 'lib'
    for number in range(CACHE_MIN_SKILLS):  # enough skills for the index to be cached, so the second build reads none
        write_skill(
            root, f'skill-{number:03}', f'Run the converter {number}.', description=f'Converts format {number} files.'
        )
    library = SkillLibrary.build(options=LibraryOptions(directories=[root]))
    kept = _kept(library)
    assert kept == {name: (root / name / 'SKILL.md').read_bytes() for name in kept}  # the bytes discovery read
    assert len(kept) == CACHE_MIN_SKILLS
    assert _kept(library) == dict.fromkeys(kept)  # handed over once

    for _ in range(2):  # cold (the index reads every body), then cached (it reads none): nothing is held after
        library = SkillLibrary.build(options=LibraryOptions(directories=[root]))
        assert library.search('converter 7', 1)[0].name == 'skill-007'
        assert set(_kept(library).values()) == {None}
    cache_file = library.index_cache_path()
    assert cache_file is not None
    assert cache_file.exists()

    (root / 'skill-007' / 'SKILL.md').write_text('---\nname: skill-007\ndescription: Converts.\n---\nEdited body.\n')
    edited = library.get('skill-007')
    assert edited is not None
    assert edited.load_instructions() == 'Edited body.'


def test_discovery_opens_a_real_skill_folder_once_and_holds_the_others_as_before(tmp_path: Path) -> None:
    # A real folder is held by opening it without following a symlink; a symlink, a file or a folder without a
    # `SKILL.md` goes the general way, with its reason; no descriptor is left open either way.
    library = tmp_path / 'skills'
    write_skill(library, 'real', 'Real body.', description='A real folder.')
    write_skill(tmp_path, 'outside', 'Outside body.', description='Outside the library.')
    (library / 'alias').symlink_to('real', target_is_directory=True)
    (library / 'away').symlink_to(tmp_path / 'outside', target_is_directory=True)
    (library / 'empty').mkdir()
    open_before = sorted(os.listdir('/proc/self/fd'))

    with pytest.warns(SkillWarning):  # the skips are reported
        built = SkillLibrary.build(options=LibraryOptions(directories=[library]))

    assert sorted(os.listdir('/proc/self/fd')) == open_before
    assert sorted(built.skills) == ['real']
    skipped = {problem.path.name: problem.problem for problem in built.skipped}
    assert 'which is read itself' in skipped['alias']
    assert 'outside the library directory' in skipped['away']
    assert 'SKILL.md' in skipped['empty']
    real = built.skills['real'].content
    assert isinstance(real, FolderContent)
    assert (real.folder.device, real.folder.inode) == (
        os.stat(library / 'real').st_dev,
        os.stat(library / 'real').st_ino,
    )
    assert built.skills['real'].load_instructions() == 'Real body.'
