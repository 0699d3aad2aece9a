"""Reading `SKILL.md` files: frontmatter, body and the Agent Skills format rules.

The format (https://agentskills.io/specification): a YAML frontmatter block between `---` lines,
with `name` and `description` required, then a markdown body of instructions.
"""

from __future__ import annotations

import errno
import io
import os
import re
import unicodedata
import warnings
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from ..errors import SkillFormatError, SkillWarning
from ..files import REFUSES_SYMLINKS, SYMLINK_REFUSED_ERRNOS, NotRegularFileError, open_regular_file
from .flat_yaml import flat_mapping

SKILL_FILE = 'SKILL.md'
DELIMITER = '---'
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500
MAX_FRONTMATTER_BYTES = 64 * 1024
"""A frontmatter block larger than this is refused: catalogs only need a name and a description."""
MAX_SKILL_FILE_BYTES = 2 * 1024 * 1024
"""A `SKILL.md` larger than this is refused rather than read into every run's context."""

KNOWN_FIELDS = frozenset({'name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'})


@dataclass(frozen=True)
class Frontmatter:
    """The parsed frontmatter of one `SKILL.md`, checked: the name follows the naming rules, the description is
    not empty (see `read_frontmatter`)."""

    name: str
    """The skill's name, as the model uses it."""
    description: str
    """What the skill does and when to use it; shown in the catalog and searched."""
    license: str | None = None
    """The `license` field, verbatim."""
    compatibility: str | None = None
    """The `compatibility` field: environment requirements, verbatim."""
    allowed_tools: tuple[str, ...] = ()
    """The `allowed-tools` field, split into tool patterns."""
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The `metadata` mapping plus every field the format does not define (`when_to_use`, `tags`, ...)."""
    notes: tuple[str, ...] = ()
    """Problems worth a warning that did not stop the skill (a repaired value, an over-long description)."""


_NAME_CHARACTERS = re.compile(r'(?:[^\W_]|-)+')
"""Letters and digits of any script (what `str.isalnum` accepts) and hyphens."""


def name_problem(name: str) -> str | None:
    """Why `name` breaks the Agent Skills naming rules, or `None` if it is valid."""
    if not name:
        return 'the name is empty'
    if len(name) > MAX_NAME_LENGTH:
        return f'the name is {len(name)} characters long; the limit is {MAX_NAME_LENGTH}'
    if unicodedata.normalize('NFKC', name) != name:
        return f'the name {name!r} is not NFKC-normalised'
    if name != name.lower():
        return f'the name {name!r} has upper-case letters; use lower-case letters, digits and hyphens'
    if name.startswith('-') or name.endswith('-'):
        return f'the name {name!r} starts or ends with a hyphen'
    if '--' in name:
        return f'the name {name!r} has consecutive hyphens'
    if not _NAME_CHARACTERS.fullmatch(name):
        return f'the name {name!r} may only contain lower-case letters, digits and single hyphens'
    return None


def read_frontmatter(skill_file: Path) -> Frontmatter:
    """Read and validate the frontmatter of `skill_file`, without reading its body; warn about its `notes`.

    Raises:
        SkillFormatError: the file is missing, unreadable, too large or breaks the format.
    """
    front = parse_frontmatter(skill_file)
    warn_notes(front, stacklevel=3)
    return front


def parse_frontmatter(skill_file: Path) -> Frontmatter:
    """Like `read_frontmatter`, leaving the warnings to the caller (see `warn_notes`)."""
    return parse_head(skill_file)[0]


def parse_head(skill_file: str | Path, body_chars: int = 0) -> tuple[Frontmatter, BodyStart | None]:
    """Like `parse_frontmatter`, also keeping the body's first `body_chars` characters from the same read.

    The body start is `None` when `body_chars` is 0 or the read did not reach that far (see `BodyStart`).
    """
    notes: list[str] = []
    head, rest, whole_file = _read_head(skill_file)
    data = _parse_yaml(skill_file, head, notes)
    return _validate(skill_file, data, notes), _body_start_of(rest, whole_file, body_chars)


@dataclass(frozen=True)
class BodyStart:
    """The beginning of a `SKILL.md` body, read along with the frontmatter, so that the search index does not
    open every file a second time."""

    text: str
    """The body's first characters, without the blank space before it (as `read_body` gives them)."""
    whole: bool
    """Whether `text` is the entire body."""

    def first(self, max_chars: int) -> str | None:
        """The body's first `max_chars` characters, or `None` if more of the body is needed than was kept."""
        return self.text[:max_chars] if self.whole or len(self.text) >= max_chars else None


