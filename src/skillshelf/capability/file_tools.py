"""File tools on the run's workspace, for agents without their own (opt-in: `Skills(file_tools=True)`).

Skills written for Claude Code expect the model to read, write and edit files (unpack a `.docx`, edit its XML, pack
it again) and to run a command now and then. An agent that has its own file tools (pydantic-ai-harness `FileSystem`
and `Shell`) uses those on the same workspace; these are for the others: `read_file` (text by lines, images and
PDFs as content the model sees), `write_file`, `edit_file`, `list_files`, and `run_command`, which always waits for
approval unless a loaded skill's `allowed-tools` pre-approves the command (`Bash(git diff:*)`).

Every path is relative to the workspace's working directory (absolute ones must lie inside it), and a symlink that
leads out of it is refused.

A stopgap: these tools do what pydantic-ai-harness's `FileSystem` and `Shell` do, because skillshelf cannot depend on
harness while it pins pydantic-ai-slim exactly (harness 0.62.0, the latest, requires `pydantic-ai-slim==2.62.0`;
skillshelf takes `>=2.60,<3` and is tested on 2.68). When a harness release accepts a range of pydantic-ai,
`file_tools=True` can hand the model harness's tools instead, and this module goes.
"""

from __future__ import annotations

import posixpath
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import UserError
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.workspaces import Workspace, WorkspaceError, WorkspaceOutputLimitError, WorkspaceTimeoutError

from .._text import shown
from ..scripts.environment import SkillEnvironment, shell_setup
from ..scripts.errors import CommandStoppedError, WorkspaceFullError
from ..scripts.limits import ScriptLimits
from ..scripts.materialise import SKILLS_FOLDER
from .file_pages import MAX_READ_LINES, read_page
from .operations import Operation, meta_tool_tag
from .workspace_errors import contained, stopped_at_limit, stopped_at_time_limit, workspace_problem

__all__ = ('COMMAND_TOOL_NAME', 'FILE_TOOL_NAMES', 'build_file_toolset')

COMMAND_TOOL_NAME = 'run_command'
FILE_TOOL_NAMES = ('read_file', 'write_file', 'edit_file', 'list_files', COMMAND_TOOL_NAME)
MAX_LISTED = 500
"""Entries `list_files` returns at most."""
MAX_FOLDERS_LISTED = 200
"""Folders `list_files` looks into at most (a script may leave a tree thousands of folders deep)."""


class _Refused(Exception):
    """A file call that cannot go on; the message is for the model."""


def build_file_toolset(
    capability_id: str, limits: ScriptLimits, environment: SkillEnvironment | None = None
) -> FunctionToolset[Any]:
    """The toolset holding the file tools and `run_command` (see the module docstring), whose commands find the
    skills' `environment` first where the workspace shows it."""
    toolset = FunctionToolset[Any](id=f'{capability_id}.files', max_retries=3)
    tag = meta_tool_tag(capability_id, Operation.FILES)

    @toolset.tool(metadata=tag)
    async def read_file(ctx: RunContext[Any], path: str, offset: int = 0, limit: int = MAX_READ_LINES) -> Any:
        """Read a file of the workspace: text by lines (numbered from 1), an image or PDF as itself (told by its
        content, not its name).

        Args:
            path: The file, relative to the working directory (a skill's files are under `.skillshelf/skills/`).
            offset: The first line to return (0: the start).
            limit: How many lines, at most 2000.
        """
        try:
            target = await _inside(ctx.workspace, path)
            return await read_page(ctx.workspace, target, shown(path), offset, limit)
        except (_Refused, OSError, ValueError, WorkspaceError) as error:
            return f'Cannot read {shown(path)}: {_reason(error)}.'

    @toolset.tool(metadata=tag)
    async def write_file(ctx: RunContext[Any], path: str, content: str) -> str:
        """Write a text file in the workspace, creating its folders; an existing file is replaced.

        Args:
            path: The file, relative to the working directory.
            content: Its whole text.
        """
        try:
            target = await _inside(ctx.workspace, path, writing=True)
            await ctx.workspace.write_bytes(target, content.encode('utf-8', 'replace'))
        except (_Refused, OSError, ValueError, WorkspaceError) as error:
            return f'Cannot write {shown(path)}: {_reason(error)}.'
        return f'Wrote {shown(path)} ({len(content.encode("utf-8", "replace")):,} bytes).'

    @toolset.tool(metadata=tag)
    async def edit_file(ctx: RunContext[Any], path: str, old_text: str, new_text: str) -> str:
        """Replace one exact piece of a text file with another; `old_text` must occur exactly once.

        Args:
            path: The file, relative to the working directory.
            old_text: The text to replace, exactly as it is in the file (include enough to make it unique).
            new_text: What replaces it.
        """
        try:
            target = await _inside(ctx.workspace, path, writing=True)
            text = (await ctx.workspace.read_bytes(target)).decode('utf-8')
            found = text.count(old_text) if old_text else 0
            if found != 1:
                raise _Refused(
                    f'`old_text` occurs {found} times; give text that occurs exactly once'
                    if found
                    else '`old_text` is not in the file; read it first and copy the text exactly'
                )
            await ctx.workspace.write_bytes(target, text.replace(old_text, new_text).encode('utf-8'))
        except UnicodeDecodeError:
            return f'Cannot edit {shown(path)}: it is not UTF-8 text.'
        except (_Refused, OSError, ValueError, WorkspaceError) as error:
            return f'Cannot edit {shown(path)}: {_reason(error)}.'
        return f'Edited {shown(path)}.'

    @toolset.tool(metadata=tag)
    async def list_files(ctx: RunContext[Any], path: str = '.') -> str:
        """List the files under a folder of the workspace, with their sizes (skills' own copies left out).

        Args:
            path: The folder, relative to the working directory.
        """
        try:
            root = await _inside(ctx.workspace, path)
            found, unvisited = await _walk(ctx.workspace, root)
        except (_Refused, OSError, ValueError, WorkspaceError) as error:
            return f'Cannot list {shown(path)}: {_reason(error)}.'
        if len(found) >= MAX_LISTED:
            found.append('[and more: list a sub-folder]')
        elif unvisited:
            found.append(f'[{unvisited:,} more folders not looked into: list a sub-folder]')
        return '\n'.join(found) if found else f'{shown(path)} holds no files.'

    @toolset.tool(metadata=meta_tool_tag(capability_id, Operation.COMMAND))
    async def run_command(ctx: RunContext[Any], command: str) -> str:
        """Run a shell command in the workspace's working directory. It waits for approval unless a loaded skill
        allows it (its `allowed-tools`).

        Args:
            command: The command line, as for `sh -c`.
        """
        try:
            setup = await shell_setup(ctx.workspace, environment)
            done = await ctx.workspace.run(setup + command, shell=True, timeout=limits.timeout)
        except WorkspaceTimeoutError:
            return f'The command was stopped after {limits.timeout:g} s: {stopped_at_time_limit(contained(ctx.workspace))}.'
        except WorkspaceOutputLimitError:
            return 'The command was stopped: it wrote more output than the workspace takes.'
        except CommandStoppedError as error:
            if isinstance(error, WorkspaceFullError) and not error.ran:
                return f'The command could not run: {workspace_problem(error)}.'
            ended = 'was stopped' if error.exit_code is None else f'exited with code {error.exit_code}'
            return f'The command {ended}: {stopped_at_limit(error.stopped)}'
        except (WorkspaceError, OSError, ValueError) as error:
            return f'The command could not run: {workspace_problem(error)}.'
        output = (done.stdout + (f'\n{done.stderr}' if done.stderr else '')).strip()
        data = output.encode('utf-8', 'replace')
        cut = data[: limits.max_output_bytes].decode('utf-8', 'ignore')
        note = (
            f'\n[output cut: {len(data):,} bytes, the first {len(cut.encode()):,} shown]'
            if len(cut) < len(output)
            else ''
        )
        return f'Exit code {done.exit_code}.' + (f'\n{cut}{note}' if output else ' It printed nothing.')

    return toolset


