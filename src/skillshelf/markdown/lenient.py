"""Lenient reading, strict reporting: frontmatter that breaks the Agent Skills format but that Claude Code or Codex
load anyway is read as they read it, and every such deviation is reported (`FormatDeviation`).

What is tolerated, and why (the README's "Markdown skills" section says the same for users):

- YAML that only a lenient reader accepts: an unquoted `: ` in a value (`description: Use when: ...`), which the
  format asks clients to recover; Claude Code's unquoted `argument-hint: [version] [audience]`, which is not YAML
  at all; and a top-level line without a colon, read as the rest of the plain value above it (a continuation the
  author forgot to indent) or else dropped. Claude Code keeps such a skill (with its metadata dropped); here only
  the broken line is lost.
- A missing `description`: the first line of the instructions, as Claude Code does (its docs: "If omitted, uses
  the first paragraph of markdown content").

The naming deviations (a missing or unusable `name`, a name that differs from its folder) are resolved where the
folder is known, in `frontmatter`.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from .._text import one_line, shown
from .names import name_problem

__all__ = (
    'DeviationRule',
    'FormatDeviation',
    'Repair',
    'description_from_body',
    'first_line',
    'hint_as_text',
    'name_from_folder',
    'repair_frontmatter',
)

DeviationRule = Literal['frontmatter', 'name', 'name-folder', 'description', 'description-length', 'field-type']
"""The `skillshelf validate` rules a tolerated deviation breaks: the format's own (see `lint.SPEC_RULES`), and
`field-type` for an invocation flag that is not a YAML boolean (see `flags`)."""


@dataclass(frozen=True)
class FormatDeviation:
    """One way a `SKILL.md` breaks the Agent Skills format that Claude Code or Codex tolerate: the skill is loaded as
    they load it, and this is reported (a `SkillFormatWarning`, or an error with `strict=True`)."""

    path: Path
    """The `SKILL.md` (or the name of the text it was read from)."""
    rule: DeviationRule
    """The `skillshelf validate` rule it breaks."""
    problem: str
    """What is wrong, how it was read, and how to fix it."""
    skill: str = ''
    """The name the skill was loaded under."""

    def __str__(self) -> str:
        return f'{self.path}: {self.problem}'


@dataclass(frozen=True)
class Repair:
    """One change `repair_frontmatter` made so that the YAML parses."""

    kind: Literal['line', 'colon', 'hint']
    """A line without a colon, a value holding `: `, or an unquoted `argument-hint: [...]`."""
    note: str
    """What was changed, and how to fix the file."""


_PLAIN_FIELD = re.compile(r'^(?P<key>[A-Za-z_][\w-]*):[ \t]+(?P<value>[^\'"|>\[{&*!#].*)$')
"""A top-level `key: plain value` line; anchored at both ends with one way to match, so linear in the line."""
_FLOW_HINT = re.compile(r'^(?P<key>argument-hint):[ \t]*(?P<value>\[.*)$')
"""Claude Code's unquoted `argument-hint: [pr-number] [priority]`, which YAML reads as a broken flow list."""


def repair_frontmatter(head: str) -> tuple[str, list[Repair]]:
    """`head` (frontmatter text whose YAML failed to parse) with what a lenient reader accepts made into YAML, and
    the repairs made, in order (none: nothing here could help). Only top-level lines are touched:

    - a line without a colon joins the plain `key: value` line right above it (what the author meant when the
      continuation is not indented), or is dropped when there is none;
    - a plain value holding `: ` is quoted (`description: Use when: ...`);
    - an unquoted `argument-hint: [a] [b]` is quoted as the text `[a] [b]`.
    """
    lines: list[tuple[int, str]] = []  # (line number in the file, text); the frontmatter starts on line 2
    repairs: list[Repair] = []
    joinable: int | None = None  # where in `lines` the plain value is that a colon-less line would continue
    for number, line in enumerate(head.splitlines(), start=2):
        if _colonless(line):
            if joinable is not None:
                key = line_key(lines[joinable][1])
                lines[joinable] = (lines[joinable][0], f'{lines[joinable][1].rstrip()} {line.strip()}')
                repairs.append(
                    Repair('line', f'line {number} has no `key:`; read it as the rest of `{key}` above it (indent it)')
                )
            else:
                repairs.append(
                    Repair('line', f'line {number} ({shown(line, 40)}) has no `key:`, so it is not a field; ignored')
                )
            continue
        joinable = len(lines) if _PLAIN_FIELD.match(line) else None
        lines.append((number, line))
    text: list[str] = []
    for number, line in lines:
        repaired = _quoted_hint(line) or _quoted_colon(line)
        if repaired is not None:
            kind, line = repaired
            key = line_key(line)
            if kind == 'hint':
                note = f'read the unquoted `{key}` (line {number}) as text, as Claude Code does; quote it'
            else:
                note = f'quoted a frontmatter value that contains ": " (`{key}`, line {number}); quote it in the file'
            repairs.append(Repair(kind, note))
        text.append(line)
    return '\n'.join(text), repairs


