"""Fill a PDF form's text fields from a JSON object of field name -> text, writing a new file.

python scripts/fill.py form.pdf values.json filled.pdf
"""

from __future__ import annotations

import json
import sys

from pypdf import PdfReader, PdfWriter


def main(source: str, values_file: str, target: str) -> int:
    with open(values_file, encoding='utf-8') as file:
        values = json.load(file)
    if not isinstance(values, dict) or not all(isinstance(text, str) for text in values.values()):
        print(f'{values_file} must hold one JSON object of field name -> text', file=sys.stderr)
        return 1
    reader = PdfReader(source)
    names = set(reader.get_fields() or {})
    unknown = sorted(set(values) - names)
    if unknown:
        print(f'the form has no field {", ".join(unknown)}; its fields are {", ".join(sorted(names))}', file=sys.stderr)
        return 1
    writer = PdfWriter(clone_from=reader)
    for page in writer.pages:
        writer.update_page_form_field_values(page, values, auto_regenerate=False)
    writer.write(target)
    print(f'filled {len(values)} of {len(names)} fields into {target}')
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 4:
        print('usage: fill.py FORM.pdf VALUES.json FILLED.pdf', file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
