"""Render a preview of a PDF form's fields as a PNG image: one band per field, dark where it holds text (one dark
column of pixels per character). Written with the standard library alone.

    python scripts/render.py filled.pdf preview.png
"""

from __future__ import annotations

import struct
import sys
import zlib

from pypdf import PdfReader

WIDTH = 200
BAND = 12


def png(rows: list[bytes], width: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))

    header = struct.pack('>IIBBBBB', width, len(rows), 8, 0, 0, 0, 0)  # 8-bit greyscale
    pixels = zlib.compress(b''.join(b'\x00' + row for row in rows))
    return b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + chunk(b'IDAT', pixels) + chunk(b'IEND', b'')


def main(source: str, target: str) -> int:
    fields = PdfReader(source).get_fields() or {}
    rows: list[bytes] = []
    for field in fields.values():
        text = str(field.get('/V') or '')
        dark = min(len(text), WIDTH - 2)
        line = b'\x80' + b'\x00' * dark + b'\xff' * (WIDTH - 2 - dark) + b'\x80'
        rows += [b'\x80' * WIDTH, *[line] * (BAND - 2), b'\x80' * WIDTH]
    with open(target, 'wb') as file:
        file.write(png(rows, WIDTH))
    print(f'rendered {len(fields)} fields to {target} ({WIDTH}x{len(rows)} pixels)')
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 3:
        print('usage: render.py FILLED.pdf PREVIEW.png', file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
