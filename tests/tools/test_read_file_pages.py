"""`read_file` pages over a whole file, however large, says where each page ends and why, and tells images and PDFs
by their bytes, not their names: on real runs in `LocalWorkspace` and in skillshelf's sandbox."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, BinaryContent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.tools import DeferredToolRequests
from test_file_tools import png, put_file, returns, skill_library

from skillshelf import Skills
from skillshelf.capability.file_pages import MAX_PAGE_BYTES, WHOLE_FILE_BYTES, media_type

from reliability.ledger import case
from scripted_model import Script, call

LOG_LINES = 400_000
"""A 12 MiB log: line N reads `entry N of the log` padded to 32 bytes."""


def log_line(number: int) -> bytes:
    return f'entry {number} of the log'.ljust(31).encode() + b'\n'


def read(
    workspace: AbstractCapability[Any], tmp_path: Path, path: str, data: bytes, *reads: dict[str, Any]
) -> list[Any]:
    model = Script([[call('read_file', path=path, **arguments)] for arguments in reads])
    library = tmp_path / 'lib' if (tmp_path / 'lib').exists() else skill_library(tmp_path)
    agent = Agent(
        model.model(),
        output_type=[str, DeferredToolRequests],
        capabilities=[workspace, Skills(library, file_tools=True)],
    )
    return returns(agent.run_sync('read', **put_file(workspace, tmp_path, path, data)).all_messages(), 'read_file')


def numbers(page: str) -> list[int]:
    return [int(match) for match in re.findall(r'^ *(\d+)\t', page, flags=re.MULTILINE)]


def test_a_12_mib_log_pages_to_its_last_line(workspace: AbstractCapability[Any], tmp_path: Path) -> None:
    log = b''.join(log_line(number) for number in range(1, LOG_LINES + 1))
    assert len(log) > 12 << 20 > WHOLE_FILE_BYTES
    past_8_mib = (9 << 20) // 32  # the line at 9 MiB, which the old reader said did not exist
    first, middle, last, beyond = read(
        workspace,
        tmp_path,
        'big.log',
        log,
        {},
        {'offset': past_8_mib, 'limit': 3},
        {'offset': LOG_LINES - 2},
        {'offset': LOG_LINES + 5},
    )
    assert numbers(first) == list(range(1, 2001))
    assert first.endswith(f'[{LOG_LINES - 2000:,} more lines: read again with offset=2000]')
    assert middle.splitlines()[:3] == [
        f'{n + 1:>6}\t' + log_line(n + 1).decode().rstrip('\n') for n in range(past_8_mib, past_8_mib + 3)
    ]
    assert middle.endswith(f'read again with offset={past_8_mib + 3}]')
    assert numbers(last) == [LOG_LINES - 1, LOG_LINES]  # the end: no note
    assert last.rstrip().endswith('entry 400000 of the log')
    assert beyond == f"'big.log' has no line {LOG_LINES + 6}; it has {LOG_LINES:,}."
    case('Resource reads', 'read_file on a 12 MiB log, at 9 MiB and at its end', middle.splitlines()[-1])


@pytest.mark.parametrize('size', ['small', 'large'])
def test_a_page_full_of_bytes_says_so_and_the_next_page_goes_on(
    workspace: AbstractCapability[Any], tmp_path: Path, size: str
) -> None:
    line = b'x' * 999 + b'\n'
    lines = 3_000 if size == 'large' else 1_000  # 3 MB: paged in the workspace; 1 MB: read whole
    first, second = read(workspace, tmp_path, 'wide.txt', line * lines, {}, {'offset': 262})
    fitting = MAX_PAGE_BYTES // len(line)
    assert numbers(first) == list(range(1, fitting + 1))  # whole lines only: the one cut in two comes next
    assert first.endswith(
        f'[{lines - fitting:,} more lines (this page is full at {MAX_PAGE_BYTES:,} bytes): read again with '
        f'offset={fitting}]'
    )
    assert numbers(second)[0] == 263


def test_a_line_longer_than_a_page_shows_its_start_and_goes_on(
    workspace: AbstractCapability[Any], tmp_path: Path
) -> None:
    data = b'short\n' + b'y' * (3 << 20) + b'\nafter\n'
    first, second, third = read(workspace, tmp_path, 'one-line.txt', data, {'limit': 1}, {'offset': 1}, {'offset': 2})
    assert first == '     1\tshort\n[2 more lines: read again with offset=1]'
    assert second.startswith('     2\tyyyy')
    assert len(second.split('\n')[0]) == len('     2\t') + MAX_PAGE_BYTES
    assert second.endswith(
        f'[line 2 is longer than a page ({MAX_PAGE_BYTES:,} bytes): only its start is shown; 1 more lines: read '
        'again with offset=2]'
    )
    assert third == '     3\tafter'


def test_media_are_told_by_their_bytes_not_their_names(workspace: AbstractCapability[Any], tmp_path: Path) -> None:
    [named_png] = read(workspace, tmp_path, 'notes.png', b'not a picture\n', {})
    assert named_png == '     1\tnot a picture'  # text, though its name says image: never sent as an image
    picture = png(3, 2)
    [named_txt] = read(workspace, tmp_path, 'picture.txt', picture, {})
    assert isinstance(named_txt[1], BinaryContent)
    assert (named_txt[1].data, named_txt[1].media_type) == (picture, 'image/png')
    case('Resource reads', 'a text file named notes.png, read with read_file', f'read as text: {named_png!r}')


def test_media_types_come_from_their_signatures() -> None:
    assert media_type(b'%PDF-1.7\n') == 'application/pdf'
    assert media_type(b'RIFF\x00\x00\x00\x00WEBPVP8 ') == 'image/webp'
    assert media_type(b'\xff\xd8\xff\xe0') == 'image/jpeg'
    assert media_type(b'plain text') is None


def test_a_large_binary_file_in_the_workspace_is_not_shown(workspace: AbstractCapability[Any], tmp_path: Path) -> None:
    data = b'\x00\x01' * (WHOLE_FILE_BYTES + 10)
    [answer] = read(workspace, tmp_path, 'blob.bin', data, {})
    assert answer == f"'blob.bin' is a binary file ({len(data):,} bytes); it cannot be shown as text."
