"""`read_file`'s answer: a page of a text file's lines, or an image or PDF, from any pydantic-ai workspace.

A large file is paged where it lies: each page is cut out by a command in the workspace (`sed`, `head`, `base64`,
as pydantic-ai's own shell file operations assume), so no page copies the whole file out of a sandbox or holds it in
the agent's memory. Every page says where it ends and how to read on, also when its bytes, not its lines, ran out.
Images and PDFs are told by their first bytes, not their names: a text file named `x.png` is read as text.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from pydantic_ai import BinaryContent
from pydantic_ai.workspaces import Workspace, WorkspaceError

__all__ = ('MAX_MEDIA_BYTES', 'MAX_PAGE_BYTES', 'MAX_READ_LINES', 'WHOLE_FILE_BYTES', 'media_type', 'read_page')

MAX_READ_LINES = 2000
"""Lines a page holds at most (ask again with `offset` for more)."""
MAX_PAGE_BYTES = 256 << 10
"""Bytes of text a page holds at most; a page cut here says so."""
WHOLE_FILE_BYTES = 1 << 20
"""A file up to this size is read whole, one copy (cheaper than the commands that page a larger one)."""
MAX_MEDIA_BYTES = 5 << 20
"""An image or PDF larger than this is described, not shown."""
_SNIFF_BYTES = 8192
"""The start of a file that tells an image, a PDF or binary data from text."""
_SIGNATURES = (
    (b'\x89PNG\r\n\x1a\n', 'image/png'),
    (b'\xff\xd8\xff', 'image/jpeg'),
    (b'GIF87a', 'image/gif'),
    (b'GIF89a', 'image/gif'),
    (b'%PDF-', 'application/pdf'),
)

# One command: the file's start, its line count, its last byte, then the page (lines $1 to $2, at most $4 bytes of
# them; sed stops reading at line $2). The path comes as an argument, never as shell text.
_PAGE_COMMAND = (
    'head -c {sniff} "$3" | base64 | tr -d "\\n"; echo; wc -l < "$3"; tail -c 1 "$3" | base64; '
    'sed -n "$1,$2p;$2q" "$3" | head -c "$4" | base64 | tr -d "\\n"'
)


def media_type(start: bytes) -> str | None:
    """The media type a file's first bytes announce, for the images and PDFs a model can be shown."""
    for signature, media in _SIGNATURES:
        if start.startswith(signature):
            return media
    return 'image/webp' if start[:4] == b'RIFF' and start[8:12] == b'WEBP' else None


@dataclass(frozen=True)
class _Window:
    """What the paging command saw: the file's start, how many lines it has, and the page's bytes."""

    start: bytes
    lines: int
    page: bytes


async def read_page(workspace: Workspace, path: str, shown: str, offset: int, limit: int) -> str | list[Any]:
    """The answer to `read_file(path, offset, limit)`: numbered lines from line `offset` (0: the first), or the
    image or PDF itself; `shown` is the path as the model gave it.

    Raises:
        OSError, WorkspaceError: the file cannot be read (the caller words it for the model).
    """
    entry = await workspace.stat(path)
    if entry.is_dir:
        raise IsADirectoryError(path)
    size = entry.size
    start, count = max(0, offset), max(1, min(limit, MAX_READ_LINES))
    if size is None or size <= WHOLE_FILE_BYTES:
        data = await workspace.read_bytes(path)
        size = len(data)
        window = _Window(data[:_SNIFF_BYTES], data.count(b'\n') + (not data.endswith(b'\n') and bool(data)), data)
        page = _lines(data, start, count)
    else:
        window = await _window(workspace, path, start, count)
        page = window.page
    if (media := media_type(window.start)) is not None:
        if size > MAX_MEDIA_BYTES:
            return f'{shown} is {size:,} bytes, over the {MAX_MEDIA_BYTES:,} bytes shown at once.'
        data = await workspace.read_bytes(path) if size > WHOLE_FILE_BYTES else window.page
        return [f'{shown} ({size:,} bytes):', BinaryContent(data, media_type=media)]
    if b'\x00' in window.start:
        return f'{shown} is a binary file ({size:,} bytes); it cannot be shown as text.'
    return _numbered(page, start, count, window.lines, shown)


async def _window(workspace: Workspace, path: str, start: int, count: int) -> _Window:
    """The paging command's view of a large file (see `_PAGE_COMMAND`)."""
    command = ['/bin/sh', '-c', _PAGE_COMMAND.format(sniff=_SNIFF_BYTES), 'sh']
    done = await workspace.run([*command, str(start + 1), str(start + count), path, str(MAX_PAGE_BYTES + 1)])
    parts = done.stdout.split('\n')
    if done.exit_code != 0 or len(parts) != 4 or not parts[1].strip().isdigit():
        raise WorkspaceError(f'the file could not be paged ({done.stderr.strip()[:200] or "no output"})')
    try:
        head, last, page = (base64.b64decode(part) for part in (parts[0], parts[2], parts[3]))
    except binascii.Error:
        raise WorkspaceError('the file could not be paged (its pages came back damaged)') from None
    return _Window(head, int(parts[1]) + (last != b'\n'), page)


def _lines(data: bytes, start: int, count: int) -> bytes:
    """Lines `start` to `start + count` of `data` (as the paging command cuts them), at most a page's bytes."""
    position = 0
    for _ in range(start):
        position = data.find(b'\n', position) + 1
        if position == 0:
            return b''
    end = position
    for _ in range(count):
        end = data.find(b'\n', end) + 1
        if end == 0:
            end = len(data)
            break
    return data[position : min(end, position + MAX_PAGE_BYTES + 1)]


def _numbered(page: bytes, start: int, count: int, total: int, shown: str) -> str:
    """The page's lines numbered from `start + 1`, and a note that says how to read on."""
    kept = page[:MAX_PAGE_BYTES]
    lines = kept.decode('utf-8', 'replace').splitlines()
    long_line = False
    if len(page) > MAX_PAGE_BYTES and not kept.endswith(b'\n'):
        if len(lines) > 1:
            lines.pop()  # a line the page's bytes cut in two is read whole on the next page
        else:
            long_line = True
    if not lines:
        return f'{shown} has no line {start + 1}; it has {total:,}.' if total else f'{shown} is empty.'
    numbered = '\n'.join(f'{number + 1:>6}\t{line}' for number, line in enumerate(lines, start))
    following = start + len(lines)
    rest = total - following
    if long_line:
        return numbered + (
            f'\n[line {following} is longer than a page ({MAX_PAGE_BYTES:,} bytes): only its start is shown; '
            f'{rest:,} more lines: read again with offset={following}]'
        )
    if rest <= 0:
        return numbered
    full = (
        f' (this page is full at {MAX_PAGE_BYTES:,} bytes)' if len(page) > MAX_PAGE_BYTES and len(lines) < count else ''
    )
    return numbered + f'\n[{rest:,} more lines{full}: read again with offset={following}]'
