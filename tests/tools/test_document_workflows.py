"""Document workflows end to end, as the document skills people install run them: the application puts a user's file
in the run's workspace, the skill's scripts and the model's file tools work on it there, and the application reads
the result back.

The skills are the tests' own (`tests/tools/document_skills`, written for these tests; nothing of a third-party skill
is copied): `office-xml` unpacks a `.docx` (a zip of XML parts), the model edits the XML with its `edit_file` tool
and the skill packs it again; `pdf-form` lists a fillable PDF form's fields, fills them from a JSON file the model
writes and renders a PNG preview the model looks at. The Word file is built here with `zipfile`, the form with
`pypdf`.

Every test runs in four workspaces, as an application would set each up (`document_places`): `LocalWorkspace`,
`SkillSandbox`, and harness's `BubblewrapSandbox` and `DockerSandbox` (in CI's `.venv-harness`).
"""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import anyio
import pytest
from pydantic_ai import Agent, BinaryContent
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.messages import ModelMessage, ModelRequest, TextPart, ToolReturnPart, UserPromptPart
from pypdf import PdfReader, PdfWriter
from pypdf.generic import ArrayObject, DictionaryObject, FloatObject, NameObject, NumberObject, TextStringObject

from skillshelf import Skills, SkillSandbox, SkillWarning

from document_places import SKILLS, Place, harness
from sandbox_support import BWRAP_PROBLEM
from scripted_model import Script, call, tool_returns

WORD = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main'


