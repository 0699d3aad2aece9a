"""Edit a user's Word document with a skill: the application puts the file in the run's workspace, the skill's scripts
unpack it and pack it again, the model edits its XML in between, and the application reads the new file back.

This is how the document skills people install work (the docx skill of Anthropic's `skills` repository: unpack, edit
the XML with a file tool, pack). The skill here is a small one of our own, built in memory: a `SKILL.md` and two
scripts. Runs offline with a scripted model.

By default the workspace is skillshelf's bubblewrap sandbox (`SkillSandbox`: one folder per conversation, no network;
needs `bwrap`, e.g. `apt-get install bubblewrap`). `--local` uses pydantic-ai's `LocalWorkspace` in a temporary
folder instead: scripts run unsandboxed there, so the agent lets them run unasked with `preapproved_programs`.

    python examples/document_workflow.py
    python examples/document_workflow.py --local
"""

from __future__ import annotations

import argparse
import asyncio
import io
import tempfile
import uuid
import zipfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.workspaces import Workspace

from skillshelf import Skill, Skills, SkillSandbox
from skillshelf.sandbox import SandboxWorkspace

SKILL_MD = """\
---
name: docx-text
description: Change the text of a Word document (.docx). Use when a user asks to edit a .docx file.
---
1. Run `scripts/unpack.py FILE.docx FOLDER` to unpack it.
2. Edit `FOLDER/word/document.xml` with `edit_file`: change only the text inside `<w:t>` elements.
3. Run `scripts/pack.py FOLDER NEW.docx` and tell the user the new file's name. Never overwrite their file.
"""
UNPACK = """\
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as archive:
    archive.extractall(sys.argv[2])
    print('unpacked', ', '.join(archive.namelist()))
"""
PACK = """\
import pathlib, sys, zipfile
from xml.etree import ElementTree
folder = pathlib.Path(sys.argv[1])
parts = sorted((p for p in folder.rglob('*') if p.is_file()), key=lambda p: p.name != '[Content_Types].xml')
for part in parts:
    ElementTree.parse(part)  # refuse XML that is not well-formed
with zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as archive:
    for part in parts:
        archive.write(part, part.relative_to(folder).as_posix())
print('packed', len(parts), 'parts into', sys.argv[2])
"""
DOCX_TEXT = Skill.from_markdown(SKILL_MD, {'scripts/unpack.py': UNPACK, 'scripts/pack.py': PACK}, origin='example')

W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main'
PARTS = {
    '[Content_Types].xml': '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    '_rels/.rels': '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Target="word/document.xml" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"/></Relationships>',
    'word/document.xml': f'<w:document xmlns:w="{W}"><w:body>\n'
    '<w:p><w:r><w:t>Dear team,</w:t></w:r></w:p>\n'
    '<w:p><w:r><w:t>The review meeting is on Monday at 10:00.</w:t></w:r></w:p>\n'
    '</w:body></w:document>\n',
}


def letter() -> bytes:
    """The user's document: a minimal Word file (a zip of XML parts)."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, 'w') as archive:
        for name, text in PARTS.items():
            archive.writestr(name, text)
    return data.getvalue()


def paragraphs(document: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(document)) as archive:
        root = ElementTree.fromstring(archive.read('word/document.xml'))
    return [''.join(t.text or '' for t in p.iter(f'{{{W}}}t')) for p in root.iter(f'{{{W}}}p')]


def scripted_model() -> FunctionModel:
    """What a model does with the skill, one response per request."""
    run = 'run_skill_script'
    steps: list[list[Any]] = [
        [ToolCallPart('load_skill', {'name': 'docx-text'})],
        [ToolCallPart(run, {'name': 'docx-text', 'script': 'scripts/unpack.py', 'args': ['letter.docx', 'letter']})],
        [ToolCallPart('read_file', {'path': 'letter/word/document.xml'})],
        [ToolCallPart('edit_file', {'path': 'letter/word/document.xml', 'old_text': 'Monday', 'new_text': 'Thursday'})],
        [ToolCallPart(run, {'name': 'docx-text', 'script': 'scripts/pack.py', 'args': ['letter', 'letter-new.docx']})],
        [TextPart('Done: letter-new.docx says the meeting is on Thursday; your letter.docx is unchanged.')],
    ]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = sum(isinstance(message, ModelResponse) for message in messages)
        return ModelResponse(parts=steps[min(turn, len(steps) - 1)])

    return FunctionModel(respond, model_name='scripted')


def show(messages: list[ModelMessage]) -> None:
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                print(f'model -> {part.tool_name}({part.args_as_json_str()})')
            elif isinstance(part, ToolReturnPart):
                lines = part.model_response_str().splitlines()
                more = f' [{len(lines) - 3} more lines]' if len(lines) > 3 else ''
                print('tool  <- ' + '\n         '.join(lines[:3]) + more)
            elif isinstance(part, TextPart):
                print(f'model : {part.content}')


async def main(local: bool) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        # 1. The application puts the user's file in the conversation's workspace, before the first run.
        extra: dict[str, Any] = {}
        sandbox: SkillSandbox | None = None
        if local:
            folder = Path(temporary)
            workspace: AbstractCapability[Any] = LocalWorkspace(folder)
            (folder / 'letter.docx').write_bytes(letter())
        else:
            sandbox = SkillSandbox(Path(temporary) / 'workspaces')  # default root: a folder in the temp directory
            workspace = sandbox
            # The conversation's workspace, made now so the file can go in first; only this conversation may reopen it.
            conversation = str(uuid.uuid4())
            backend = SandboxWorkspace(sandbox, conversation=conversation)
            await Workspace(backend).write_bytes('letter.docx', letter())
            extra.update(workspace=backend, conversation_id=conversation)

        # 2. The run: the skill's scripts and the model's file tools all work in that workspace. In the sandbox the
        # scripts run without asking anyone; on the host (--local) nothing isolates them, so the application names
        # the interpreter they run on as a program that may run unasked (else they would be refused: no one is asked).
        programs = ['python3'] if local else []
        skills = Skills(skills=[DOCX_TEXT], scripts=True, file_tools=True, preapproved_programs=programs)
        agent = Agent(scripted_model(), capabilities=[workspace, skills])
        result = await agent.run('In letter.docx, move the meeting to Thursday.', **extra)
        show(result.new_messages())

        # 3. The application reads the new file back, through the workspace the run used.
        edited = await result.workspace.read_bytes('letter-new.docx')
        print(f'before: {paragraphs(letter())[1]}')
        print(f'after : {paragraphs(edited)[1]}')
        if sandbox is not None and (ref := result.response.workspace_ref) is not None:
            # The sandbox keeps the conversation's folder on the host until you delete it.
            folder = sandbox.folder(ref)
            assert folder is not None
            files = sorted(path.name for path in folder.iterdir() if not path.name.startswith('.'))
            print(f'in the conversation folder: {", ".join(files)}')
            await sandbox.delete(ref)  # the conversation is over (or `await sandbox.prune(older_than=...)`)


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--local', action='store_true', help="pydantic-ai's LocalWorkspace instead of the sandbox")
    asyncio.run(main(parser.parse_args().local))
