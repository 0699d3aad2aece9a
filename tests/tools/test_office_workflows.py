"""Office workflows with LibreOffice and Node, as the document skills people install run them: recalculating a
workbook's formulas with a LibreOffice Basic macro, a deck made with `pptxgenjs` and rendered to an image, a letter
made with the npm package `docx` and converted to PDF.

The skills are the tests' own (`tests/tools/document_skills`: `sheet-recalc`, `slide-deck`, `word-letter`) and use
the same tools as the office skills people install: `soffice` (a Basic macro in the user profile, `--convert-to
pdf`), poppler's `pdftoppm`, and npm packages installed globally. Each test runs in `LocalWorkspace`, `SkillSandbox`
and harness's `BubblewrapSandbox` and `DockerSandbox` (`document_places`), and skips only where a program is not
installed; CI installs them all and sets `SKILLSHELF_REQUIRE_OFFICE`, which turns those skips into failures (and
`SKILLSHELF_REQUIRE_DOCKER` for the containers, whose image has them all).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import struct
import zipfile
import zlib

import anyio
import pytest
from pydantic_ai.messages import TextPart
from pypdf import PdfReader

from skillshelf.scripts import ScriptLimits
from skillshelf.scripts.node import global_node_modules

from document_places import Place
from scripted_model import Script, call, tool_returns

HARNESS_NETWORK = True
"""harness's sandbox without the network refuses every Unix socket `bind` (its seccomp filter), and LibreOffice binds
one for itself at every start (its single-instance pipe; `soffice` exits 1): there it runs only with `network=True`.
skillshelf's sandbox refuses no socket (only `fallocate` and `io_uring`), its network namespace is empty either way."""
LIBREOFFICE_LIMITS = ScriptLimits(timeout=180)
"""LibreOffice's first start makes its user profile: seconds on a busy machine."""
SHEET = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'


def require(place: Place, *programs: str, node_packages: tuple[str, ...] = ()) -> None:
    """Skip unless `programs` are on `PATH` and `node_packages` installed globally; where CI installed them
    (`SKILLSHELF_REQUIRE_OFFICE`), fail instead. A container has its image's, not this machine's (`document_image`
    installs them all)."""
    if place.kind == 'docker':
        return
    node_modules = global_node_modules()
    missing = [program for program in programs if shutil.which(program) is None]
    missing += [
        f'the npm package {package} (npm install -g {package})'
        for package in node_packages
        if node_modules is None or not os.path.isdir(os.path.join(node_modules, package))
    ]
    if not missing:
        return
    reason = f'not installed here: {", ".join(missing)}'
    if os.environ.get('SKILLSHELF_REQUIRE_OFFICE'):
        pytest.fail(reason)
    pytest.skip(reason)


def workbook() -> bytes:
    """A one-sheet workbook as a program writes one: two numbers and two formulas, without their values."""
    cells = (
        '<row r="1"><c r="A1"><v>6</v></c><c r="B1"><v>7</v></c><c r="C1"><f>A1*B1</f></c></row>'
        '<row r="2"><c r="A2"><f>SUM(A1:C1)</f></c></row>'
    )
    relationships = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'
    package = 'http://schemas.openxmlformats.org/package/2006/relationships'
    office = 'application/vnd.openxmlformats-officedocument.spreadsheetml'
    parts = {
        '[Content_Types].xml': (
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/xl/workbook.xml" ContentType="{office}.sheet.main+xml"/>'
            f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{office}.worksheet+xml"/></Types>'
        ),
        '_rels/.rels': (
            f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="{package}">'
            f'<Relationship Id="rId1" Type="{relationships}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
        ),
        'xl/workbook.xml': (
            f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook xmlns="{SHEET}" '
            f'xmlns:r="{relationships}"><sheets><sheet name="Budget" sheetId="1" r:id="rId1"/></sheets></workbook>'
        ),
        'xl/_rels/workbook.xml.rels': (
            f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="{package}">'
            f'<Relationship Id="rId1" Type="{relationships}/worksheet" Target="worksheets/sheet1.xml"/>'
            '</Relationships>'
        ),
        'xl/worksheets/sheet1.xml': (
            f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            f'<worksheet xmlns="{SHEET}"><sheetData>{cells}</sheetData></worksheet>'
        ),
    }
    data = io.BytesIO()
    with zipfile.ZipFile(data, 'w', zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return data.getvalue()


def stored_values(xlsx: bytes) -> dict[str, str]:
    """The value each formula cell of the first sheet stores, as a reader of the file sees it."""
    with zipfile.ZipFile(io.BytesIO(xlsx)) as archive:
        sheet = archive.read('xl/worksheets/sheet1.xml').decode('utf-8')
    cells = re.findall(r'<c r="([A-Z]+[0-9]+)"[^>]*>(.*?)</c>', sheet, re.DOTALL)
    return {
        reference: value.group(1)
        for reference, body in cells
        if '<f' in body and (value := re.search(r'<v>(.*?)</v>', body)) is not None
    }


def rgb_pixels(png: bytes) -> tuple[int, int, list[list[tuple[int, int, int]]]]:
    """Width, height and RGB pixel rows of an 8-bit RGB PNG (what `pdftoppm -png` writes), filters undone."""
    assert png.startswith(b'\x89PNG\r\n\x1a\n')
    width, height, depth, colour = struct.unpack('>IIBB', png[16:26])
    assert (depth, colour) == (8, 2)
    compressed, offset = b'', 8
    while offset < len(png):
        length, kind = struct.unpack('>I4s', png[offset : offset + 8])
        if kind == b'IDAT':
            compressed += png[offset + 8 : offset + 8 + length]
        offset += 12 + length
    raw = zlib.decompress(compressed)
    stride, rows, previous = width * 3, [], bytearray(width * 3)
    for number in range(height):
        start = number * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - 3] if i >= 3 else 0
            up, corner = previous[i], previous[i - 3] if i >= 3 else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                nearest = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))
                line[i] = (line[i] + nearest[2]) & 0xFF
        rows.append([(line[x], line[x + 1], line[x + 2]) for x in range(0, stride, 3)])
        previous = line
    return width, height, rows


