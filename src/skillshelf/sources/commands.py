"""Claude Code's command files as skills: each `*.md` file in a commands directory (`.claude/commands`) is one skill
named by its file.

A command file is the body of instructions, optionally after a `---` frontmatter of Claude Code's fields
(`description`, `argument-hint`, `allowed-tools`, `disable-model-invocation`, ...). Without a `description`, the
first line of the body describes it, as in Claude Code. Sub-folders group commands (`git/commit.md` is the skill
`commit`), down to `MAX_COMMAND_DEPTH`. A command has no folder of resources: its text is read whole when the
directory is read, with the limits of a `SKILL.md` (a bounded read held beneath the directory, the guarded YAML
loader), and a file that cannot be used is reported in `skipped` with the reason.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, cast

import yaml

from ..content import TextContent
from ..errors import SkillFormatError
from ..files import (
    DEFAULT_READ_POLICY,
    FolderChangedError,
    HardLinkedFileError,
    HeldFolder,
    NotRegularFileError,
    OutsideFolderError,
    ReadPolicy,
    hold_folder,
    read_beneath,
)
from ..markdown import guarded_yaml
from ..markdown.bounded_read import MAX_SKILL_FILE_BYTES
from ..markdown.flags import flag_problems
from ..markdown.frontmatter import FormatDeviation, name_problem, split_frontmatter, starts_with_frontmatter
from ..markdown.lenient import first_line, repair_frontmatter
from ..markdown.schema import MAX_DESCRIPTION_LENGTH, unencodable_problem
from ..skill import Skill
from .base import SkippedSkill, SourceSkills
from .directory import Fingerprint, path_key

__all__ = (
    'COMMAND_SUFFIX',
    'MAX_COMMAND_DEPTH',
    'CommandDirectorySource',
    'commands_fingerprint',
    'discover_commands',
    'is_command_skill',
)

COMMAND_SUFFIX = '.md'
MAX_COMMAND_DEPTH = 3
"""Sub-folders below a commands directory that are read (`git/commit.md` is one level); deeper ones are reported."""


def is_command_skill(skill: Skill[Any] | None) -> bool:
    """Whether `skill` was read from a command file (`deploy.md`), not a skill folder."""
    return skill is not None and skill.folder is None and (skill.origin or '').endswith(COMMAND_SUFFIX)


@dataclass(frozen=True)
class CommandDirectorySource:
    """A directory of Claude Code command files as a source; like a `DirectorySource`, reading it never raises."""

    path: Path
    """The directory, absolute."""
    policy: ReadPolicy = DEFAULT_READ_POLICY
    """How the directory's command files may be read."""
    optional: bool = False
    """A usual location (`.claude/commands`): while it does not exist it holds nothing and nothing is reported."""
    reports_version: ClassVar[bool] = True

    def version(self) -> Fingerprint:
        """The directory's listing (see `commands_fingerprint`)."""
        return commands_fingerprint(self.path)

    def read_skills(self) -> SourceSkills:
        """The directory's commands (see `discover_commands`), with the listing it began from as their version."""
        if self.optional and not os.path.lexists(self.path):
            return SourceSkills(version=self.version())
        return discover_commands(self.path, policy=self.policy)


def discover_commands(directory: Path, *, policy: ReadPolicy = DEFAULT_READ_POLICY) -> SourceSkills:
    """Read the command files in `directory` (see the module's docstring), in sorted order: every `*.md` file is a
    skill or is reported in `skipped` with the reason; hidden entries and other files are left alone. Sub-folders
    that are symlinks are not followed (reported), and no read leaves the directory."""
    found = SourceSkills(version=commands_fingerprint(directory))  # looked at before anything is read
    try:
        held = hold_folder(os.path.abspath(directory), policy=policy)
    except OSError:
        problem = 'it is not a directory' if os.path.lexists(directory) else 'the directory does not exist'
        found.skipped.append(SkippedSkill(directory, problem))
        return found
    files, problems = _walk(held.path)
    found.skipped.extend(SkippedSkill(Path(path), problem) for path, problem in problems)
    for parts in files:
        path = os.path.join(held.path, *parts)
        deviations: list[FormatDeviation] = []
        try:
            skill = _read_command(held, parts, deviations)
        except SkillFormatError as error:
            found.skipped.append(SkippedSkill(Path(path), error.problem))
        else:
            found.skills.append(skill)
            found.deviations.extend(deviations)
    return found


def commands_fingerprint(directory: Path) -> Fingerprint:
    """A cheap signature of a commands directory: one `stat` per folder and per command file (see
    `directory.fingerprint`)."""
    root = os.path.abspath(directory)
    parts: list[object] = [(root, path_key(root))]
    if os.path.isdir(root):
        files, _ = _walk(root)
        parts.extend((os.path.join(*names), path_key(os.path.join(root, *names))) for names in files)
    return tuple(parts)


