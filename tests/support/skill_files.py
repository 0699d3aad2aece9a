"""Skills on disk for the tests: `write_skill` writes a skill folder (its `SKILL.md` and any other files),
`write_library` a library folder of them, and `skill_md` is the text of a `SKILL.md`. Test modules keep only their
data (names, descriptions, bodies); how a skill is laid out and written is here.

A `SKILL.md` is given, from the most made up to the most literal, as fields (`name` is the folder's, `description`,
any others, then the body), as the raw frontmatter text between the `---` lines then the body, or as the whole file
(text or bytes, for files that are not well formed).
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
import uuid
from collections.abc import Mapping
from pathlib import Path

BODY = 'Follow the steps.'
"""The body of a skill written without one."""

Field = str | list[str]
"""A frontmatter value: a string is written as typed (YAML), a list as a block list of double-quoted strings."""


def skill_md(
    name: str, body: str = BODY, *, description: str | None = None, fields: Mapping[str, Field] | None = None
) -> str:
    """The text of a `SKILL.md`: frontmatter with `name`, `description` (default `Handles <name> work.`) and any more
    `fields` (a field named `name` or `description` replaces that one), then `body`."""
    frontmatter: dict[str, Field] = {
        'name': name,
        'description': f'Handles {name} work.' if description is None else description,
    }
    frontmatter.update(fields or {})
    lines = [_field(key, value) for key, value in frontmatter.items()]
    return '---\n{}\n---\n{}\n'.format('\n'.join(lines), body)


def _field(key: str, value: Field) -> str:
    if isinstance(value, str):
        return f'{key}: {value}'
    return '\n'.join([f'{key}:', *(f'  - {json.dumps(item)}' for item in value)])


def write_skill(
    root: Path,
    folder: str,
    body: str | None = None,
    *,
    description: str | None = None,
    fields: Mapping[str, Field] | None = None,
    frontmatter: str | None = None,
    text: str | bytes | None = None,
    files: Mapping[str, str | bytes] | None = None,
) -> Path:
    """Write the skill folder `root / folder` (and `root`) and return its path.

    Its `SKILL.md` is one of:
    - `skill_md(folder, body, description=..., fields=...)`, the default: the skill is named after its folder unless
      `fields` names it (`fields={'name': 'other'}`);
    - `frontmatter`: the frontmatter exactly as typed, between `---` lines, then `body` (default `BODY`);
    - `text`: the whole file exactly as given (a `str` is encoded as UTF-8, lone surrogates kept; see `dedented` for
      a triple-quoted one).

    `files` are more files by their path in the folder (`reference/guide.md`), text or bytes. Every file is written
    whole: a new folder is filled beside `root` and moved in complete, and writing a folder that exists replaces
    each file given, so a library that other threads read while a test writes it never shows half a skill.
    """
    if text is not None:
        if (body, description, fields, frontmatter) != (None, None, None, None):
            raise TypeError('`text` is the whole SKILL.md: give no body, description, fields or frontmatter with it')
        skill_file = text
    elif frontmatter is not None:
        if (description, fields) != (None, None):
            raise TypeError('`frontmatter` is the whole frontmatter: give no description or fields with it')
        skill_file = f'---\n{frontmatter}\n---\n{BODY if body is None else body}\n'
    else:
        skill_file = skill_md(folder, BODY if body is None else body, description=description, fields=fields)
    contents = {'SKILL.md': skill_file, **(files or {})}
    return _write_whole(root, folder, {path: _bytes(data) for path, data in contents.items()})


def write_library(root: Path, skills: Mapping[str, str | tuple[str, str]]) -> Path:
    """`root` as a skill library: a folder per entry of `skills`, `{name: description}` (with the default body) or
    `{name: (description, body)}`. Returns `root`."""
    for name, skill in skills.items():
        description, body = (skill, None) if isinstance(skill, str) else skill
        write_skill(root, name, body, description=description)
    return root


def dedented(text: str) -> str:
    """A `SKILL.md` typed as an indented triple-quoted string, as the file it stands for: dedented, without the
    line break after the opening quotes."""
    return textwrap.dedent(text).lstrip()


def _bytes(data: str | bytes) -> bytes:
    return data if isinstance(data, bytes) else data.encode('utf-8', 'surrogatepass')


def _write_whole(root: Path, name: str, contents: Mapping[str, bytes]) -> Path:
    folder = root / name
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = root.parent / f'.staging-{uuid.uuid4().hex}'  # beside the library, never read by it
    for path, data in contents.items():
        (staging / path).parent.mkdir(parents=True, exist_ok=True)
        (staging / path).write_bytes(data)
    if folder.is_dir():
        for path in contents:
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / path, folder / path)
        shutil.rmtree(staging)
    else:
        staging.rename(folder)
    return folder