def _body_start_of(rest: bytes, whole_file: bool, max_chars: int) -> BodyStart | None:
    """The first `max_chars` characters of the body, from `rest`: the bytes read after the frontmatter."""
    if max_chars <= 0:
        return None
    rest = rest.lstrip()
    chunk = rest[: 4 * max_chars]  # a character takes at most 4 bytes in UTF-8
    whole = whole_file and len(chunk) == len(rest)
    try:
        text = chunk.decode('utf-8')
    except UnicodeDecodeError as error:
        if whole or error.reason != 'unexpected end of data':
            return None  # not UTF-8: the index reads the file, and `read_body` says what is wrong
        text = chunk[: error.start].decode('utf-8')  # the cut fell inside a character
    if whole:
        text = text.strip()
        return BodyStart(text[:max_chars], whole=len(text) <= max_chars)
    text = text.lstrip()
    # `read_body` strips the end of the whole body too: what was read is its start only if something other than
    # blank space still follows within the first `max_chars` characters.
    return BodyStart(text[:max_chars], whole=False) if len(text.rstrip()) >= max_chars else None


def warn_notes(front: Frontmatter, stacklevel: int = 2) -> None:
    """Emit each of `front.notes` as a `SkillWarning`."""
    for note in front.notes:
        warnings.warn(SkillWarning(note), stacklevel=stacklevel + 1)


def read_body(skill_file: str | Path, max_chars: int | None = None) -> str:
    """Read the markdown body of `skill_file`: everything after the frontmatter, stripped.

    With `max_chars`, only the body's first `max_chars` characters, and only the start of the file is read
    (the search index needs a body's beginning, and a large library has many bodies).

    Raises:
        SkillFormatError: the file is missing, unreadable, too large, not UTF-8 or has no closed frontmatter.
    """
    # A frontmatter fills at most `_HEAD_READ_BYTES`; a character takes at most 4 bytes in UTF-8.
    text = _read_text(skill_file, None if max_chars is None else _HEAD_READ_BYTES + 4 * max_chars)
    start = _body_start(text)
    if start is None:
        raise SkillFormatError(skill_file, 'the frontmatter is not closed by a `---` line')
    body = text[start:].strip()
    return body if max_chars is None else body[:max_chars]


def _is_delimiter(line: str) -> bool:
    """Whether `line` is a `---` frontmatter delimiter; the one rule the head and the body readers share."""
    return line.rstrip('\r\n').rstrip(' \t') == DELIMITER


def _open_skill_file(skill_file: str | Path) -> tuple[int, int]:
    """Open `skill_file` for reading if it is a regular file inside its own folder; returns the descriptor (the
    caller closes it) and the file's size.

    FIFOs, devices and directories are refused without blocking on them, and a `SKILL.md` that is a
    symlink to a file outside its folder is refused, so a skill cannot make the library read other files.
    """
    if not REFUSES_SYMLINKS:  # no O_NOFOLLOW (Windows): always check where the path leads
        return _open_symlinked_skill_file(skill_file)
    try:
        return open_regular_file(skill_file)
    except OSError as error:
        if error.errno not in SYMLINK_REFUSED_ERRNOS:
            raise _unreadable(skill_file, error) from error
        # `SKILL.md` is a symlink (or a loop): resolve it, and check that it stays in its folder.
        return _open_symlinked_skill_file(skill_file)


def _open_symlinked_skill_file(skill_file: str | Path) -> tuple[int, int]:
    try:
        path = Path(skill_file)
        folder, target = path.parent.resolve(), path.resolve()
    except (OSError, RuntimeError) as error:
        raise SkillFormatError(skill_file, f'cannot read the file ({_reason(error)})') from error
    if not target.is_relative_to(folder):
        raise SkillFormatError(skill_file, f'the file is a symlink to {target}, outside its skill folder')
    try:
        return open_regular_file(target)
    except OSError as error:
        raise _unreadable(skill_file, error) from error


def _unreadable(skill_file: str | Path, error: OSError) -> SkillFormatError:
    if isinstance(error, NotRegularFileError):
        return SkillFormatError(skill_file, 'it is not a regular file')
    return SkillFormatError(skill_file, f'cannot read the file ({_reason(error)})')