def _walk(root: str) -> tuple[list[tuple[str, ...]], list[tuple[str, str]]]:
    """The command files beneath `root` (as path parts, sorted) and the entries reported instead of read."""
    files: list[tuple[str, ...]] = []
    problems: list[tuple[str, str]] = []
    pending: list[tuple[str, ...]] = [()]
    while pending:
        folder = pending.pop(0)
        try:
            with os.scandir(os.path.join(root, *folder)) as scan:
                entries = sorted((entry for entry in scan if not entry.name.startswith('.')), key=lambda e: e.name)
        except OSError as error:
            problems.append((os.path.join(root, *folder), f'cannot list the folder ({error.strerror or error})'))
            continue
        for entry in entries:
            parts = (*folder, entry.name)
            if entry.is_dir(follow_symlinks=False):
                if len(parts) > MAX_COMMAND_DEPTH:
                    problems.append((entry.path, f'command folders nest at most {MAX_COMMAND_DEPTH} deep'))
                else:
                    pending.append(parts)
            elif entry.name.lower().endswith(COMMAND_SUFFIX):
                files.append(parts)
            elif entry.is_symlink() and os.path.isdir(entry.path):
                problems.append((entry.path, 'a symlinked folder in a commands directory is not followed'))
    return files, problems


def _read_command(held: HeldFolder, parts: tuple[str, ...], deviations: list[FormatDeviation]) -> Skill[Any]:
    """The skill of one command file, read beneath the commands directory; YAML repaired as a lenient reader would
    read it is reported in `deviations` (except Claude Code's unquoted `argument-hint: [pr]`, its documented style)."""
    path = os.path.join(held.path, *parts)
    name = parts[-1][: -len(COMMAND_SUFFIX)]
    if problem := name_problem(name):
        raise SkillFormatError(path, f'{problem} (a command is named by its file; rename the file)')
    notes: list[str] = []
    raw = _read(held, parts)
    fields, body = _split(path, _decoded(path, raw), notes)
    deviations.extend(FormatDeviation(Path(path), 'frontmatter', note, skill=name) for note in notes)
    description = fields.pop('description', None)
    if description is not None and not isinstance(description, str):
        raise SkillFormatError(path, f'`description` must be a string, not a YAML {type(description).__name__}')
    description = (description or '').strip() or first_line(body, MAX_DESCRIPTION_LENGTH)
    if not description:
        raise SkillFormatError(path, 'the command is empty: it has no description and no instructions')
    fields.pop('name', None)  # the file names the command, as in Claude Code
    deviations.extend(FormatDeviation(Path(path), 'field-type', note, skill=name) for note in flag_problems(fields))
    hint = fields.get('argument-hint')
    if isinstance(hint, list) and all(isinstance(item, str) for item in cast('list[object]', hint)):  # YAML's `[pr]`
        fields['argument-hint'] = ' '.join(f'[{item}]' for item in cast('list[str]', hint))
    return Skill.from_content(name, description, TextContent(body, origin=path, source=raw), metadata=fields)


def _read(held: HeldFolder, parts: tuple[str, ...]) -> bytes:
    path = os.path.join(held.path, *parts)
    try:
        raw = read_beneath(held, parts, MAX_SKILL_FILE_BYTES + 1)
    except OutsideFolderError:
        raise SkillFormatError(path, 'the file is a symlink to outside its commands directory') from None
    except HardLinkedFileError:
        raise SkillFormatError(
            path,
            'the file has other hard links, so its content may come from outside the commands directory '
            f'({HardLinkedFileError.remedy})',
        ) from None
    except NotRegularFileError:
        raise SkillFormatError(path, 'it is not a regular file') from None
    except FolderChangedError:
        raise SkillFormatError(path, 'the commands directory changed while it was read') from None
    except OSError as error:
        raise SkillFormatError(path, f'cannot read the file ({error.strerror or error})') from None
    if len(raw) > MAX_SKILL_FILE_BYTES:
        raise SkillFormatError(path, f'the file is larger than {MAX_SKILL_FILE_BYTES:,} bytes')
    return raw


def _decoded(path: str, raw: bytes) -> str:
    try:
        return raw.decode('utf-8').removeprefix('\ufeff')
    except UnicodeDecodeError as error:
        raise SkillFormatError(path, f'the file is not valid UTF-8 (byte {error.start})') from None


def _split(path: str, text: str, notes: list[str]) -> tuple[dict[str, Any], str]:
    """The frontmatter fields (none without a `---` first line) and the stripped body of a command file's `text`;
    the repairs its YAML needed are added to `notes`."""
    if not starts_with_frontmatter(text):
        return {}, text.strip()
    head, body = split_frontmatter(path, text)
    data = _load(path, head, notes)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SkillFormatError(path, f'the frontmatter is a YAML {type(data).__name__}, not a mapping of fields')
    fields = {str(key): value for key, value in cast('dict[Any, Any]', data).items()}
    if (problem := unencodable_problem(fields)) is not None:
        raise SkillFormatError(path, problem)
    return fields, body.strip()


def _load(path: str, head: str, notes: list[str]) -> Any:
    try:
        return guarded_yaml.load(head)
    except guarded_yaml.YAMLRefusedError as error:
        raise SkillFormatError(path, f'the frontmatter is refused: {error}') from None
    except yaml.YAMLError as error:
        repaired, repairs = repair_frontmatter(head)
        if repairs:
            try:
                data = guarded_yaml.load(repaired)
            except Exception:
                pass  # the original error says more
            else:
                notes.extend(repair.note for repair in repairs if repair.kind != 'hint')
                return data
        problem = guarded_yaml.yaml_problem(error, first_line=2)
        raise SkillFormatError(path, f'the frontmatter is not valid YAML ({problem})') from None
    except Exception as error:  # untrusted YAML: bad dates, huge integers and the like
        raise SkillFormatError(path, f'the frontmatter has a value YAML cannot convert ({error}); quote it') from None
