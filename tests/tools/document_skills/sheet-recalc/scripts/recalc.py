"""Recalculate every formula of an .xlsx workbook with LibreOffice, save it, and print each formula cell's value.

python scripts/recalc.py budget.xlsx

A Basic macro in LibreOffice's user profile (under $HOME) opens the document, recalculates it and stores it: macros
of the profile's own `Standard` library run without a security prompt. The profile is made by a first start of
LibreOffice when there is none.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile

PROFILE = os.path.join(os.path.expanduser('~'), '.config', 'libreoffice', '4', 'user')
MODULE = os.path.join(PROFILE, 'basic', 'Standard', 'Module1.xba')
MACRO = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE script:module PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "module.dtd">
<script:module xmlns:script="http://openoffice.org/2000/script" script:name="Module1" script:language="StarBasic">
Sub RecalculateAndSave
    ThisComponent.calculateAll()
    ThisComponent.store()
    ThisComponent.close(True)
End Sub
</script:module>
"""
URL = 'vnd.sun.star.script:Standard.Module1.RecalculateAndSave?language=Basic&location=application'
CELL = re.compile(r'<c r="([A-Z]+[0-9]+)"[^>]*>(.*?)</c>', re.DOTALL)


def soffice(*args: str) -> None:
    done = subprocess.run(['soffice', '--headless', '--norestore', *args], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f'soffice exited with {done.returncode}: {done.stderr.strip()}')


def formulas(workbook: str) -> list[tuple[str, str, str | None]]:
    """Each formula cell of the first sheet: its reference, formula and stored value."""
    with zipfile.ZipFile(workbook) as archive:
        sheet = archive.read('xl/worksheets/sheet1.xml').decode('utf-8')
    found = []
    for reference, body in CELL.findall(sheet):
        formula = re.search(r'<f[^>]*>(.*?)</f>', body, re.DOTALL)
        value = re.search(r'<v>(.*?)</v>', body, re.DOTALL)
        if formula is not None:
            found.append((reference, formula.group(1), value.group(1) if value else None))
    return found


def main(workbook: str) -> int:
    if not os.path.isfile(MODULE):
        soffice('--terminate_after_init')
    with open(MODULE, 'w', encoding='utf-8') as file:
        file.write(MACRO)
    soffice(URL, os.path.abspath(workbook))
    cells = formulas(workbook)
    print(f'recalculated {len(cells)} formulas of {workbook}:')
    for reference, formula, value in cells:
        print(f'  {reference} ={formula} -> {value}')
    return 0 if all(value is not None for _, _, value in cells) else 1


if __name__ == '__main__':
    sys.exit(main(*sys.argv[1:]))
