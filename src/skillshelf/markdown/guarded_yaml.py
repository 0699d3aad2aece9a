"""The one YAML parser for untrusted frontmatter: PyYAML's safe loader, with limits checked before anything is built.

A frontmatter is looked at twice. First its event stream (the parser's output, produced by a state machine
with its own stack, so any nesting is safe to walk) is checked against the limits: nesting depth, alias cycles,
and how much aliases expand, in values and in bytes of text. Only then is it composed and built, with libyaml
when PyYAML has it (its composer recurses on the C stack, which the depth check keeps shallow) and the
pure-Python loader otherwise. Keys must be unique in every mapping.

Every frontmatter goes through the same loader, so a text has one meaning everywhere (discovery, loading and
`skillshelf validate`).
"""

from __future__ import annotations

from collections.abc import Generator, Hashable
from contextlib import contextmanager
from typing import Any, cast

import yaml
from yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent, NodeEvent, ScalarEvent
from yaml.nodes import MappingNode, Node, ScalarNode

from .._text import one_line
from .flat_yaml import flat_fields

__all__ = (
    'MAX_YAML_DEPTH',
    'MAX_YAML_EXPANDED_BYTES',
    'MAX_YAML_NODES',
    'YAMLRefusedError',
    'compose',
    'load',
    'nested_deeper_than',
    'yaml_problem',
)

MAX_YAML_DEPTH = 32
"""Frontmatter nested deeper than this is refused (libyaml's composer would overflow the C stack on deep nesting)."""
MAX_YAML_NODES = 50_000
"""Frontmatter that expands to more values than this, counting every use of an alias, is refused (YAML bombs)."""
MAX_YAML_EXPANDED_BYTES = 256 * 1024
"""Frontmatter whose text values add up to more UTF-8 bytes than this, counting every use of an alias, is refused:
aliases can repeat one long value thousands of times while staying under `MAX_YAML_NODES`."""


class YAMLRefusedError(yaml.YAMLError):
    """The frontmatter is valid YAML but unsafe to build: too deep, self-referencing, a bomb, or a repeated key."""


class _UniqueKeys:
    """A constructor mix-in that refuses a key repeated in one mapping (YAML says keys are unique; PyYAML keeps
    the last one silently)."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[Any] = set()
        for key_node, _ in cast('list[tuple[Node, Node]]', node.value):
            if key_node.tag == 'tag:yaml.org,2002:merge':
                continue
            key = cast(Any, self.construct_object(key_node, deep=True))  # type: ignore[attr-defined]  # pyright: ignore
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:
                continue  # unhashable: the base constructor reports it
            if duplicate:
                raise YAMLRefusedError(f'the key {one_line(repr(key), 60)} appears twice in one mapping')
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]  # pyright: ignore


_BASE_LOADER: type[yaml.SafeLoader] = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
"""libyaml's safe loader when PyYAML was built with it (about ten times faster), else the pure-Python one."""


def _loader_class(base: type[yaml.SafeLoader]) -> type[yaml.SafeLoader]:
    return cast('type[yaml.SafeLoader]', type('GuardedLoader', (_UniqueKeys, base), {}))


_LOADER = _loader_class(_BASE_LOADER)


def compose(text: str) -> Node | None:
    """The checked node tree of `text` (for format checks that need YAML's structure), `None` if it is empty.

    Raises:
        YAMLRefusedError: `text` breaks a limit (see the module docstring).
        yaml.YAMLError: `text` is not valid YAML.
    """
    with _checked_loader(text) as loader:
        return loader.get_single_node()


def load(text: str) -> Any:
    """The value `text` holds, after the checks of `compose`; a repeated key is refused too.

    Raises:
        YAMLRefusedError: `text` breaks a limit or repeats a key.
        yaml.YAMLError: `text` is not valid YAML.
        ValueError: YAML cannot convert a value (an impossible date, an integer with thousands of digits, ...).
    """
    if (fields := flat_fields(text)) is not None:  # most frontmatter: the same mapping, without a parser
        return fields
    with _checked_loader(text) as loader:
        node = loader.get_single_node()
        if node is None:
            return None
        if (fields := _text_fields(node)) is not None:
            return fields
        # What `get_single_data` does after `get_single_node`.
        return cast(Any, loader.construct_document(node))  # pyright: ignore[reportUnknownMemberType]


def _text_fields(node: Node) -> dict[str, str] | None:
    """The mapping `node` holds when it maps distinct text keys to text values, as most frontmatter does (`name`,
    `description`), built from the nodes: what the constructor would build, at a third of its cost. `None` for any
    other node, which the constructor builds (and refuses, if a key is repeated)."""
    if not isinstance(node, MappingNode):
        return None
    fields: dict[str, str] = {}
    for key, value in cast('list[tuple[Node, Node]]', node.value):
        if not (type(key) is ScalarNode and type(value) is ScalarNode and key.tag == _STR and value.tag == _STR):
            return None
        fields[cast(str, key.value)] = cast(str, value.value)
    return fields if len(fields) == len(node.value) else None


_STR = 'tag:yaml.org,2002:str'
"""The tag of a text scalar, once the resolver has given plain scalars theirs (`true`, `12` and `~` are not text)."""


@contextmanager
def _checked_loader(text: str) -> Generator[yaml.SafeLoader]:
    """A loader over `text`, once `text` passed the limits; disposed of afterwards."""
    _check_limits(text)
    loader = _LOADER(text)
    try:
        yield loader
    finally:
        loader.dispose()  # pyright: ignore[reportUnknownMemberType]


