"""Pack a folder of XML parts into an Office file, checking that every XML part is well-formed.

    python scripts/pack.py unpacked/ report-edited.docx --original report.docx

With `--original`, the parts keep the original's order and it names the parts that changed; `[Content_Types].xml`
always comes first, as Office expects.
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from pathlib import Path
from xml.etree import ElementTree

CONTENT_TYPES = '[Content_Types].xml'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('folder')
    parser.add_argument('output')
    parser.add_argument('--original', help='the file that was unpacked')
    args = parser.parse_args()
    folder = Path(args.folder)
    parts = {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob('*') if path.is_file()}
    if CONTENT_TYPES not in parts:
        print(f'{args.folder} has no {CONTENT_TYPES}: it is not an unpacked Office file', file=sys.stderr)
        return 1
    for name, data in sorted(parts.items()):
        if name.endswith(('.xml', '.rels')):
            try:
                ElementTree.fromstring(data)
            except ElementTree.ParseError as error:
                print(f'{name} is not well-formed XML ({error}); fix it and pack again', file=sys.stderr)
                return 1
    before: dict[str, bytes] = {}
    if args.original:
        with zipfile.ZipFile(args.original) as original:
            before = {info.filename: original.read(info) for info in original.infolist() if not info.is_dir()}
    order = [CONTENT_TYPES, *(name for name in before if name in parts and name != CONTENT_TYPES)]
    order += sorted(name for name in parts if name not in order)
    with zipfile.ZipFile(args.output, 'w', zipfile.ZIP_DEFLATED) as packed:
        for name in order:
            packed.writestr(name, parts[name])
    print(f'packed {len(order)} parts into {args.output}')
    if args.original:
        changed = [name for name in order if name in before and before[name] != parts[name]]
        added = [name for name in order if name not in before]
        removed = [name for name in before if name not in parts]
        print('changed: ' + (', '.join(changed) or 'nothing'))
        if added:
            print('added: ' + ', '.join(added))
        if removed:
            print('removed: ' + ', '.join(removed))
    return 0


if __name__ == '__main__':
    sys.exit(main())