def line_key(line: str) -> str:
    """The key of a top-level `key: value` line."""
    return line.split(':', 1)[0].strip()


def _colonless(line: str) -> bool:
    """Whether `line` is a top-level line that cannot be a field: text without a colon, not a comment, a list item
    or YAML's own markers."""
    if not line or line[0].isspace() or ':' in line:
        return False
    return not line.startswith(('#', '- ', '---', '...')) and line.rstrip() != '-'


def _quoted_colon(line: str) -> tuple[Literal['colon'], str] | None:
    match = _PLAIN_FIELD.match(line)
    if match is None:
        return None
    value = match['value'].rstrip()
    if ': ' not in value and not value.endswith(':'):
        return None
    return 'colon', f'{match["key"]}: {_double_quoted(value)}'


def _quoted_hint(line: str) -> tuple[Literal['hint'], str] | None:
    match = _FLOW_HINT.match(line)
    if match is None:
        return None
    return 'hint', f'{match["key"]}: {_double_quoted(match["value"].rstrip())}'


def _double_quoted(value: str) -> str:
    return '"' + value.replace('\\', '\\\\').replace('"', '\\"') + '"'


def first_line(body: str, width: int) -> str:
    """Claude Code's description for a skill or command without one: the first line of its instructions, without
    a heading's `#`s, on one line of at most `width` characters (`''` for empty instructions)."""
    for line in body.splitlines():
        if line := line.strip().lstrip('#').strip():
            return one_line(line, width)
    return ''


def name_from_folder(
    skill_file: str | Path, fields: dict[str, Any], found: list[FormatDeviation], folder: str | None = None
) -> None:
    """Settle a folder skill's name as Claude Code and Codex do: the frontmatter's `name` when it is usable, even if
    it differs from the folder's (that is the name they load it under); else the folder's name. Each is a deviation;
    a name that neither can supply is left for the model's validation to refuse. The folder is `skill_file`'s,
    unless `folder` names it (a folder inside a zipped package)."""
    if folder is None:
        folder = os.path.basename(os.path.dirname(os.path.abspath(skill_file)))
    folder_name = unicodedata.normalize('NFKC', folder)
    raw = fields.get('name')
    written = raw.strip() if isinstance(raw, str) else raw
    if written is None or written == '':
        if name_problem(folder_name) is None:
            fields['name'] = folder_name
            found.append(
                FormatDeviation(
                    Path(skill_file),
                    'name',
                    f'the frontmatter has no `name`; named {folder_name!r} after its folder, as Claude Code and Codex '
                    f'do (add `name: {folder_name}`)',
                )
            )
        return
    problem = name_problem(written) if isinstance(written, str) else f'`name` is a YAML {type(written).__name__}'
    if problem is not None:
        if name_problem(folder_name) is None:
            fields['name'] = folder_name
            found.append(
                FormatDeviation(Path(skill_file), 'name', f'{problem}; named {folder_name!r} after its folder instead')
            )
        return
    if written != folder_name:
        found.append(
            FormatDeviation(
                Path(skill_file),
                'name-folder',
                f'the name {written!r} does not match its folder {folder_name!r}; loaded as {written!r}, the name '
                'Claude Code and Codex give it (rename the folder or the name so they agree)',
            )
        )


def description_from_body(
    skill_file: str | Path, fields: dict[str, Any], body: Callable[[], str], width: int, found: list[FormatDeviation]
) -> None:
    """Give `fields` without a usable `description` the first line of the instructions (`body`), as Claude Code
    does, cut to `width` characters; a deviation. Instructions without text leave it for validation to refuse."""
    description = fields.get('description')
    if description is not None and not (isinstance(description, str) and not description.strip()):
        return
    if text := first_line(body(), width):
        fields['description'] = text
        found.append(
            FormatDeviation(
                Path(skill_file),
                'description',
                'the frontmatter has no `description`; described by the first line of the instructions, as Claude '
                'Code does (add a `description:` that says what the skill does and when to use it)',
            )
        )


def hint_as_text(skill_file: str | Path, data: dict[Any, Any], found: list[FormatDeviation]) -> None:
    """Read Claude Code's unquoted `argument-hint: [topic]`, which YAML reads as a list, as the text it means."""
    hint = data.get('argument-hint')
    if not isinstance(hint, list) or not all(isinstance(item, str) for item in cast('list[object]', hint)):
        return
    text = ' '.join(f'[{item}]' for item in cast('list[str]', hint))
    data['argument-hint'] = text
    found.append(
        FormatDeviation(
            Path(skill_file),
            'frontmatter',
            f'YAML reads the unquoted `argument-hint: {text}` as a list; read it as the text {text!r}, as Claude Code '
            'does; quote it',
        )
    )
