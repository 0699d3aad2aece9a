"""Write a fillable PDF form's fields to a JSON file: a list of {"name", "kind", "page", "value"}.

python scripts/fields.py form.pdf fields.json
"""

from __future__ import annotations

import json
import sys

from pypdf import PdfReader

KINDS = {'/Tx': 'text', '/Btn': 'button', '/Ch': 'choice', '/Sig': 'signature'}


def main(source: str, target: str) -> int:
    reader = PdfReader(source)
    fields = []
    for number, page in enumerate(reader.pages, 1):
        for annotation in page.get('/Annots') or []:
            widget = annotation.get_object()
            if widget.get('/Subtype') != '/Widget' or '/T' not in widget:
                continue
            value = widget.get('/V')
            kind = KINDS.get(str(widget.get('/FT')), 'other')
            fields.append({'name': str(widget['/T']), 'kind': kind, 'page': number, 'value': str(value or '')})
    if not fields:
        print(f'{source} has no fillable fields', file=sys.stderr)
        return 1
    with open(target, 'w', encoding='utf-8') as file:
        json.dump(fields, file, indent=2)
    print(f'{len(fields)} fields written to {target}: {", ".join(field["name"] for field in fields)}')
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 3:
        print('usage: fields.py FORM.pdf FIELDS.json', file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
