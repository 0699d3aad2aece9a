"""The Debian packages that provide the programs skills run, for the apt line `skillshelf env` prints (or runs with
`--system`) and the one its Dockerfile runs.

Only programs whose package is known and stable are listed; another program is named as one to install by hand,
never guessed at. LibreOffice is its three applications document skills open (`libreoffice-calc` runs the Basic
macro that recalculates a workbook, which `libreoffice-core-nogui` alone cannot; `-impress` and `-writer` convert
decks and documents): `soffice` alone does not say which a skill uses.
"""

from __future__ import annotations

__all__ = ('DEBIAN_PACKAGES', 'ENVIRONMENT_PROGRAMS', 'debian_packages')

_LIBREOFFICE = ('libreoffice-calc', 'libreoffice-impress', 'libreoffice-writer')
_POPPLER = ('poppler-utils',)
DEBIAN_PACKAGES: dict[str, tuple[str, ...]] = {
    'soffice': _LIBREOFFICE,
    'libreoffice': _LIBREOFFICE,
    'pdftoppm': _POPPLER,
    'pdftotext': _POPPLER,
    'pdfinfo': _POPPLER,
    'pdfimages': _POPPLER,
    'pdfunite': _POPPLER,
    'pdfseparate': _POPPLER,
    'pdftocairo': _POPPLER,
    'qpdf': ('qpdf',),
    'pandoc': ('pandoc',),
    'node': ('nodejs',),
    'nodejs': ('nodejs',),
    'npm': ('npm',),
    'npx': ('npm',),
    'git': ('git',),
    'gh': ('gh',),
    'jq': ('jq',),
    'curl': ('curl',),
    'wget': ('wget',),
    'ffmpeg': ('ffmpeg',),
    'ffprobe': ('ffmpeg',),
    'magick': ('imagemagick',),
    'convert': ('imagemagick',),
    'identify': ('imagemagick',),
    'tesseract': ('tesseract-ocr',),
    'gs': ('ghostscript',),
    'dot': ('graphviz',),
    'inkscape': ('inkscape',),
    'rsvg-convert': ('librsvg2-bin',),
    'xmllint': ('libxml2-utils',),
    'sqlite3': ('sqlite3',),
    'psql': ('postgresql-client',),
    'rg': ('ripgrep',),
    'gcc': ('gcc',),
    'cc': ('gcc',),
    'make': ('make',),
    'zip': ('zip',),
    'unzip': ('unzip',),
    'xvfb-run': ('xvfb',),
    'docker': ('docker.io',),
    'bash': ('bash',),
    'pdflatex': ('texlive-latex-base',),
    'latexmk': ('latexmk',),
    'exiftool': ('libimage-exiftool-perl',),
    'timeout': ('coreutils',),
}
"""Program → the Debian packages that provide it (bookworm and later)."""
ENVIRONMENT_PROGRAMS = frozenset({'python', 'python3', 'pip', 'pip3'})
"""Programs the skills' environment itself provides (its `bin` comes first on `PATH`)."""


def debian_packages(names: tuple[str, ...]) -> tuple[str, ...] | None:
    """The Debian packages for a program known by any of `names` (a program and its alternatives), or `None`."""
    return next((DEBIAN_PACKAGES[name] for name in names if name in DEBIAN_PACKAGES), None)
