"""A `SKILL.md` is split as python-frontmatter splits its text, whichever way skillshelf reads it.

- Discovery splits the file's bytes and decodes only the frontmatter: the same frontmatter, the same body and the
  same errors as decoding the whole file (with `surrogateescape`) and splitting that text.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from skillshelf.errors import SkillFormatError
from skillshelf.markdown import frontmatter
from skillshelf.markdown.frontmatter import MAX_FRONTMATTER_BYTES, FormatDeviation, read_frontmatter, split_frontmatter

_HANDLER = frontmatter._HANDLER  # pyright: ignore[reportPrivateUsage]


def python_frontmatter_split(text: str) -> tuple[str, str] | str:
    """How the reader split a text before (python-frontmatter's `detect` and `split`): (head, body), or the error."""
    text = text.removeprefix('\ufeff')
    if not _HANDLER.detect(text):
        return 'the file does not start with a `---` frontmatter line'
    try:
        head, body = _HANDLER.split(text)
    except ValueError:
        opened = text[text.find('\n') + 1 :]
        if len(opened.encode('utf-8', 'surrogateescape')) > MAX_FRONTMATTER_BYTES:
            return 'too large'
        return 'the frontmatter is not closed by a `---` line'
    head = head.removeprefix('\n')
    if len(head.encode('utf-8', 'surrogateescape')) > MAX_FRONTMATTER_BYTES:
        return 'too large'
    return head, body


def split_bytes(raw: bytes) -> tuple[str, str] | str:
    """What `read_frontmatter` takes from a file's bytes: the frontmatter, and the body as the text holding them."""
    try:
        start, end, body_start = frontmatter._frontmatter_span(  # pyright: ignore[reportPrivateUsage]
            'SKILL.md',
            raw.removeprefix(b'\xef\xbb\xbf'),
            frontmatter._BOUNDARY_BYTES,  # pyright: ignore[reportPrivateUsage]
            frontmatter._CLOSING_BYTES,  # pyright: ignore[reportPrivateUsage]
            b'\n',
        )
    except SkillFormatError as error:
        return 'too large' if 'larger than' in error.problem else error.problem
    raw = raw.removeprefix(b'\xef\xbb\xbf')
    return raw[start:end].decode('utf-8', 'surrogateescape'), raw[body_start:].decode('utf-8', 'surrogateescape')


def split_text(text: str) -> tuple[str, str] | str:
    try:
        return split_frontmatter('SKILL.md', text)
    except SkillFormatError as error:
        return 'too large' if 'larger than' in error.problem else error.problem


_FRAGMENTS = st.sampled_from(
    [b'---', b'---', b'\n', b'\n', b'\r', b' ', b'\t', b'-', b'name: pdf', b'x', b'\xef\xbb\xbf', b'\xff', b'\xe2\x82',
     b'\xe2\x82\xac', b'\xc3', b'\xe4\xbb\xa3', b'\x00', b'\xf0\x9f\x99\x82', b'\x85', '\u2028'.encode()]
)  # fmt: skip
_BIG = b'---\n' + b'a: ' + b'x' * MAX_FRONTMATTER_BYTES


@settings(max_examples=2000, deadline=None)
@given(st.lists(_FRAGMENTS, max_size=24).map(b''.join))
@example(b'---\nname: pdf\n---\nbody')
@example(b'\xef\xbb\xbf---\r\nname: pdf\r\n---  \r\n\xff body')
@example(b'---\n---')
@example(_BIG)
@example(_BIG + b'\n---\n')
@example(_BIG[:-2] + b'\n---\n')
@example(_BIG[:-2] + b'\xc3\xa9\n---\n')
def test_the_bytes_split_as_the_decoded_text_did(raw: bytes) -> None:
    text = raw.decode('utf-8', 'surrogateescape')
    expected = python_frontmatter_split(text)
    assert split_bytes(raw) == expected
    assert split_text(text) == expected


def test_the_size_limit_is_counted_in_bytes_either_way() -> None:
    fits = b'---\na: ' + 'é'.encode() * ((MAX_FRONTMATTER_BYTES - 3) // 2) + b'\n---\n'
    assert split_bytes(fits) == python_frontmatter_split(fits.decode()) != 'too large'
    assert split_bytes(fits.replace(b'a: ', b'ab: ')) == 'too large'


def test_a_body_with_an_undecodable_byte_still_supplies_the_description(tmp_path: Path) -> None:
    (tmp_path / 'pdf').mkdir()
    (tmp_path / 'pdf' / 'SKILL.md').write_bytes(
        b'\xef\xbb\xbf---\r\nname: pdf\r\n---\r\n\r\nFill \xff forms.\r\nThen save.'
    )
    deviations: list[FormatDeviation] = []
    front = read_frontmatter(tmp_path / 'pdf' / 'SKILL.md', deviations)
    assert front.description == 'Fill \ufffd forms.'
    assert [deviation.rule for deviation in deviations] == ['description']
