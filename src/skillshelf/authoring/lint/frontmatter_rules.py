"""The frontmatter rules: the Agent Skills format's own (see `SPEC_RULES`), and advice on names and descriptions."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

import yaml

from ...errors import SkillFormatError
from ...markdown import guarded_yaml
from ...markdown.flags import flag_problems
from ...markdown.frontmatter import read_frontmatter_text
from ...markdown.names import spec_name_problem
from ...markdown.schema import KNOWN_FIELDS, MAX_COMPATIBILITY_LENGTH, MAX_DESCRIPTION_LENGTH, unencodable_problem
from .report import Finding

__all__ = ('MIN_DESCRIPTION_CHARACTERS', 'check_fields', 'frontmatter_fields')

MIN_DESCRIPTION_CHARACTERS = 40


_WHEN = re.compile(r'\b(use|used|invoke|trigger(?:ed|s)?|apply|load)\b[^.]{0,40}\b(when|for|if|whenever|to)\b', re.I)


_WHEN_ALONE = re.compile(r'\b(when|whenever)\b', re.I)


_FIRST_PERSON = re.compile(r"^\s*(i|i'm|i am|we|you|you can|this skill lets you)\b", re.I)


def frontmatter_fields(skill_file: Path, findings: list[Finding]) -> dict[str, Any] | None:
    """The frontmatter mapping as the library's reader and YAML loader read it (strictly: no repairs), or `None`
    after recording why it cannot be read."""

    def problem(message: str) -> None:
        findings.append(Finding('frontmatter', 'error', message))

    try:
        head = read_frontmatter_text(skill_file)
        node = guarded_yaml.compose(head)
    except SkillFormatError as error:
        problem(error.problem)
        return None
    except guarded_yaml.YAMLRefusedError as error:
        problem(f'the frontmatter is refused: {error}')
        return None
    except yaml.YAMLError as error:
        problem(_yaml_error(error))
        return None
    if not isinstance(node, yaml.MappingNode):
        problem('the frontmatter must be a YAML mapping of fields (`name:`, `description:` ...)')
        return None
    if message := _strict_yaml_problem(node):
        problem(message)
        return None
    try:
        data = cast('dict[str, Any]', guarded_yaml.load(head))
    except Exception as error:  # a value YAML reads as a type it cannot build: an impossible date, a huge integer
        detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        findings.append(Finding('field-type', 'error', f'YAML cannot convert a value ({detail}); quote it'))
        return None
    if message := unencodable_problem({str(key): value for key, value in data.items()}):
        problem(message)
        return None
    return data


def _yaml_error(error: yaml.YAMLError) -> str:
    detail = guarded_yaml.yaml_problem(error, first_line=2)  # the frontmatter starts on line 2
    hint = '; quote any value that contains ": "' if 'mapping values are not allowed' in detail else ''
    return f'the frontmatter is not valid YAML: {detail}{hint}'


def _strict_yaml_problem(node: yaml.Node) -> str | None:
    """Portable frontmatter: unique keys and block style, which the reference validator requires."""
    for child in _walk(node):
        if isinstance(child, (yaml.MappingNode, yaml.SequenceNode)) and child.flow_style:
            return (
                f'line {child.start_mark.line + 2}: flow-style YAML (`[...]` or `{{...}}`) is refused by the reference '
                'validator; use a block list or a quoted string'
            )
        if isinstance(child, yaml.MappingNode):
            keys = [key.value for key, _ in cast('list[tuple[yaml.Node, yaml.Node]]', child.value)]
            duplicates = sorted({str(key) for key in keys if keys.count(key) > 1})
            if duplicates:
                return f'the key {duplicates[0]!r} appears more than once in the frontmatter'
    return None


def _walk(node: yaml.Node) -> Iterable[yaml.Node]:
    yield node
    if isinstance(node, yaml.MappingNode):
        for key, value in cast('list[tuple[yaml.Node, yaml.Node]]', node.value):
            yield from _walk(key)
            yield from _walk(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in cast('list[yaml.Node]', node.value):
            yield from _walk(item)


def check_fields(folder: Path, data: Mapping[str, Any], findings: list[Finding]) -> str | None:
    """The format's field rules; returns the name if it is a string."""
    unknown = sorted(str(key) for key in data if key not in KNOWN_FIELDS)
    if unknown:
        findings.append(
            Finding(
                'unknown-field',
                'error',
                f'unknown frontmatter field(s): {", ".join(unknown)}; the format allows {", ".join(sorted(KNOWN_FIELDS))}'
                ' (put anything else under `metadata:`)',
            )
        )
    name = _check_name(folder, data, findings)
    _check_description(data, findings)
    nested = data.get('metadata')
    merged = {**data, **(cast('Mapping[str, Any]', nested) if isinstance(nested, Mapping) else {})}
    findings.extend(Finding('field-type', 'error', problem) for problem in flag_problems(merged))
    compatibility = data.get('compatibility')
    if 'compatibility' in data and _is_text(compatibility):
        if len(_text_of(compatibility)) > MAX_COMPATIBILITY_LENGTH:
            findings.append(
                Finding(
                    'compatibility',
                    'error',
                    f'`compatibility` is {len(_text_of(compatibility))} characters; the limit is '
                    f'{MAX_COMPATIBILITY_LENGTH}',
                )
            )
    elif 'compatibility' in data:
        findings.append(Finding('compatibility', 'error', '`compatibility` must be a string'))
    return name


