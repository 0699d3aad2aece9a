"""Reading `SKILL.md` files: the one reader of frontmatter and body, and the Agent Skills format rules.

The format (https://agentskills.io/specification): a YAML frontmatter block between `---` lines, with `name` and
`description` required, then a markdown body of instructions. A file is read whole (at most
`MAX_SKILL_FILE_BYTES`) and split at its `---` lines as python-frontmatter splits it (discovery splits the bytes and
decodes only the frontmatter); its YAML goes through the guarded loader (`guarded_yaml`) and its fields through the
`Frontmatter` model. The body is read again when it is needed.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, AnyStr, cast

import yaml
from frontmatter.default_handlers import YAMLHandler
from pydantic import ValidationError

from ..errors import SkillFormatError, SkillFormatWarning
from . import guarded_yaml
from .bounded_read import MAX_SKILL_FILE_BYTES, SKILL_FILE, SkillFile, read_skill_file
from .flags import flag_problems
from .guarded_yaml import MAX_YAML_DEPTH, MAX_YAML_EXPANDED_BYTES, MAX_YAML_NODES, YAMLRefusedError
from .lenient import FormatDeviation, description_from_body, hint_as_text, name_from_folder, repair_frontmatter
from .names import MAX_NAME_LENGTH, name_problem, spec_name_problem
from .schema import (
    MAX_DESCRIPTION_LENGTH,
    Frontmatter,
    unencodable,
    unencodable_problem,
)

__all__ = (
    'DELIMITER',
    'MAX_FRONTMATTER_BYTES',
    'MAX_NAME_LENGTH',
    'MAX_SKILL_FILE_BYTES',
    'MAX_YAML_DEPTH',
    'MAX_YAML_EXPANDED_BYTES',
    'MAX_YAML_NODES',
    'SKILL_FILE',
    'FormatDeviation',
    'SkillFile',
    'name_problem',
    'parse_frontmatter',
    'read_body',
    'read_frontmatter',
    'read_frontmatter_text',
    'read_markdown',
    'spec_name_problem',
    'split_frontmatter',
    'starts_with_frontmatter',
)

DELIMITER = '---'
MAX_FRONTMATTER_BYTES = 64 * 1024
"""A frontmatter block larger than this is refused: catalogs only need a name and a description."""


# `[ \t]*` and `\r*` match disjoint characters, so a failed line is given up in one pass over it.
_BOUNDARY = re.compile(r'^---[ \t]*\r*$', re.MULTILINE)
_CLOSING = re.compile(r'\n---[ \t]*\r*$', re.MULTILINE)
"""A delimiter line after the first, with the line break before it: the regex engine looks for a pattern that starts
with text five times faster than for one that starts with `^` (every body read searches for it)."""
_BOUNDARY_BYTES = re.compile(_BOUNDARY.pattern.encode(), re.MULTILINE)
_CLOSING_BYTES = re.compile(_CLOSING.pattern.encode(), re.MULTILINE)
"""The delimiter lines in UTF-8: `read_frontmatter` splits the file's bytes and decodes only the frontmatter."""


class _SkillFileHandler(YAMLHandler):
    """python-frontmatter's YAML handler with the format's delimiter (a line of exactly `---`, blanks after it
    allowed) and skillshelf's guarded YAML loader."""

    FM_BOUNDARY = _BOUNDARY

    def load(self, fm: str, **kwargs: object) -> Any:
        return guarded_yaml.load(fm)


_HANDLER = _SkillFileHandler()
_BOM = '\ufeff'.encode()


def read_frontmatter(
    skill_file: str | Path | SkillFile, deviations: list[FormatDeviation] | None = None
) -> Frontmatter:
    """Read and check the frontmatter of `skill_file` (see `parse_frontmatter`).

    Raises:
        SkillFormatError: the file is missing, unreadable, too large, or broken beyond what those tools load.
    """
    return parse_frontmatter(skill_file, read_skill_file(skill_file), deviations)