def yaml_problem(error: yaml.YAMLError, first_line: int = 1) -> str:
    """What is wrong, in one line, with the line it is on; the text's first line is line `first_line`."""
    if not isinstance(error, yaml.MarkedYAMLError):
        return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    problem = error.problem or error.context or type(error).__name__
    if problem == 'found invalid Unicode character escape code':
        problem += ' (`\\ud800` to `\\udfff` are halves of UTF-16 pairs, which UTF-8 cannot hold; write the character)'
    mark = error.problem_mark or error.context_mark
    return problem if mark is None else f'{problem} on line {mark.line + first_line}'


def _check_limits(text: str) -> None:
    """Refuse `text` if it breaks a limit, in the project's own words whatever PyYAML's version.

    libyaml's scanner may refuse deep nesting itself before the walk reaches our depth limit (PyYAML 6.0.4 added
    its own limit, with its own wording). When the fast walk stops on any YAML error, the text up to the error is
    walked again by the pure-Python parser, which has no such limit: a limit broken there is reported as ours, and
    otherwise the original syntax error stands.
    """
    if not _may_break_limits(text):
        return
    try:
        _walk_limits(_BASE_LOADER, text)
    except YAMLRefusedError:
        raise
    except yaml.YAMLError as error:
        mark = getattr(error, 'problem_mark', None) or getattr(error, 'context_mark', None)
        prefix = text if mark is None else text[: mark.index + 1]
        if _BASE_LOADER is not yaml.SafeLoader and _may_break_limits(prefix):
            try:
                _walk_limits(yaml.SafeLoader, prefix)
            except YAMLRefusedError as refusal:
                raise refusal from None
            except yaml.YAMLError:
                pass  # the prefix ends mid-document: only a refusal before that point matters
        raise


def _walk_limits(loader_class: type[yaml.SafeLoader], text: str) -> None:
    """Walk the event stream of `text` once, refusing it as soon as it breaks a limit.

    Each node's expanded size (values, and bytes of text) is added to its parent's when it ends; an alias adds
    the size its anchor ended with. An alias to a node that has not ended yet is a cycle.
    """
    frames: list[list[int]] = [[0, 0]]  # the sizes of the open collections, outermost first
    anchors: dict[str, tuple[int, int] | None] = {}  # None: the anchored node is still open
    open_anchors: list[str | None] = []
    loader = loader_class(text)
    try:
        while (event := cast('yaml.Event | None', loader.get_event())) is not None:  # pyright: ignore[reportUnknownMemberType]
            if isinstance(event, NodeEvent) and len(frames) > MAX_YAML_DEPTH:
                raise YAMLRefusedError(f'values are nested more than {MAX_YAML_DEPTH} levels deep')
            if isinstance(event, CollectionStartEvent):
                frames.append([1, 0])
                open_anchors.append(event.anchor)
                if event.anchor is not None:
                    anchors[event.anchor] = None
                continue
            if isinstance(event, CollectionEndEvent):
                nodes, size = frames.pop()
                anchor = open_anchors.pop()
                if anchor is not None:
                    anchors[anchor] = (nodes, size)
            elif isinstance(event, ScalarEvent):
                nodes, size = 1, len(event.value.encode('utf-8', 'surrogatepass'))
                if event.anchor is not None:
                    anchors[event.anchor] = (nodes, size)
            elif isinstance(event, AliasEvent) and event.anchor in anchors:
                expanded = anchors[event.anchor]
                if expanded is None:
                    raise YAMLRefusedError('an alias refers to a value that contains it; YAML cycles are not allowed')
                nodes, size = expanded
            else:
                continue  # stream and document events; an unknown alias is the composer's error to report
            _add(frames, nodes, size)
    finally:
        loader.dispose()  # pyright: ignore[reportUnknownMemberType]


def _may_break_limits(text: str) -> bool:
    """Whether `text` could break a limit at all, judged without parsing it (most frontmatter cannot).

    Without an anchor nothing expands, so a text shorter than `MAX_YAML_NODES` characters has fewer values and
    fewer bytes of text than the limits; then only its nesting could, and each level of nesting takes a bracket,
    or a character of indentation or a `-`/`?` indicator at the start of a line.
    """
    if '&' in text or len(text) >= MAX_YAML_NODES:
        return True
    flow = text.count('[') + text.count('{')
    block = max((len(line) - len(line.lstrip(' \t-?')) for line in text.splitlines()), default=0)
    return flow + block + 2 > MAX_YAML_DEPTH


def _add(frames: list[list[int]], nodes: int, size: int) -> None:
    """Count an ended node in its parent, refusing the document once its expansion passes a limit."""
    parent = frames[-1]
    parent[0] += nodes
    parent[1] += size
    # Sizes only grow, so the open collections' sizes together bound the document's: check that sum.
    total_nodes = sum(frame[0] for frame in frames)
    total_size = sum(frame[1] for frame in frames)
    if total_nodes > MAX_YAML_NODES:
        raise YAMLRefusedError(
            f'aliases expand to more than {MAX_YAML_NODES:,} values (a YAML bomb?); write the values out'
        )
    if total_size > MAX_YAML_EXPANDED_BYTES:
        raise YAMLRefusedError(
            f'aliases expand the text to more than {MAX_YAML_EXPANDED_BYTES:,} bytes (a YAML bomb?); '
            'write the values out'
        )


def nested_deeper_than(value: object, limit: int) -> bool:
    """Whether `value` (decoded JSON or YAML: dicts, lists, scalars) nests more than `limit` levels deep, walked with a
    stack of its own, so any depth is safe; for values that did not come through this parser (a registry's rows)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= limit:
                return True
            children = (
                cast('dict[object, object]', item).values() if isinstance(item, dict) else cast('list[object]', item)
            )
            stack.extend((child, depth + 1) for child in children)
    return False