def _reason(error: BaseException) -> str:
    if isinstance(error, RuntimeError) or (isinstance(error, OSError) and error.errno == errno.ELOOP):
        return 'a symlink loop'  # Python < 3.13 raises RuntimeError from resolve(), later versions ELOOP from open()
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def _read_start(skill_file: str | Path, limit: int) -> bytes:
    """The first `limit` bytes of `skill_file`, or all of it if it is shorter.

    Raises:
        SkillFormatError: the file cannot be opened or read, or is larger than `MAX_SKILL_FILE_BYTES`.
    """
    descriptor, size = _open_skill_file(skill_file)
    try:
        if size > MAX_SKILL_FILE_BYTES:
            raise SkillFormatError(skill_file, f'the file is {size:,} bytes; the limit is {MAX_SKILL_FILE_BYTES:,}')
        # Each read allocates all it asks for, and a large buffer costs more than reading a small file: ask for
        # the file's size (and a byte more, which shows growth), then in steps until the end or `limit`.
        chunks: list[bytes] = []
        request, read = min(limit, size + 1), 0
        while read < limit and (chunk := os.read(descriptor, request)):
            chunks.append(chunk)
            read += len(chunk)
            request = min(limit - read, _READ_STEP)
        return b''.join(chunks)
    except OSError as error:
        raise SkillFormatError(skill_file, f'cannot read the file ({_reason(error)})') from error
    finally:
        os.close(descriptor)


_READ_STEP = 64 * 1024


def _read_text(skill_file: str | Path, max_bytes: int | None = None) -> str:
    """The file's text; with `max_bytes`, only its start (a character cut in two at the end is dropped)."""
    wanted = MAX_SKILL_FILE_BYTES + 1 if max_bytes is None else min(max_bytes, MAX_SKILL_FILE_BYTES + 1)
    raw = _read_start(skill_file, wanted)
    if len(raw) > MAX_SKILL_FILE_BYTES:
        raise SkillFormatError(skill_file, f'the file grew past the limit of {MAX_SKILL_FILE_BYTES:,} bytes')
    try:
        return raw.decode('utf-8-sig')
    except UnicodeDecodeError as error:
        if len(raw) == wanted and error.reason == 'unexpected end of data':
            return raw[: error.start].decode('utf-8-sig')
        raise SkillFormatError(skill_file, f'the file is not valid UTF-8 (byte {error.start})') from error


def _read_head(skill_file: str | Path) -> tuple[str, bytes, bool]:
    """The frontmatter text between the delimiters, the bytes read after them, and whether those reach the end
    of the file; only as much of the file is read as a frontmatter can fill."""
    # One read instead of a system call per line; the bounded line reads below decide (closing line
    # found, or a limit passed) before reaching the end of this much.
    raw = _read_start(skill_file, _HEAD_READ_BYTES)
    start = io.BytesIO(raw)
    first = start.readline(MAX_FRONTMATTER_BYTES)
    if first.startswith(_BOM):
        first = first[len(_BOM) :]
    if not _is_delimiter(first.decode('utf-8', errors='replace')):
        raise SkillFormatError(skill_file, 'the file does not start with a `---` frontmatter line')
    collected: list[bytes] = []
    size = 0
    while True:
        line = start.readline(MAX_FRONTMATTER_BYTES - size + 1)
        if not line:
            raise SkillFormatError(skill_file, 'the frontmatter is not closed by a `---` line')
        size += len(line)
        if size > MAX_FRONTMATTER_BYTES:
            raise SkillFormatError(skill_file, f'the frontmatter is larger than {MAX_FRONTMATTER_BYTES:,} bytes')
        if _is_delimiter(line.decode('utf-8', errors='replace')):
            try:
                head = b''.join(collected).decode('utf-8')
            except UnicodeDecodeError as error:
                raise SkillFormatError(skill_file, 'the frontmatter is not valid UTF-8') from error
            return head, raw[start.tell() :], len(raw) < _HEAD_READ_BYTES
        collected.append(line)


_BOM = b'\xef\xbb\xbf'
_HEAD_READ_BYTES = len(_BOM) + 2 * MAX_FRONTMATTER_BYTES + 2
"""Enough of a file for its frontmatter: an opening line and a frontmatter, each bounded by the limit."""


def _body_start(text: str) -> int | None:
    """Where the body begins: just after the line closing the frontmatter (only the frontmatter is scanned)."""
    end = text.find('\n')
    if not _is_delimiter(text if end < 0 else text[:end]):
        return None
    while end >= 0:
        start = end + 1
        end = text.find('\n', start)
        if _is_delimiter(text[start:] if end < 0 else text[start:end]):
            return len(text) if end < 0 else end + 1
    return None