def parse_frontmatter(
    skill_file: str | Path | SkillFile, raw: bytes, deviations: list[FormatDeviation] | None = None
) -> Frontmatter:
    """Check the frontmatter of `raw`, the bytes of `skill_file`, leniently: what breaks the format but Claude Code
    or Codex load anyway (see `lenient` and `_validate`) is read as they read it, and each deviation is appended to
    `deviations` when it is given, else emitted as a `SkillFormatWarning`.

    Raises:
        SkillFormatError: the frontmatter is broken beyond what those tools load.
    """
    found: list[FormatDeviation] = []
    path = _path_of(skill_file)
    # Split as bytes, and only the frontmatter decoded: the same text as decoding the file with `surrogateescape` and
    # splitting that (`---` and line breaks are ASCII, which UTF-8 never holds inside another character).
    raw = raw.removeprefix(_BOM)
    start, end, body_start = _frontmatter_span(path, raw, _BOUNDARY_BYTES, _CLOSING_BYTES, b'\n')
    head = raw[start:end].decode('utf-8', 'surrogateescape')
    if unencodable(head) is not None:  # an undecodable byte, kept as a surrogate by the decoding above
        raise SkillFormatError(path, 'the frontmatter is not valid UTF-8')
    data = _load_lenient(path, head, found)
    # Any undecodable byte as U+FFFD: the body only supplies a description.
    front = _validate(path, data, found, escapes='\\' in head, body=lambda: raw[body_start:].decode('utf-8', 'replace'))
    _report(found, front.name, deviations)
    return front


def read_markdown(
    origin: str, text: str, deviations: list[FormatDeviation] | None = None, *, folder: str | None = None
) -> tuple[Frontmatter, str]:
    """The checked frontmatter and the stripped body of `SKILL.md` text that is not read from a folder (a string in
    code, a registry row, a zipped package), read like `read_frontmatter` reads a file; the name is checked against
    the name of the `folder` the text came from, if it has one. `origin` names the text in errors and deviations.

    Raises:
        SkillFormatError: the text is too large or breaks the format beyond what Claude Code or Codex load.
    """
    size = _utf8_size(text)
    if size > MAX_SKILL_FILE_BYTES:
        raise SkillFormatError(origin, f'the text is {size:,} bytes; the limit is {MAX_SKILL_FILE_BYTES:,}')
    head, body = split_frontmatter(origin, text)
    if unencodable(head) is not None:
        raise SkillFormatError(origin, 'the frontmatter is not valid UTF-8 (it holds a lone surrogate)')
    found: list[FormatDeviation] = []
    data = _load_lenient(origin, head, found)
    front = _validate(origin, data, found, escapes='\\' in head, folder=folder or False, body=lambda: body)
    _report(found, front.name, deviations)
    return front, body.strip()


def _report(found: list[FormatDeviation], name: str, deviations: list[FormatDeviation] | None) -> None:
    """Hand the deviations of the skill `name` to the caller, or warn about each (at the reader's caller's caller,
    which is where a user called `Skill.from_folder` or `from_markdown`)."""
    named = [replace(deviation, skill=name) for deviation in found]
    if deviations is not None:
        deviations.extend(named)
        return
    for deviation in named:
        warnings.warn(SkillFormatWarning(str(deviation)), stacklevel=4)


def read_frontmatter_text(skill_file: str | Path | SkillFile) -> str:
    """The YAML text between the `---` lines of `skill_file`, without parsing it.

    Raises:
        SkillFormatError: the file is missing, unreadable or too large, or has no closed frontmatter that fits
            in `MAX_FRONTMATTER_BYTES` of valid UTF-8.
    """
    head, _ = split_frontmatter(_path_of(skill_file), read_skill_file(skill_file).decode('utf-8', 'surrogateescape'))
    if unencodable(head) is not None:  # an undecodable byte, kept as a surrogate by the decoding above
        raise SkillFormatError(_path_of(skill_file), 'the frontmatter is not valid UTF-8')
    return head