def _check_name(folder: Path, data: Mapping[str, Any], findings: list[Finding]) -> str | None:
    if 'name' not in data:
        findings.append(Finding('name', 'error', 'the frontmatter has no `name` field'))
        return None
    raw = data['name']
    if not _is_text(raw) or not _text_of(raw).strip():
        findings.append(Finding('name', 'error', '`name` must be a non-empty string'))
        return None
    _check_scalar_type('name', raw, findings)
    written = _text_of(raw).strip()
    name = unicodedata.normalize('NFKC', written)
    if problem := spec_name_problem(name):
        findings.append(Finding('name', 'error', problem))
    elif name != written:
        findings.append(
            Finding('name-nfkc', 'error', f'the name {written!r} is not NFKC-normalised; write it as {name!r}')
        )
    if unicodedata.normalize('NFKC', folder.name) != name:
        findings.append(
            Finding('name-folder', 'error', f'the name {name!r} does not match its folder {folder.name!r}; rename one')
        )
    return name


def _check_description(data: Mapping[str, Any], findings: list[Finding]) -> None:
    if 'description' not in data:
        findings.append(Finding('description', 'error', 'the frontmatter has no `description` field'))
        return
    raw = data['description']
    if not _is_text(raw) or not _text_of(raw).strip():
        findings.append(Finding('description', 'error', '`description` must be a non-empty string'))
        return
    _check_scalar_type('description', raw, findings)
    description = _text_of(raw)
    if len(description) > MAX_DESCRIPTION_LENGTH:
        findings.append(
            Finding(
                'description-length',
                'error',
                f'the description is {len(description)} characters; the limit is {MAX_DESCRIPTION_LENGTH}',
            )
        )
    line = ' '.join(description.split())
    if len(line) < MIN_DESCRIPTION_CHARACTERS:
        findings.append(
            Finding(
                'description-short',
                'warning',
                f'the description is only {len(line)} characters; say what the skill does and when to use it, '
                'with the words a user would type',
            )
        )
    if not _WHEN.search(line) and not _WHEN_ALONE.search(line):
        findings.append(
            Finding(
                'description-when',
                'warning',
                'the description does not say when to use the skill; add e.g. "Use when the user asks to ..."',
            )
        )
    if _FIRST_PERSON.match(line):
        findings.append(
            Finding(
                'description-person',
                'warning',
                'write the description in the third person ("Formats ...", not "I can ..." or "You can ...")',
            )
        )


def _is_text(value: Any) -> bool:
    """Whether a YAML value is a scalar the format can read as text (every plain scalar is text to it)."""
    return value is not None and not isinstance(value, (dict, list))


def _text_of(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _check_scalar_type(key: str, value: Any, findings: list[Finding]) -> None:
    if not isinstance(value, str):
        findings.append(
            Finding(
                'field-type',
                'error',
                f'YAML reads `{key}: {value}` as a {type(value).__name__}, which skillshelf refuses; quote it',
            )
        )
