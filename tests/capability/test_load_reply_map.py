"""The load reply is the body whole, then a short map of the skill's files: the ones the body names, and folders of
many similar files summed up; a folder's path lists its files in pages."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import Skills
from skillshelf.content.file_map import MAP_CHARACTERS, file_map, named_files

from skill_files import write_skill

BODY = (
    '# Office documents\n\nUnpack with `python scripts/office/unpack.py in.docx out/`, then edit the XML, then '
    'run scripts/office/pack.py. Comments: see ${SKILL_DIR}/scripts/comment.py and reference.md.'
)


def office_files() -> dict[str, str]:
    """A skill laid out like Anthropic's docx: a few scripts, and folders of many schema and template files."""
    files = {f'scripts/office/schemas/ecma/part-{index:02}.xsd': '<xs:schema/>' for index in range(30)}
    files |= {f'scripts/office/schemas/microsoft/wml-{index}.xsd': '<xs:schema/>' for index in range(9)}
    files |= {f'scripts/templates/template-{index}.xml': '<t/>' for index in range(5)}
    files |= {f'scripts/office/validators/{name}.py': 'pass\n' for name in ('base', 'docx', 'pptx', 'xlsx')}
    files |= dict.fromkeys(
        ('scripts/office/unpack.py', 'scripts/office/pack.py', 'scripts/comment.py', 'scripts/__init__.py'),
        'print("ok")\n',
    )
    files['reference.md'] = '# Reference\n'
    files['LICENSE.txt'] = 'Licensed.\n'
    return files


def run_reads(library: Path, reads: list[dict[str, object]]) -> list[str]:
    """Load `office`, then call `read_skill_resource` with each of `reads`; the replies, the load's first."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('load_skill', {'name': 'office'})])
        if len(messages) == 3:
            return ModelResponse(
                parts=[ToolCallPart('read_skill_resource', {'name': 'office', **read}) for read in reads]
            )
        return ModelResponse(parts=[TextPart('done')])

    result = Agent(FunctionModel(respond), capabilities=[Skills(library)]).run_sync('edit the document')
    return [
        str(part.content)
        for message in result.all_messages()
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def test_a_skill_with_many_schema_files_loads_as_its_body_and_a_short_map(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, 'office', BODY, files=office_files())
    loaded, *_ = run_reads(tmp_path, [])
    body = BODY.replace('${SKILL_DIR}', str(folder.resolve()))  # no workspace: the folder on the host
    assert loaded.startswith(f"Loaded skill 'office'.\n\n{body}\n\n")
    beyond_body = loaded.replace(body, '')
    assert len(beyond_body) < 1000, beyond_body  # the flat list of paths alone is over 2,500 characters
    map_lines = loaded.split(body, 1)[1].strip().splitlines()
    assert map_lines == [
        "Files (read with `read_skill_resource`; a folder's path lists its files):",
        'Named in the instructions: reference.md, scripts/comment.py, scripts/office/pack.py, '
        'scripts/office/unpack.py.',
        'Others: LICENSE.txt, scripts/__init__.py, scripts/office/schemas/ (39 .xsd), scripts/office/validators/ '
        '(4 .py), scripts/templates/ (5 .xml).',
    ]


def test_a_summed_up_folder_lists_its_files_in_pages(tmp_path: Path) -> None:
    write_skill(tmp_path, 'office', BODY, files=office_files())
    _, listing, first_page, second_page = run_reads(
        tmp_path,
        [
            {'path': 'scripts/templates/'},
            {'path': 'scripts/office/schemas', 'limit': 20},
            {'path': 'scripts/office/schemas', 'offset': 20, 'limit': 20},
        ],
    )
    assert listing == '5 files in the folder scripts/templates/:\n' + ''.join(
        f'scripts/templates/template-{index}.xml\n' for index in range(5)
    )
    assert first_page.startswith('39 files in the folder scripts/office/schemas/:\nscripts/office/schemas/ecma/part-00')
    assert first_page.endswith('[lines 1-20 of 40; read again with offset=20 for more]')
    assert second_page.endswith('scripts/office/schemas/microsoft/wml-8.xsd\n\n[lines 21-40 of 40]')


def test_a_short_list_of_files_is_shown_whole() -> None:
    files = ['LICENSE.txt', 'forms.md', 'scripts/check.py', 'scripts/fill.py']
    assert file_map(files, 'Read forms.md.') == (
        'Files (read with `read_skill_resource`): LICENSE.txt, forms.md, scripts/check.py, scripts/fill.py.'
    )


def test_files_are_named_by_path_module_or_unique_file_name() -> None:
    files = ['scripts/fill.py', 'scripts/check.py', 'scripts/util/check.py', 'tools/render.py', 'guide.md', 'a.md']
    instructions = (
        'Run /ws/.skills/forms/scripts/fill.py, then `python -m tools.render`. See guide.md, and check.py (two '
        'files have that name, so it names neither). A sentence ending in guide.md.'
    )
    assert named_files(files, instructions) == ['scripts/fill.py', 'tools/render.py', 'guide.md']


def test_a_deep_folder_of_many_files_is_one_entry() -> None:
    files = ['README.md', *(f'data/set-{index:03}/only.csv' for index in range(200))]
    assert file_map(files, 'Read README.md.').splitlines()[1:] == [
        'Named in the instructions: README.md.',
        'Others: data/ (200 .csv).',
    ]


def test_a_map_too_long_even_summed_up_is_cut_with_how_to_list_the_rest() -> None:
    files = [f'note-{index:03}.md' for index in range(200)]  # no folder to sum them up in
    text = file_map(files, 'No file is named.')
    assert len(text) < MAP_CHARACTERS + 200
    shown = text.splitlines()[1].removeprefix('All: ').split(', ')
    assert (
        shown[-1] == f'note-{len(shown) - 1:03}.md and {200 - len(shown)} more files (the path "." lists every file).'
    )