def test_a_workbooks_formulas_are_recalculated_by_a_libreoffice_basic_macro(place: Place) -> None:
    """The macro goes into LibreOffice's user profile under `HOME`, which must be writable where scripts run."""
    require(place, 'soffice')
    model = Script(
        [
            [call('load_skill', name='sheet-recalc')],
            [call('run_skill_script', name='sheet-recalc', script='scripts/recalc.py', args=['budget.xlsx'])],
            [TextPart('C1 comes to 42 and A2 to 55; budget.xlsx now stores them.')],
        ]
    )
    agent = place.agent(model, LIBREOFFICE_LIMITS)
    assert stored_values(workbook()) == {}
    result = agent.run_sync('What do the formulas in budget.xlsx come to?', **place.put('budget.xlsx', workbook()))
    assert tool_returns(result.all_messages(), 'run_skill_script') == [
        'scripts/recalc.py exited with code 0.\nOutput:\nrecalculated 2 formulas of budget.xlsx:\n'
        '  C1 =A1*B1 -> 42\n  A2 =SUM(A1:C1) -> 55'
    ]
    assert stored_values(anyio.run(result.workspace.read_bytes, 'budget.xlsx')) == {'C1': '42', 'A2': '55'}


def test_a_deck_made_with_pptxgenjs_is_rendered_to_an_image(place: Place) -> None:
    """`require('pptxgenjs')` finds the global npm package; LibreOffice and `pdftoppm` draw the slide."""
    require(place, 'soffice', 'pdftoppm', 'node', node_packages=('pptxgenjs',))
    model = Script(
        [
            [call('load_skill', name='slide-deck')],
            [
                call(
                    'run_skill_script',
                    name='slide-deck',
                    script='scripts/deck.js',
                    args=['deck.pptx', 'Quarterly results'],
                )
            ],
            [
                call(
                    'run_skill_script', name='slide-deck', script='scripts/thumbnail.py', args=['deck.pptx', 'deck.png']
                )
            ],
            [TextPart('deck.pptx is ready; deck.png shows its slide.')],
        ]
    )
    result = place.agent(model, LIBREOFFICE_LIMITS).run_sync('Make a one-slide deck titled Quarterly results.')
    assert tool_returns(result.all_messages(), 'run_skill_script') == [
        'scripts/deck.js exited with code 0.\nOutput:\nwrote deck.pptx: 1 slide, "Quarterly results"',
        'scripts/thumbnail.py exited with code 0.\nOutput:\nrendered deck.pptx to deck.png (400x226 pixels)',
    ]
    with zipfile.ZipFile(io.BytesIO(anyio.run(result.workspace.read_bytes, 'deck.pptx'))) as deck:
        assert 'Quarterly results' in deck.read('ppt/slides/slide1.xml').decode('utf-8')

    # 40 pixels an inch: the red box spans 6-9 in across and 3-5 in down, the title 0.3-1.3 in down
    width, height, rows = rgb_pixels(anyio.run(result.workspace.read_bytes, 'deck.png'))
    assert (width, height) == (400, 226)  # 5.625 in, rounded up
    red, green, blue = rows[160][300]
    assert (red > 200, green < 60, blue < 60) == (True, True, True), rows[160][300]
    assert rows[100][100] == (255, 255, 255)
    dark = sum(1 for row in rows[12:52] for pixel in row[:360] if max(pixel) < 100)
    assert dark > 200, 'the title is drawn in black'
    assert all(max(pixel) >= 100 for row in rows[60:115] for pixel in row), 'nothing dark below the title'


def test_a_letter_made_with_the_docx_package_is_converted_to_pdf(place: Place) -> None:
    require(place, 'soffice', 'node', node_packages=('docx',))
    lines = ['Dear Ada', 'Thank you for the engines.', 'Yours, Charles']
    model = Script(
        [
            [call('load_skill', name='word-letter')],
            [call('run_skill_script', name='word-letter', script='scripts/letter.js', args=['letter.docx', *lines])],
            [
                call(
                    'run_skill_script',
                    name='word-letter',
                    script='scripts/to_pdf.py',
                    args=['letter.docx', 'letter.pdf'],
                )
            ],
            [TextPart('letter.pdf is ready.')],
        ]
    )
    result = place.agent(model, LIBREOFFICE_LIMITS).run_sync('Write Ada a thank-you letter as a PDF.')
    written, converted = tool_returns(result.all_messages(), 'run_skill_script')
    assert written == 'scripts/letter.js exited with code 0.\nOutput:\nwrote letter.docx: 3 paragraphs'
    pdf = anyio.run(result.workspace.read_bytes, 'letter.pdf')
    assert converted == (
        f'scripts/to_pdf.py exited with code 0.\nOutput:\nconverted letter.docx to letter.pdf ({len(pdf)} bytes)'
    )
    [page] = PdfReader(io.BytesIO(pdf)).pages
    assert page.extract_text().splitlines() == lines
