"""Unpack an Office file (a zip of XML parts) into a folder, so its parts can be read and edited.

python scripts/unpack.py report.docx unpacked/
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path, PurePosixPath


def main(source: str, folder: str) -> int:
    target = Path(folder)
    if target.exists() and any(target.iterdir()):
        print(f'{folder} is not empty: unpack into a new folder', file=sys.stderr)
        return 1
    try:
        archive = zipfile.ZipFile(source)
    except (OSError, zipfile.BadZipFile) as error:
        print(f'{source} is not an Office file (a zip archive): {error}', file=sys.stderr)
        return 1
    with archive:
        names = [info.filename for info in archive.infolist() if not info.is_dir()]
        for name in names:
            parts = PurePosixPath(name).parts
            if PurePosixPath(name).is_absolute() or '..' in parts:
                print(f'refused: the part {name!r} would land outside {folder}', file=sys.stderr)
                return 1
        archive.extractall(target)
    print(f'unpacked {len(names)} parts of {source} into {folder}:')
    for name in names:
        print(f'  {name}')
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 3:
        print('usage: unpack.py FILE FOLDER', file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