def docx(paragraphs: Sequence[str]) -> bytes:
    """A minimal valid Word document: content types, the package relationship and the main part."""
    body = ''.join(f'<w:p><w:r><w:t>{text}</w:t></w:r></w:p>\n' for text in paragraphs)
    parts = {
        '[Content_Types].xml': (
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/word/document.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
        ),
        '_rels/.rels': (
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" '
            'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
            'Target="word/document.xml"/></Relationships>'
        ),
        'word/document.xml': (
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            f'<w:document xmlns:w="{WORD}">\n<w:body>\n{body}</w:body>\n</w:document>\n'
        ),
    }
    data = io.BytesIO()
    with zipfile.ZipFile(data, 'w', zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return data.getvalue()


def paragraphs_of(document: bytes) -> list[str]:
    """The text of each paragraph of a Word document, read the way an application would."""
    with zipfile.ZipFile(io.BytesIO(document)) as archive:
        root = ElementTree.fromstring(archive.read('word/document.xml'))
    return [''.join(text.text or '' for text in p.iter(f'{{{WORD}}}t')) for p in root.iter(f'{{{WORD}}}p')]


def parts_of(document: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(document)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def fillable_form(names: Sequence[str]) -> bytes:
    """A one-page PDF with an empty fillable text field for each of `names`."""
    writer = PdfWriter()
    writer.add_blank_page(width=300, height=60 + 40 * len(names))
    fields = ArrayObject()
    for number, name in enumerate(names):
        top = 40 + 40 * (len(names) - number)
        widget = DictionaryObject(
            {
                NameObject('/Type'): NameObject('/Annot'),
                NameObject('/Subtype'): NameObject('/Widget'),
                NameObject('/FT'): NameObject('/Tx'),
                NameObject('/T'): TextStringObject(name),
                NameObject('/Rect'): ArrayObject(
                    [FloatObject(20), FloatObject(top - 20), FloatObject(280), FloatObject(top)]
                ),
                NameObject('/F'): NumberObject(4),
                NameObject('/DA'): TextStringObject('/Helv 10 Tf 0 g'),
            }
        )
        fields.append(writer.add_annotation(0, widget).indirect_reference)
    helvetica = {'/Type': '/Font', '/Subtype': '/Type1', '/BaseFont': '/Helvetica'}
    writer.root_object[NameObject('/AcroForm')] = DictionaryObject(
        {
            NameObject('/Fields'): fields,
            NameObject('/DA'): TextStringObject('/Helv 10 Tf 0 g'),
            NameObject('/DR'): DictionaryObject(
                {
                    NameObject('/Font'): DictionaryObject(
                        {
                            NameObject('/Helv'): DictionaryObject(
                                {NameObject(k): NameObject(v) for k, v in helvetica.items()}
                            )
                        }
                    )
                }
            ),
        }
    )
    data = io.BytesIO()
    writer.write(data)
    return data.getvalue()


def form_values(pdf: bytes) -> dict[str, str | None]:
    return dict(PdfReader(io.BytesIO(pdf)).get_form_text_fields())


def grey_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and pixel rows of an 8-bit greyscale PNG without filters (what `render.py` writes)."""
    assert data.startswith(b'\x89PNG\r\n\x1a\n')
    width, height, depth, colour = struct.unpack('>IIBB', data[16:26])
    assert (depth, colour) == (8, 0)
    start = data.index(b'IDAT') + 4
    length = struct.unpack('>I', data[start - 8 : start - 4])[0]
    raw = zlib.decompress(data[start : start + length])
    rows = [raw[row * (width + 1) : (row + 1) * (width + 1)] for row in range(height)]
    assert all(row[0] == 0 for row in rows)
    return width, height, [row[1:] for row in rows]


def images_sent(messages: Sequence[ModelMessage]) -> list[BinaryContent]:
    """Every image in the messages a model request carried (in a tool's return or a user part)."""
    found: list[BinaryContent] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart | UserPromptPart):
                content = part.content
                items: list[Any] = list(content) if isinstance(content, list | tuple) else [content]
                found += [item for item in items if isinstance(item, BinaryContent) and item.is_image]
    return found


def test_a_word_file_is_unpacked_edited_and_packed_over_two_runs_of_a_conversation(place: Place) -> None:
    original = docx(['Quarterly report', 'Revenue grew by 4 percent.'])
    document = 'unpacked/word/document.xml'
    model = Script(
        [
            [call('load_skill', name='office-xml')],
            [call('run_skill_script', name='office-xml', script='scripts/unpack.py', args=['report.docx', 'unpacked'])],
            [call('read_file', path=document)],
            [TextPart('It says 4 percent. Which figure should it say?')],
            # the second run: the user answered; the unpacked files are still there
            [call('edit_file', path=document, old_text='grew by 4 percent', new_text='grew by 7 percent')],
            [
                call(
                    'run_skill_script',
                    name='office-xml',
                    script='scripts/pack.py',
                    args=['unpacked/', 'report-edited.docx', '--original', 'report.docx'],
                )
            ],
            [TextPart('Done: report-edited.docx says 7 percent.')],
        ]
    )
    agent = place.agent(model)
    first = agent.run_sync('Change the revenue figure in report.docx.', **place.put('report.docx', original))
    assert tool_returns(first.all_messages(), 'run_skill_script') == [
        'scripts/unpack.py exited with code 0.\nOutput:\nunpacked 3 parts of report.docx into unpacked:\n'
        '  [Content_Types].xml\n  _rels/.rels\n  word/document.xml'
    ]
    [xml] = tool_returns(first.all_messages(), 'read_file')
    assert '<w:t>Revenue grew by 4 percent.</w:t>' in str(xml)

    place.check_file_tools(model)
    second = agent.run_sync('Make it 7 percent.', message_history=first.all_messages())
    assert second.response.workspace_ref == first.response.workspace_ref
    [edited] = tool_returns(second.new_messages(), 'edit_file')
    assert str(edited).startswith('Edited ')
    assert tool_returns(second.new_messages(), 'run_skill_script') == [
        'scripts/pack.py exited with code 0.\nOutput:\npacked 3 parts into report-edited.docx\nchanged: word/document.xml'
    ]

    output = anyio.run(second.workspace.read_bytes, 'report-edited.docx')
    assert paragraphs_of(output) == ['Quarterly report', 'Revenue grew by 7 percent.']
    before, after = parts_of(original), parts_of(output)
    assert list(after) == list(before)
    assert {name for name in before if before[name] != after[name]} == {'word/document.xml'}
    assert anyio.run(second.workspace.read_bytes, 'report.docx') == original  # the user's file is untouched
    assert (place.host_folder(second) / 'report-edited.docx').read_bytes() == output


def test_a_pdf_form_is_filled_from_json_the_model_writes_and_its_preview_is_seen(place: Place) -> None:
    form = fillable_form(['full_name', 'date', 'city'])
    values = {'full_name': 'Ada Lovelace', 'city': 'London'}
    model = Script(
        [
            [call('load_skill', name='pdf-form')],
            [call('run_skill_script', name='pdf-form', script='scripts/fields.py', args=['form.pdf', 'fields.json'])],
            [call('read_file', path='fields.json')],
            [call('write_file', path='values.json', content=json.dumps(values))],
            [
                call(
                    'run_skill_script',
                    name='pdf-form',
                    script='scripts/fill.py',
                    args=['form.pdf', 'values.json', 'filled.pdf'],
                )
            ],
            [call('run_skill_script', name='pdf-form', script='scripts/render.py', args=['filled.pdf', 'preview.png'])],
            [call('read_file', path='preview.png')],
            [TextPart('Filled: filled.pdf. The date is still empty.')],
        ]
    )
    result = place.agent(model).run_sync('Fill in form.pdf for Ada Lovelace of London.', **place.put('form.pdf', form))
    assert tool_returns(result.all_messages(), 'run_skill_script') == [
        'scripts/fields.py exited with code 0.\nOutput:\n3 fields written to fields.json: full_name, date, city',
        'scripts/fill.py exited with code 0.\nOutput:\nfilled 2 of 3 fields into filled.pdf',
        'scripts/render.py exited with code 0.\nOutput:\nrendered 3 fields to preview.png (200x36 pixels)',
    ]
    place.check_file_tools(model)
    [listed, _] = tool_returns(result.all_messages(), 'read_file')
    assert '"name": "full_name"' in str(listed)
    assert '"kind": "text"' in str(listed)

    workspace = result.workspace
    filled = anyio.run(workspace.read_bytes, 'filled.pdf')
    assert form_values(filled) == {'full_name': 'Ada Lovelace', 'date': None, 'city': 'London'}
    assert form_values(anyio.run(workspace.read_bytes, 'form.pdf')) == {'full_name': None, 'date': None, 'city': None}

    preview = anyio.run(workspace.read_bytes, 'preview.png')
    width, height, rows = grey_png(preview)
    assert (width, height) == (200, 36)
    dark = [rows[band * 12 + 6].count(0) for band in range(3)]  # one dark pixel per character of each field
    assert dark == [len('Ada Lovelace'), 0, len('London')]
    [seen] = images_sent(model.requests[-1].messages)
    assert (seen.data, seen.media_type) == (preview, 'image/png')
    assert (place.host_folder(result) / 'preview.png').read_bytes() == preview


def test_the_agents_own_shell_and_file_tools_work_with_the_skills_files(tmp_path: Path) -> None:
    """With harness's `Shell` and `FileSystem`, the model runs a skill's script by the path the load names, without
    `run_skill_script`, and reads its output with harness's tools."""
    package = harness()
    if BWRAP_PROBLEM is not None:
        pytest.skip(BWRAP_PROBLEM)
    folder = tmp_path / 'work'
    folder.mkdir()
    (folder / 'report.docx').write_bytes(docx(['Hello']))
    unpack = 'python3 .skillshelf/skills/office-xml/scripts/unpack.py report.docx unpacked'
    model = Script(
        [
            [call('load_skill', name='office-xml')],
            [call('run_command', command=unpack)],
            [call('list_directory', path='unpacked/word')],
        ]
    )
    capabilities = [package.BubblewrapSandbox(LocalWorkspace(folder)), package.FileSystem(), package.Shell()]
    agent = Agent(model.model(), capabilities=[*capabilities, Skills(SKILLS, scripts=True)])
    messages = agent.run_sync('Unpack report.docx.').all_messages()
    [loaded] = tool_returns(messages, 'load_skill')
    assert f'Its files are in the workspace at {folder}/.skillshelf/skills/office-xml ' in loaded
    [ran] = tool_returns(messages, 'run_command')
    assert 'unpacked 3 parts of report.docx into unpacked:' in str(ran)
    [listing] = tool_returns(messages, 'list_directory')
    assert 'document.xml' in str(listing)
    assert (folder / 'unpacked' / 'word' / 'document.xml').read_text(encoding='utf-8').count('<w:t>Hello</w:t>') == 1


def test_the_sandbox_runs_scripts_on_the_prepared_environment_it_is_given_read_only(tmp_path: Path) -> None:
    """`SkillSandbox(python=...)`: a virtual environment with the skills' packages, mounted read-only; the agent's
    own environment stays out of it."""
    if BWRAP_PROBLEM is not None:
        pytest.skip(BWRAP_PROBLEM)
    venv = tmp_path / 'skills-venv'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(venv)], check=True, timeout=120)
    [site] = venv.glob('lib/python*/site-packages')
    helpers = site / 'office_helpers.py'
    helpers.write_text('NAME = "from the prepared environment"\n', encoding='utf-8')
    helpers.chmod(0o666)  # writable by anyone: only the read-only mount stops a write
    probe = (
        'import errno, sys\nimport office_helpers\nprint(office_helpers.NAME, sys.prefix)\n'
        'try:\n    open(office_helpers.__file__, "a")\n'
        'except OSError as error:\n    print("refused:", errno.errorcode[error.errno])\n'
    )
    library = tmp_path / 'lib'
    (library / 'probe' / 'scripts').mkdir(parents=True)
    (library / 'probe' / 'SKILL.md').write_text(
        '---\nname: probe\ndescription: Probe.\n---\nRun it.\n', encoding='utf-8'
    )
    (library / 'probe' / 'scripts' / 'probe.py').write_text(probe, encoding='utf-8')

    def probe_in(sandbox: SkillSandbox) -> str:
        model = Script(
            [[call('load_skill', name='probe')], [call('run_skill_script', name='probe', script='scripts/probe.py')]]
        )
        agent = Agent(model.model(), capabilities=[sandbox, Skills(library, scripts=True)])
        [reply] = tool_returns(agent.run_sync('probe').all_messages(), 'run_skill_script')
        return reply

    prepared = probe_in(SkillSandbox(tmp_path / 'ws', python=str(venv / 'bin' / 'python')))
    assert (
        prepared
        == f'scripts/probe.py exited with code 0.\nOutput:\nfrom the prepared environment {venv}\nrefused: EROFS'
    )
    with pytest.warns(SkillWarning, match="needs the Python module 'office_helpers'"):
        own = probe_in(SkillSandbox(tmp_path / 'ws'))  # the agent's own environment lacks it
    assert "The script needs the Python module 'office_helpers'" in own