MAX_YAML_DEPTH = 32
"""Frontmatter nested deeper than this is refused (libyaml's composer overflows the C stack on deep nesting)."""
MAX_YAML_NODES = 50_000
"""Frontmatter that expands to more values than this, counting every use of an alias, is refused (YAML bombs)."""


class _FrontmatterYAMLError(yaml.YAMLError):
    """The frontmatter is valid YAML but unsafe to build: too deep, self-referencing, or a bomb."""


class _LimitedConstructor:
    """Checks shared by both loaders: alias expansion (YAML bombs), cycles and duplicate keys."""

    may_have_aliases = True
    """Whether the text holds a `&` and a `*` (an alias needs both): without them nothing can expand."""

    def construct_document(self, node: Node) -> Any:
        if self.may_have_aliases:
            _check_expansion(node)
        return super().construct_document(node)  # type: ignore[misc]  # pyright: ignore

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == 'tag:yaml.org,2002:merge':
                continue
            key = cast(Any, self.construct_object(key_node, deep=True))  # type: ignore[attr-defined]  # pyright: ignore
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:
                continue  # unhashable: the base constructor reports it
            if duplicate:
                raise _FrontmatterYAMLError(f'the key {_shorten(repr(key))} appears twice in one mapping')
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]  # pyright: ignore


class _FrontmatterLoader(_LimitedConstructor, yaml.SafeLoader):
    """The pure-Python safe loader, with limits: nesting depth, alias expansion and duplicate keys.

    Used whenever the frontmatter could nest deeply: libyaml's composer recurses on the C stack, and a
    64 KB frontmatter of nested brackets crashes the whole process, where this one raises an error we report.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise _FrontmatterYAMLError(f'values are nested more than {MAX_YAML_DEPTH} levels deep')
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_CSafeLoader: type[Any] | None = getattr(yaml, 'CSafeLoader', None)
_FastFrontmatterLoader: type[Any] | None = (
    type('_FastFrontmatterLoader', (_LimitedConstructor, _CSafeLoader), {}) if _CSafeLoader else None
)
"""libyaml's parser with the same checks: about 10x faster, used only where nesting is provably shallow."""

_BLOCK_PREFIX = re.compile(r'^( *)((?:[-?][ \t]+)*)')


def _nesting_bound(text: str) -> int:
    """An upper bound on how deep `text` can nest: flow brackets, indentation and line-leading indicators."""
    flow = text.count('[') + text.count('{')
    block = 0
    for line in text.splitlines():
        match = _BLOCK_PREFIX.match(line)
        if match:
            indicators = match[2].count('-') + match[2].count('?')
            block = max(block, len(match[1]) + indicators)
    return flow + block + 2


