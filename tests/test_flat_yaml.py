"""The frontmatter fast path reads exactly what YAML reads, or leaves the text to YAML."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st
from yaml.reader import Reader

from skillshelf.markdown.flat_yaml import flat_mapping
from skillshelf.markdown.frontmatter import parse_frontmatter

KEYS = st.sampled_from(['name', 'description', 'license', 'when_to_use', 'allowed-tools', 'x_1', 'on', 'null'])
TRICKY = st.sampled_from(
    [' ', ':', ': ', ' #', '#', '"', "'", '\\', '\t', '\r', '\x85', '\u2028', '\ufeff', '\x7f', '\x00', '-', '?',
     '&a', '*a', '!', '|', '>', '[', ']', '{', '}', ',', '%', '@', '`', '~', 'true', 'yes', 'off', '12', '0x1f',
     '1e3', '.inf', '2024-01-01', '=', '<<', 'é', '漢字', '\u3000', '\U0001f600']
)  # fmt: skip
WORDS = st.text(st.sampled_from(list('abXY09 .,;()/+=_-é漢\u3000😀[]{}')), max_size=8)
VALUES = st.lists(st.one_of(WORDS, WORDS, WORDS, TRICKY), max_size=4).map(''.join)
QUOTES = st.sampled_from([('', ''), ('', ''), ('"', '"'), ("'", "'"), ('"', ''), ('', "'")])
COLONS = st.sampled_from([': ', ': ', ':  ', ':'])
ENDS = st.sampled_from(['', '', '', ' ', '\t', ' # c'])
LINES = st.lists(st.tuples(KEYS, COLONS, QUOTES, VALUES, ENDS), min_size=1, max_size=3)
"""One-line fields, many plain enough for the fast path, the others with something only YAML may read."""


def test_every_character_python_prints_is_one_yaml_takes_as_it_is() -> None:
    # The fast path only reads lines that `str.isprintable()` accepts; PyYAML's reader refuses none of them.
    printable = ''.join(c for c in map(chr, range(0x110000)) if c.isprintable())
    assert Reader.NON_PRINTABLE.search(printable) is None
    # ...and of those, these YAML reads as a line break or skips, or libyaml reads differently: never printable.
    assert not any(c.isprintable() for c in '\t\r\x85\u2028\u2029\ufeff')


def yaml_reads(text: str, loader: Any) -> object:
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError:
        return 'refused'


FLAT_LOOKING = st.lists(
    st.tuples(st.sampled_from(['name', 'description', 'x_1']), st.just(': '), QUOTES, VALUES, st.just('')), max_size=2
)
"""Lines shaped like the fast path's fields, so most examples exercise it."""


def agree(lines: list[tuple[str, str, tuple[str, str], str, str]]) -> None:
    text = ''.join(
        f'{key}{colon}{opening}{value}{closing}{end}\n' for key, colon, (opening, closing), value, end in lines
    )
    fields = flat_mapping(text)
    if fields is not None:
        assert yaml_reads(text, yaml.SafeLoader) == fields
        assert yaml_reads(text, yaml.CSafeLoader) == fields


@settings(max_examples=2000)
@given(LINES)
@example([('name', ': ', ('', ''), 'pdf-forms', ''), ('description', ': ', ('"', '"'), 'Fill: forms #1', ' ')])
@example([('description', ': ', ("'", "'"), 'Fill forms', '')])
def test_what_the_fast_path_reads_both_yaml_loaders_read_the_same(
    lines: list[tuple[str, str, tuple[str, str], str, str]],
) -> None:
    agree(lines)


@settings(max_examples=2000)
@given(FLAT_LOOKING)
def test_the_fast_path_agrees_with_yaml_on_fields_shaped_like_its_own(
    lines: list[tuple[str, str, tuple[str, str], str, str]],
) -> None:
    agree(lines)


@pytest.mark.parametrize(
    ('text', 'fields'),
    [
        (
            'name: pdf-forms\ndescription: Fill in PDF forms.\n',
            {'name': 'pdf-forms', 'description': 'Fill in PDF forms.'},
        ),
        ('name: a\ndescription: "Quoted: with # and [x]"  \n', {'name': 'a', 'description': 'Quoted: with # and [x]'}),
        ("name: a\n\ndescription: 'single'\n", {'name': 'a', 'description': 'single'}),
        ('name: a\ndescription: "say \\"hi\\" C:\\\\"\n', {'name': 'a', 'description': 'say "hi" C:\\'}),
    ],
)
def test_one_line_text_fields_are_read_without_yaml(text: str, fields: dict[str, str]) -> None:
    assert flat_mapping(text) == fields


@pytest.mark.parametrize(
    'text',
    [
        'name: a\ndescription: b: c\n',  # an error YAML reports (or a value we repair with a note)
        'name: a\nname: b\n',  # a repeated key, an error
        'name: a # a comment\n',
        'on: a\n',  # YAML 1.1 reads the key as `True`
        'name: 2024-01-01\n',  # a date
        'name: a\ndescription: >\n  folded\n',
        'name: a\nmetadata:\n  tags: x\n',
        'name: "a line\\nbreak"\n',  # an escape other than \\" and \\\\
        'name: a\r\ndescription: b\r\n',
        'name:\ta\n',
    ],
)
def test_anything_else_is_left_to_yaml(text: str) -> None:
    assert flat_mapping(text) is None


def test_a_frontmatter_read_on_the_fast_path_is_validated_like_any_other(tmp_path: Any) -> None:
    folder = tmp_path / 'pdf-forms'
    folder.mkdir()
    (folder / 'SKILL.md').write_text('---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\nBody\n')
    assert parse_frontmatter(folder / 'SKILL.md').description == 'Fill in PDF forms.'
    (folder / 'SKILL.md').write_text('---\nname: other-name\ndescription: Fill in PDF forms.\n---\nBody\n')
    with pytest.raises(Exception, match='does not match its folder'):
        parse_frontmatter(folder / 'SKILL.md')