async def _inside(workspace: Workspace, path: str, *, writing: bool = False) -> str:
    """`path` resolved in the workspace, refused unless it (and where its symlinks lead) lies inside the working
    directory; a skill's own copy is not written through these tools."""
    if not workspace.attached:
        raise _Refused('this run has no workspace')
    root = await workspace.working_dir()
    target = await workspace.resolve(path)
    real_root = await workspace.realpath(root)
    real = await workspace.realpath(target)
    if real != real_root and not real.startswith(real_root.rstrip('/') + '/'):
        raise _Refused('it is outside the workspace')
    if writing and (real + '/').startswith(posixpath.join(real_root, SKILLS_FOLDER) + '/'):
        raise _Refused("it is a skill's own file; copy it to the working directory and change the copy")
    if writing and await _other_names(workspace, target):
        raise _Refused(
            "the file has other names (hard links), so writing it could change another file, such as a skill's own "
            'copy; write a new file instead'
        )
    return target


async def _other_names(workspace: Workspace, path: str) -> bool:
    """Whether the file at `path` has more than one name (a hard link a script planted), as far as the workspace can
    tell: one that runs no commands cannot, and its writes are not checked."""
    try:
        done = await workspace.run(['/bin/sh', '-c', 'test -f "$1" && stat -c %h "$1"', 'sh', path], timeout=10)
    except (WorkspaceError, UserError, OSError):
        return False
    return done.exit_code == 0 and done.stdout.strip().isdigit() and int(done.stdout) > 1


async def _walk(workspace: Workspace, root: str) -> tuple[list[str], int]:
    """Files under `root`, by path relative to it, with sizes (hidden folders and skills' copies left out), and how
    many folders were not looked into."""
    found: list[str] = []
    pending = [root]
    looked = 0
    while pending and len(found) < MAX_LISTED and looked < MAX_FOLDERS_LISTED:
        folder = pending.pop(0)
        looked += 1
        for entry in await workspace.list_dir(folder):
            if entry.name.startswith('.'):
                continue
            if entry.is_dir:
                pending.append(entry.path)
            elif len(found) < MAX_LISTED:
                size = f' ({entry.size:,} bytes)' if entry.size is not None else ''
                found.append(f'{_name(posixpath.relpath(entry.path, root))}{size}')
    return found, len(pending)


def _name(path: str) -> str:
    """`path` as the model can be shown it: quoted and escaped when it holds a line break, a control character or
    bytes that are not UTF-8 (a lone surrogate would make the run's messages unsendable)."""
    try:
        path.encode('utf-8')
    except UnicodeEncodeError:
        return shown(path, 1000)
    return path if path.isprintable() else shown(path, 1000)


def _reason(error: _Refused | OSError | ValueError | WorkspaceError) -> str:
    if isinstance(error, FileNotFoundError):
        return 'there is no such file'
    if isinstance(error, IsADirectoryError):
        return 'it is a folder'
    if isinstance(error, NotADirectoryError):
        return 'a part of the path is a file, not a folder'
    if isinstance(error, PermissionError):
        return 'permission denied'
    if isinstance(error, _Refused):
        return str(error)
    return workspace_problem(error)
