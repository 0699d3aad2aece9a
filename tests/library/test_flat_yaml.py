"""Flat frontmatter read without a parser (`markdown.flat_yaml`) means what YAML says it means.

Whenever `flat_fields` answers, PyYAML's loaders (libyaml's and the pure-Python one) build the same mapping of the
same texts in the same order, and the guarded loader accepts the text; whatever it is not sure of, it leaves to them.
The texts are generated from the characters and words YAML treats specially, line by line and at random.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skillshelf.markdown import guarded_yaml
from skillshelf.markdown.flat_yaml import flat_fields

_LOADERS: list[type[yaml.SafeLoader]] = [yaml.SafeLoader, getattr(yaml, 'CSafeLoader', yaml.SafeLoader)]


def _yaml(text: str, loader: type[yaml.SafeLoader]) -> Any:
    try:
        return yaml.load(text, Loader=loader)
    except Exception as error:  # what YAML refuses, the fast path must not read
        return error


def _agrees(text: str) -> None:
    fast = flat_fields(text)
    if fast is None:
        return
    assert all(type(key) is str and type(value) is str for key, value in fast.items())
    for loader in _LOADERS:
        expected = _yaml(text, loader)
        assert fast == expected, (loader.__name__, text)
        assert list(fast) == list(expected)  # the fields' order too
    assert guarded_yaml.load(text) == fast


# Words whose YAML type is not text, or which YAML reads in a special way, and characters that matter to it.
_SPECIAL_WORDS = ['yes', 'No', 'on', 'OFF', 'true', 'null', '~', 'Null', '12', '0x1F', '0o7', '1_000', '1e3', '.5',
                  '.inf', '.NaN', '-1', '+1', '2024-01-02', '2024-01-02 10:00:00', '12:30', '190:20:30', '<<', '=',
                  'y', 'n', 'name', 'description', 'a.b', '_x', 'x-y', '1a']  # fmt: skip
_CHARACTERS = list(' :#-?,[]{}&*!|>\'"%@`\\\t\r\x85\u2028\u2029\ufeff\x00\x7f\xa0é代😀/.~=<+')
_PLAIN_TEXT = st.builds(
    lambda first, rest: first + rest,
    st.sampled_from([*'abxyz', 'é', '代']),
    st.text(st.sampled_from([*'abcxyz019 .,/-_()', 'é', '代']), max_size=12),
)
"""Text made mostly of what plain values hold, so that most generated lines are flat fields."""
_TEXT = st.one_of(
    _PLAIN_TEXT,
    _PLAIN_TEXT,
    st.sampled_from(_SPECIAL_WORDS),
    st.builds(lambda a, b, c: a + b + c, _PLAIN_TEXT, st.sampled_from(_CHARACTERS), _PLAIN_TEXT),
    st.text(st.sampled_from([*_CHARACTERS, 'a', 'b', 'x', '1', '0']), max_size=12),
    st.text(max_size=8),
)
_VALUE = st.one_of(
    _TEXT,
    st.builds(lambda inner: f'"{inner}"', _TEXT),
    st.builds(lambda inner: f"'{inner}'", _TEXT),
    st.builds(lambda a, b: f'{a} {b}', _TEXT, _TEXT),
)
_KEY = st.one_of(
    st.from_regex(r'[a-z][a-z0-9_-]{0,8}', fullmatch=True),
    st.from_regex(r'[A-Za-z0-9_.\- ]{1,6}', fullmatch=True),
    st.sampled_from(_SPECIAL_WORDS),
    _TEXT,
)
_FIELD = st.builds(
    lambda key, separator, value, after: f'{key}{separator}{value}{after}',
    _KEY,
    st.sampled_from([': '] * 6 + [':  ', ':', ' : ', ':\t']),
    _VALUE,
    st.sampled_from([''] * 6 + [' ', '  ', ' # note', '#x', ':', ': x', '\t']),
)
_LIKELY_FIELD = st.builds(
    lambda key, value, quote, after: f'{key}: {quote}{value}{quote}{after}',
    st.from_regex(r'[a-z][a-z0-9_-]{0,8}', fullmatch=True),
    st.one_of(
        _PLAIN_TEXT, st.builds(lambda a, b, c: a + b + c, _PLAIN_TEXT, st.sampled_from(_CHARACTERS), _PLAIN_TEXT)
    ),
    st.sampled_from(['', '', '"', "'"]),
    st.sampled_from(['', '', ' ']),
)
"""A field line as frontmatter usually has them, with now and then a character YAML treats specially."""
_LINE = st.one_of(
    _LIKELY_FIELD,
    _LIKELY_FIELD,
    _FIELD,
    st.sampled_from(['', ' ', '  indented: x', '- item', '---', '...', '# comment', '%YAML 1.1']),
)


@settings(max_examples=3000, deadline=None)
@given(_FIELD)
def test_a_flat_field_is_what_yaml_reads(line: str) -> None:
    _agrees(line)


@settings(max_examples=3000, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=5), st.sampled_from(['\n'] * 4 + ['\r\n', '\n\n']), st.booleans())
@example(['name: pdf', 'description: "Fill \\"PDF\\" forms\\\\"'], '\n', True)
@example(['name: pdf', "description: 'It''s a form'"], '\n', True)
@example(['name: pdf', 'description: a: b'], '\n', True)
@example(['name: pdf', 'description: a #b'], '\n', False)
@example(['name: pdf', 'name: pdf'], '\n', True)
def test_flat_fields_are_what_yaml_reads(lines: list[str], newline: str, final_newline: bool) -> None:
    _agrees(newline.join(lines) + (newline if final_newline else ''))


@settings(max_examples=3000, deadline=None)
@given(st.text(st.sampled_from([*_CHARACTERS, '\n', 'a', 'b', 'n', 'o', '1']), max_size=40))
def test_any_text_flat_fields_reads_is_what_yaml_reads(text: str) -> None:
    _agrees(text)


@pytest.mark.parametrize(
    ('text', 'fields'),
    [
        ('name: pdf\ndescription: Fill PDF forms.\n', {'name': 'pdf', 'description': 'Fill PDF forms.'}),
        ('name: pdf\ndescription: "Quoted: with a \\"colon\\""\n', {'name': 'pdf', 'description': 'Quoted: with a "colon"'}),
        ("name: pdf\ndescription: 'It''s here'  \n\nlicense: MIT", {'name': 'pdf', 'description': "It's here", 'license': 'MIT'}),
        ('name: pdf\ndescription: see https://x.org/a#b, [a] & {b}\n', {'name': 'pdf', 'description': 'see https://x.org/a#b, [a] & {b}'}),
        ('name: pdf\ndescription: 数据分析 😀\n', {'name': 'pdf', 'description': '数据分析 😀'}),
    ],
)  # fmt: skip
def test_common_frontmatter_is_read_without_the_parser(text: str, fields: dict[str, str]) -> None:
    assert flat_fields(text) == fields
    _agrees(text)


@pytest.mark.parametrize(
    'text',
    [
        '',
        '\n\n',
        'name: pdf\nname: other\n',  # a repeated key: the loader refuses it
        'name: pdf\ndescription: >\n  Folded\n',
        'name: pdf\nversion: 12\n',
        'name: pdf\nenabled: yes\n',
        'name: pdf\ndescription:\n',
        'name: pdf\ndescription: "a\\nb"\n',  # an escape other than \\" and \\\\
        'name: pdf\r\ndescription: x\r\n',
        'name: pdf\ndescription: x # comment\n',
        'name: &a pdf\ndescription: *a\n',
        'on: push\n',
        'metadata:\n  keywords: a\n',
    ],
)
def test_anything_else_is_left_to_the_loader(text: str) -> None:
    assert flat_fields(text) is None