def read_body(skill_file: str | Path | SkillFile, max_chars: int | None = None) -> str:
    """The markdown body of `skill_file` (everything after the frontmatter, stripped); with `max_chars`, only
    its first `max_chars` characters.

    Raises:
        SkillFormatError: the file is missing, unreadable, too large, not UTF-8 or has no closed frontmatter.
    """
    return body_of(skill_file, read_skill_file(skill_file), max_chars)


def body_of(skill_file: str | Path | SkillFile, raw: bytes, max_chars: int | None = None) -> str:
    """`read_body` of the bytes `raw` read from `skill_file`.

    Raises:
        SkillFormatError: they are not UTF-8 or have no closed frontmatter.
    """
    path = _path_of(skill_file)
    try:
        text = raw.decode('utf-8')
    except UnicodeDecodeError as error:
        raise SkillFormatError(path, f'the file is not valid UTF-8 (byte {error.start})') from error
    return split_frontmatter(path, text)[1].strip()[:max_chars]


def _path_of(skill_file: str | Path | SkillFile) -> str | Path:
    return skill_file.path if isinstance(skill_file, SkillFile) else skill_file


def starts_with_frontmatter(text: str) -> bool:
    """Whether `text` opens with a `---` frontmatter line (a byte-order mark before it is ignored)."""
    return bool(_HANDLER.detect(text.removeprefix('\ufeff')))


def split_frontmatter(skill_file: str | Path, text: str) -> tuple[str, str]:
    """The frontmatter text (unparsed, at most `MAX_FRONTMATTER_BYTES`) and the body of a file's `text`; a
    byte-order mark is dropped.

    Raises:
        SkillFormatError: the text does not open with a `---` line, or its frontmatter is not closed or too large.
    """
    text = text.removeprefix('\ufeff')
    start, end, body_start = _frontmatter_span(skill_file, text, _BOUNDARY, _CLOSING, '\n')
    return text[start:end], text[body_start:]


def _frontmatter_span(
    skill_file: str | Path,
    text: AnyStr,
    boundary: re.Pattern[AnyStr],
    closing_boundary: re.Pattern[AnyStr],
    newline: AnyStr,
) -> tuple[int, int, int]:
    """Where the frontmatter of `text` (without a byte-order mark) starts and ends, and where its body starts, as
    python-frontmatter splits it at the `boundary` lines (`closing_boundary`: one with the line break before it);
    `text` may be UTF-8 bytes, which split the same way.

    Raises:
        SkillFormatError: as `split_frontmatter`.
    """
    opening = boundary.match(text)
    if opening is None:
        raise SkillFormatError(skill_file, 'the file does not start with a `---` frontmatter line')
    # The opening line ends at a line break or at the end, so the next boundary line starts after a line break.
    closing = closing_boundary.search(text, opening.end())
    if closing is None:
        if _size(text[text.find(newline) + 1 :]) > MAX_FRONTMATTER_BYTES:
            raise SkillFormatError(skill_file, _too_large())
        raise SkillFormatError(skill_file, 'the frontmatter is not closed by a `---` line')
    start = opening.end()
    if text.startswith(newline, start):  # the opening line's end: YAML's first line is then the file's second
        start += 1
    closing_start = closing.start() + 1
    if _size(text[start:closing_start]) > MAX_FRONTMATTER_BYTES:
        raise SkillFormatError(skill_file, _too_large())
    return start, closing_start, closing.end()


def _size(text: str | bytes) -> int:
    """The size of `text` in UTF-8."""
    return len(text) if isinstance(text, bytes) else _utf8_size(text)


def _utf8_size(text: str) -> int:
    return len(text.encode('utf-8', 'surrogateescape'))


def _too_large() -> str:
    return f'the frontmatter is larger than {MAX_FRONTMATTER_BYTES:,} bytes'


