"""The frontmatter cache: a warm start opens no `SKILL.md`, yet sees every edit and loses no warning."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest

import skillshelf.markdown.frontmatter
from skillshelf import SkillLibrary, SkillWarning
from skillshelf.ranking.cache import CACHE_MIN_SKILLS


@pytest.fixture
def head_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every `SKILL.md` whose frontmatter is read from disk."""
    reads: list[Path] = []
    original = skillshelf.markdown.frontmatter._read_head  # pyright: ignore[reportPrivateUsage]

    def recording(skill_file: str | Path) -> tuple[str, bytes, bool]:
        reads.append(Path(skill_file))
        return original(skill_file)

    monkeypatch.setattr(skillshelf.markdown.frontmatter, '_read_head', recording)
    return reads


def write_library(root: Path, count: int = CACHE_MIN_SKILLS) -> Path:
    for n in range(count):
        write(root, f'skill-{n:04d}', f'description: Handle topic {n}.\nmetadata:\n  keywords: [alpha{n}, beta]\n')
    return root


def write(root: Path, name: str, fields: str) -> Path:
    (root / name).mkdir(parents=True, exist_ok=True)
    skill_file = root / name / 'SKILL.md'
    skill_file.write_text(f'---\nname: {name}\n{fields}---\n\nBody of {name}.\n', encoding='utf-8')
    return skill_file


def snapshot(library: SkillLibrary) -> list[tuple[Any, ...]]:
    return [(s.name, s.description, dict(s.metadata), s.folder, s.load_instructions()) for s in library.skills.values()]


def test_a_warm_start_reads_no_frontmatter_and_builds_the_same_library(
    tmp_path: Path, cache_dir: Path, head_reads: list[Path]
) -> None:
    root = write_library(tmp_path / 'bibliothèque-库')
    write(root, 'unicode', 'description: Café menus, 数据 tables.\n')
    cold = SkillLibrary.build(directories=[root])
    assert len(head_reads) == CACHE_MIN_SKILLS + 1
    assert len(list(cache_dir.glob('frontmatter-*.json'))) == 1

    head_reads.clear()
    warm = SkillLibrary.build(directories=[root])

    assert head_reads == []
    assert snapshot(warm) == snapshot(cold)
    assert warm.skills['skill-0003'].keywords == 'alpha3 beta'


def test_a_library_path_with_an_undecodable_byte_is_cached_too(
    tmp_path: Path, cache_dir: Path, head_reads: list[Path]
) -> None:
    root = write_library(tmp_path / os.fsdecode(b'lib-\xff'))  # a lone surrogate in every key: not UTF-8
    cold = SkillLibrary.build(directories=[root])
    head_reads.clear()

    warm = SkillLibrary.build(directories=[root])

    assert head_reads == []
    assert snapshot(warm) == snapshot(cold)


def test_an_edited_or_replaced_skill_md_is_read_again(tmp_path: Path, cache_dir: Path, head_reads: list[Path]) -> None:
    root = write_library(tmp_path / 'lib')
    SkillLibrary.build(directories=[root])
    edited = write(root, 'skill-0001', 'description: Now about zeppelins.\n')
    replaced = root / 'skill-0002' / 'SKILL.md'
    replacement = tmp_path / 'replacement.md'
    replacement.write_text(replaced.read_text(encoding='utf-8').replace('topic 2', 'topic two'), encoding='utf-8')
    stat = replaced.stat()
    os.utime(replacement, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same mtime and size: only inode/ctime differ
    os.replace(replacement, replaced)
    head_reads.clear()

    library = SkillLibrary.build(directories=[root])

    assert sorted(head_reads) == [edited, replaced]
    assert library.skills['skill-0001'].description == 'Now about zeppelins.'
    assert library.skills['skill-0002'].description == 'Handle topic two.'


def test_warnings_are_repeated_on_a_warm_start(tmp_path: Path, cache_dir: Path, head_reads: list[Path]) -> None:
    root = write_library(tmp_path / 'lib', CACHE_MIN_SKILLS - 1)
    write(root, 'colons', 'description: Use when: the user asks about colons.\n')
    for attempt in ('cold', 'warm'):
        head_reads.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            library = SkillLibrary.build(directories=[root])
        messages = [str(w.message) for w in caught if issubclass(w.category, SkillWarning)]
        assert messages == [
            f'{root / "colons" / "SKILL.md"}: quoted a frontmatter value that contains ": "; quote it in the file'
        ], attempt
        assert library.skills['colons'].description == 'Use when: the user asks about colons.'
    assert head_reads == []


def test_frontmatter_that_json_cannot_hold_is_parsed_each_time(
    tmp_path: Path, cache_dir: Path, head_reads: list[Path]
) -> None:
    root = write_library(tmp_path / 'lib')
    dated = write(root, 'dated', 'description: Has a date.\nreleased: 2026-11-22\n')
    first = SkillLibrary.build(directories=[root])
    head_reads.clear()

    second = SkillLibrary.build(directories=[root])

    assert head_reads == [dated]
    assert second.skills['dated'].metadata == first.skills['dated'].metadata
    assert str(second.skills['dated'].metadata['released']) == '2026-11-22'


@pytest.mark.parametrize(
    'content',
    [
        'not json',
        json.dumps({'format': 1, 'skills': []}),
        json.dumps({'format': 1, 'skills': {'x': [1, 2]}}),
        json.dumps([1, 2, 3]),
    ],
)
def test_a_corrupt_cache_is_ignored(tmp_path: Path, cache_dir: Path, content: str) -> None:
    root = write_library(tmp_path / 'lib')
    expected = snapshot(SkillLibrary.build(directories=[root]))
    (cache_file,) = cache_dir.glob('frontmatter-*.json')
    cache_file.write_text(content, encoding='utf-8')
    assert snapshot(SkillLibrary.build(directories=[root])) == expected


@pytest.mark.parametrize(
    ('field', 'value'),
    [(2, ['not', 'a', 'string']), (1, 'Not A Valid Name'), (1, ''), (2, '   ')],
    ids=['description-not-a-string', 'name-breaks-the-rules', 'name-empty', 'description-blank'],
)
def test_a_tampered_entry_is_parsed_again(
    tmp_path: Path, cache_dir: Path, head_reads: list[Path], field: int, value: object
) -> None:
    root = write_library(tmp_path / 'lib')
    SkillLibrary.build(directories=[root])
    (cache_file,) = cache_dir.glob('frontmatter-*.json')
    data = json.loads(cache_file.read_text(encoding='utf-8'))
    data['skills'][str(root / 'skill-0005' / 'SKILL.md')][field] = value
    cache_file.write_text(json.dumps(data), encoding='utf-8')
    head_reads.clear()

    library = SkillLibrary.build(directories=[root])

    assert head_reads == [root / 'skill-0005' / 'SKILL.md']
    assert library.skills['skill-0005'].description == 'Handle topic 5.'
    assert len(library.skills) == CACHE_MIN_SKILLS


def test_small_libraries_and_a_disabled_cache_write_nothing(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    SkillLibrary.build(directories=[write_library(tmp_path / 'small', CACHE_MIN_SKILLS - 1)])
    assert not cache_dir.exists()
    monkeypatch.setenv('SKILLSHELF_CACHE_DIR', 'off')
    SkillLibrary.build(directories=[write_library(tmp_path / 'large')])
    assert not cache_dir.exists()
