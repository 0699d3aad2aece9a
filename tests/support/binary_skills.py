"""Anthropic-shaped skills with binary files, made here (no third-party file is copied): `canvas` is laid out like
anthropics/skills' canvas-design (fonts beside the `SKILL.md`, a picture, a bundled archive, a script that uses them
all), with a font larger than one model read (256 KiB) so a copy that stopped at the read limit would show.

`canvas_files()` are its files by path, `write_canvas(root)` writes the folder, `canvas_markdown()` is its
`SKILL.md`, and `expected_report()` is what its script prints when every byte arrived.
"""

from __future__ import annotations

import hashlib
import io
import random
import struct
import zipfile
import zlib
from pathlib import Path

__all__ = ('BINARY', 'CANVAS', 'canvas_files', 'canvas_markdown', 'expected_report', 'png', 'write_canvas')

CANVAS = 'canvas'
"""The skill's name."""

INSPECT = '''\
"""Print each file of this skill with its size and SHA-256, the PNG's size and the archive's member."""
import hashlib
import os
import struct
import sys
import zipfile

here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for relative in sys.argv[1:]:
    with open(os.path.join(here, relative), 'rb') as stream:
        data = stream.read()
    print(relative, len(data), hashlib.sha256(data).hexdigest())
with open(os.path.join(here, 'assets', 'swatch.png'), 'rb') as stream:
    width, height = struct.unpack('>II', stream.read(24)[16:24])
print('png', width, height)
with zipfile.ZipFile(os.path.join(here, 'templates', 'bundle.zip')) as bundle:
    print('zip', bundle.read('palette.txt').decode())
'''


def png(width: int, height: int) -> bytes:
    """A real PNG of one colour, written with zlib alone."""
    row = b'\x00' + b'\x2a\x80\xff' * width
    raw = zlib.compress(row * height)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))

    header = struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0)
    return b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + chunk(b'IDAT', raw) + chunk(b'IEND', b'')


def _font(size: int) -> bytes:
    """Bytes shaped like a TrueType file (its header, then noise with NULs and every byte value), `size` long."""
    noise = random.Random(7).randbytes(size - 12)
    return b'\x00\x01\x00\x00\x00\x0c\x00\x80\x00\x03\x00\x40' + noise


def _bundle() -> bytes:
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, 'w', zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo('palette.txt', (2024, 1, 1, 0, 0, 0)), 'ink #2a80ff')  # same bytes every time
    return stream.getvalue()


def canvas_files() -> dict[str, bytes]:
    """The skill's files (besides `SKILL.md`), by relative path."""
    return {
        'canvas-fonts/Mono-Regular.ttf': _font(300_000),
        'canvas-fonts/Mono-Bold.ttf': _font(40_000)[::-1],
        'canvas-fonts/OFL.txt': b'Open Font License (a made-up copy for the tests).\n',
        'assets/swatch.png': png(7, 5),
        'templates/bundle.zip': _bundle(),
        'scripts/inspect.py': INSPECT.encode(),
    }


def canvas_markdown(body: str = 'Draw with the fonts in canvas-fonts/.') -> str:
    """The skill's `SKILL.md`."""
    return f'---\nname: {CANVAS}\ndescription: Make posters and pictures with the bundled fonts.\n---\n{body}\n'


def write_canvas(root: Path, body: str = 'Draw with the fonts in canvas-fonts/.') -> Path:
    """Write the skill folder `root/canvas` and return it."""
    folder = root / CANVAS
    for relative, data in canvas_files().items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_bytes(data)
    (folder / 'SKILL.md').write_text(canvas_markdown(body), encoding='utf-8')
    return folder


BINARY = ('canvas-fonts/Mono-Regular.ttf', 'canvas-fonts/Mono-Bold.ttf', 'assets/swatch.png', 'templates/bundle.zip')
"""The binary files, as `scripts/inspect.py` is asked about them."""


def expected_report() -> list[str]:
    """The lines `scripts/inspect.py` prints for `BINARY` when every byte arrived."""
    files = canvas_files()
    lines = [f'{path} {len(files[path])} {hashlib.sha256(files[path]).hexdigest()}' for path in BINARY]
    return [*lines, 'png 7 5', 'zip ink #2a80ff']