def _load_lenient(skill_file: str | Path, head: str, found: list[FormatDeviation]) -> Any:
    """The YAML value of `head`; YAML that fails is repaired as a lenient reader would read it (see
    `repair_frontmatter`), each repair a deviation, and Claude Code's unquoted `argument-hint: [topic]` (a YAML list)
    is read as the text it means."""
    data: Any
    try:
        data = _HANDLER.load(head)
    except YAMLRefusedError as error:
        raise SkillFormatError(skill_file, f'the frontmatter is refused: {error}') from error
    except Exception as error:  # untrusted YAML: bad dates, huge integers and the like raise ValueError & co
        repaired, repairs = repair_frontmatter(head)
        if not repairs:
            raise SkillFormatError(skill_file, _yaml_problem(error)) from error
        try:
            data = _HANDLER.load(repaired)
        except YAMLRefusedError as refused:
            raise SkillFormatError(skill_file, f'the frontmatter is refused: {refused}') from refused
        except Exception:
            raise SkillFormatError(skill_file, _yaml_problem(error)) from error
        found.extend(FormatDeviation(Path(skill_file), 'frontmatter', repair.note) for repair in repairs)
    if isinstance(data, dict):
        hint_as_text(skill_file, cast('dict[Any, Any]', data), found)
    return cast(Any, data)


def _yaml_problem(error: Exception) -> str:
    if isinstance(error, yaml.YAMLError):
        return f'the frontmatter is not valid YAML ({guarded_yaml.yaml_problem(error, first_line=2)})'
    return f'the frontmatter has a value YAML cannot convert ({_first_line(error)}); quote it'


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    line = text.splitlines()[0] if text else type(error).__name__
    return line if len(line) <= 60 else line[:59] + '…'


def _validate(
    skill_file: str | Path,
    data: Any,
    found: list[FormatDeviation],
    *,
    escapes: bool = True,
    folder: bool | str = True,
    body: Callable[[], str],
) -> Frontmatter:
    """The checked frontmatter of `data`; `escapes` says whether its text had any `\\` escape, the only way YAML
    can produce a lone surrogate from valid UTF-8; `folder` whether the file has a folder (or that folder's name),
    whose name is the skill's when the frontmatter's is missing or unusable; `body` supplies the instructions,
    whose first line is the description when the frontmatter has none. Each deviation tolerated is appended to
    `found`."""
    if data is None:
        data = {}  # every field may be missing: Claude Code's docs call them all optional
    if not isinstance(data, dict):
        raise SkillFormatError(skill_file, f'the frontmatter is a YAML {type(data).__name__}, not a mapping of fields')
    fields = {str(key): value for key, value in cast('dict[Any, Any]', data).items()}
    if escapes and (problem := unencodable_problem(fields)) is not None:
        raise SkillFormatError(skill_file, problem)
    if folder:
        name_from_folder(skill_file, fields, found, folder if isinstance(folder, str) else None)
    description_from_body(skill_file, fields, body, MAX_DESCRIPTION_LENGTH, found)
    try:
        front = Frontmatter.model_validate(fields)
    except ValidationError as error:
        raise SkillFormatError(skill_file, _first_problem(error)) from None
    if (problem := spec_name_problem(front.name)) is not None:
        found.append(FormatDeviation(Path(skill_file), 'name', f'{problem}; loaded as {front.name!r}'))
    for problem in flag_problems({**(front.model_extra or {}), **front.metadata}):  # as the skill's metadata merges
        found.append(FormatDeviation(Path(skill_file), 'field-type', problem))
    if len(front.description) > MAX_DESCRIPTION_LENGTH:
        found.append(
            FormatDeviation(
                Path(skill_file),
                'description-length',
                f'the description is {len(front.description)} characters; the format allows '
                f'{MAX_DESCRIPTION_LENGTH}, so catalogs may shorten it (and Codex skips the skill)',
            )
        )
    return front


def _first_problem(error: ValidationError) -> str:
    """The message of the first field that failed, as the validators phrased it."""
    first = error.errors()[0]
    if first['type'] == 'missing':
        return f'the frontmatter has no `{first["loc"][0]}` field'
    cause = first.get('ctx', {}).get('error')
    return str(cause) if cause is not None else f'`{".".join(map(str, first["loc"]))}`: {first["msg"]}'