def _check_expansion(root: Node) -> None:
    """Refuse alias cycles and documents whose aliases expand past `MAX_YAML_NODES` values (billion laughs)."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        children = _children(node)
        if finished:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[key] > MAX_YAML_NODES:
                raise _FrontmatterYAMLError(
                    f'aliases expand to more than {MAX_YAML_NODES:,} values (a YAML bomb?); write the values out'
                )
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise _FrontmatterYAMLError('an alias refers to a value that contains it; YAML cycles are not allowed')
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(cast('list[Node]', node.value))
    if isinstance(node, MappingNode):
        pairs = cast('list[tuple[Node, Node]]', node.value)
        return [child for pair in pairs for child in pair]
    return []


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + '…'


def _load_yaml(text: str) -> Any:
    if (fields := flat_mapping(text)) is not None:
        return fields
    # Half the depth limit leaves a wide margin under the bound, so both loaders accept exactly the same texts.
    shallow = _nesting_bound(text) <= MAX_YAML_DEPTH // 2
    loader_class = _FastFrontmatterLoader if shallow and _FastFrontmatterLoader else _FrontmatterLoader
    loader: Any = loader_class(text)
    loader.may_have_aliases = '&' in text and '*' in text
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _parse_yaml(skill_file: str | Path, head: str, notes: list[str]) -> dict[str, Any]:
    try:
        data = _load_yaml(head)
    except _FrontmatterYAMLError as error:
        raise SkillFormatError(skill_file, f'the frontmatter is refused: {error}') from error
    except Exception as error:  # untrusted YAML: bad dates, huge integers and the like raise ValueError & co
        data = _recover_unquoted_colons(skill_file, head, error)
        notes.append(f'{skill_file}: quoted a frontmatter value that contains ": "; quote it in the file')
    if data is None:
        raise SkillFormatError(skill_file, 'the frontmatter is empty; it needs `name` and `description`')
    if not isinstance(data, dict):
        raise SkillFormatError(skill_file, f'the frontmatter is a YAML {type(data).__name__}, not a mapping of fields')
    return cast('dict[str, Any]', data)


_PLAIN_FIELD = re.compile(r'^(?P<key>[A-Za-z_][\w-]*):[ \t]+(?P<value>[^\'"|>\[{&*!#].*)$')


def _recover_unquoted_colons(skill_file: str | Path, head: str, error: Exception) -> Any:
    """Retry a frontmatter that failed only because a plain value contains `: ` (allowed by agentskills.io).

    Skill authors often write `description: Use when: the user asks...`; YAML reads that as a nested
    mapping and fails. The spec asks clients to recover, so top-level plain values are quoted and
    parsed again (the caller notes it, for a warning).
    """

    def quote(match: re.Match[str]) -> str:
        value = match['value'].rstrip()
        if ': ' not in value and not value.endswith(':'):
            return match[0]
        return f'{match["key"]}: "{value.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'

    if isinstance(error, yaml.YAMLError):
        problem = f'the frontmatter is not valid YAML ({_first_line(error)})'
    else:
        problem = f'the frontmatter has a value YAML cannot convert ({_first_line(error)}); quote it'
    repaired = '\n'.join(_PLAIN_FIELD.sub(quote, line) for line in head.splitlines())
    if repaired == head.rstrip('\n') or repaired == head:
        raise SkillFormatError(skill_file, problem) from error
    try:
        data = _load_yaml(repaired)
    except Exception:
        raise SkillFormatError(skill_file, problem) from error
    return data


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return _shorten(text.splitlines()[0]) if text else type(error).__name__


def _validate(skill_file: str | Path, data: dict[str, Any], notes: list[str]) -> Frontmatter:
    name = _required_string(skill_file, data, 'name')
    if problem := name_problem(name):
        raise SkillFormatError(skill_file, problem)
    folder = os.path.basename(os.path.dirname(os.path.abspath(skill_file)))  # lexical: `..` names the real folder
    if unicodedata.normalize('NFKC', folder) != name:
        raise SkillFormatError(skill_file, f'the name {name!r} does not match its folder {folder!r}; rename one')
    description = _required_string(skill_file, data, 'description')
    if len(description) > MAX_DESCRIPTION_LENGTH:
        notes.append(
            f'{skill_file}: the description is {len(description)} characters; '
            f'the format allows {MAX_DESCRIPTION_LENGTH}, so catalogs may shorten it'
        )
    metadata = data.get('metadata', {})
    if not isinstance(metadata, Mapping):
        raise SkillFormatError(skill_file, '`metadata` must be a mapping of keys to values')
    extra = {str(key): value for key, value in data.items() if key not in KNOWN_FIELDS}
    return Frontmatter(
        name=name,
        description=description,
        license=_optional_string(skill_file, data, 'license'),
        compatibility=_optional_string(skill_file, data, 'compatibility'),
        allowed_tools=_allowed_tools(skill_file, data.get('allowed-tools')),
        metadata={**extra, **cast('Mapping[str, Any]', metadata)},
        notes=tuple(notes),
    )


def _required_string(skill_file: str | Path, data: Mapping[str, Any], key: str) -> str:
    if key not in data:
        raise SkillFormatError(skill_file, f'the frontmatter has no `{key}` field')
    value = data[key]
    if not isinstance(value, str):
        raise SkillFormatError(skill_file, f'`{key}` must be a string, not a YAML {type(value).__name__}')
    value = value.strip()
    if not value:
        raise SkillFormatError(skill_file, f'`{key}` is empty')
    return value


def _optional_string(skill_file: str | Path, data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise SkillFormatError(skill_file, f'`{key}` must be a string, not a YAML {type(value).__name__}')
    return value


def _allowed_tools(skill_file: str | Path, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list) and all(isinstance(item, str) for item in cast('list[Any]', value)):
        return tuple(cast('list[str]', value))
    raise SkillFormatError(skill_file, '`allowed-tools` must be a space-separated string or a list of strings')
