"""Convert a Word document to PDF with LibreOffice.

python scripts/to_pdf.py letter.docx letter.pdf
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile


def main(document: str, pdf: str) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        converted = subprocess.run(
            ['soffice', '--headless', '--norestore', '--convert-to', 'pdf', '--outdir', scratch, document],
            capture_output=True,
            text=True,
            timeout=120,
        )
        made = os.path.join(scratch, os.path.splitext(os.path.basename(document))[0] + '.pdf')
        if not os.path.isfile(made):
            print(f'LibreOffice made no PDF of {document}: {converted.stderr.strip()}', file=sys.stderr)
            return 1
        shutil.move(made, pdf)  # across file systems: the scratch folder is in /tmp
    print(f'converted {document} to {pdf} ({os.path.getsize(pdf)} bytes)')
    return 0


if __name__ == '__main__':
    sys.exit(main(*sys.argv[1:]))
