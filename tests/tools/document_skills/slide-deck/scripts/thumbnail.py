"""Render a deck's first slide to a PNG: LibreOffice converts the deck to PDF, poppler's `pdftoppm` renders it.

python scripts/thumbnail.py deck.pptx deck.png
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import tempfile

DPI = 40


def main(deck: str, image: str) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        converted = subprocess.run(
            ['soffice', '--headless', '--norestore', '--convert-to', 'pdf', '--outdir', scratch, deck],
            capture_output=True,
            text=True,
            timeout=120,
        )
        pdf = os.path.join(scratch, os.path.splitext(os.path.basename(deck))[0] + '.pdf')
        if not os.path.isfile(pdf):
            print(f'LibreOffice made no PDF of {deck}: {converted.stderr.strip()}', file=sys.stderr)
            return 1
        base = os.path.splitext(image)[0]
        subprocess.run(['pdftoppm', '-png', '-r', str(DPI), '-f', '1', '-singlefile', pdf, base], check=True)
    with open(base + '.png', 'rb') as file:
        width, height = struct.unpack('>II', file.read(24)[16:24])
    if base + '.png' != image:
        os.replace(base + '.png', image)
    print(f'rendered {deck} to {image} ({width}x{height} pixels)')
    return 0


if __name__ == '__main__':
    sys.exit(main(*sys.argv[1:]))
