"""Checking `SKILL.md` folders against the Agent Skills format and skillshelf's own authoring advice.

Every finding names a rule. Rules in `SPEC_RULES` are the format's own, and agree with the reference
validator `skills-ref` (a test proves it on real skills); the others are skillshelf's lint: what the
library refuses to load, and advice that makes a skill easier for a model to pick and use.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import yaml

from .errors import SkillFormatError, SkillWarning
from .markdown import guarded_yaml
from .markdown.frontmatter import (
    KNOWN_FIELDS,
    MAX_COMPATIBILITY_LENGTH,
    MAX_DESCRIPTION_LENGTH,
    SKILL_FILE,
    name_problem,
    read_body,
    read_frontmatter_text,
    unencodable_problem,
)
from .skill import Skill

__all__ = ('SPEC_RULES', 'Finding', 'SkillReport', 'lint_directories', 'lint_folder')

Severity = Literal['error', 'warning']

SPEC_RULES = frozenset(
    {'frontmatter', 'unknown-field', 'name', 'name-folder', 'description', 'description-length', 'compatibility'}
)
"""Rules of the Agent Skills format itself; the rest are skillshelf's lint."""

MAX_BODY_LINES = 500
"""The format recommends keeping `SKILL.md` under 500 lines and moving detail into referenced files."""
MAX_BODY_TOKENS = 5000
"""The format recommends instructions under about 5,000 tokens."""
MIN_DESCRIPTION_CHARACTERS = 40
CHARACTERS_PER_TOKEN = 4
"""A rough, model-independent estimate used for every token count the command line shows."""

_WHEN = re.compile(r'\b(use|used|invoke|trigger(?:ed|s)?|apply|load)\b[^.]{0,40}\b(when|for|if|whenever|to)\b', re.I)
_WHEN_ALONE = re.compile(r'\b(when|whenever)\b', re.I)
_FIRST_PERSON = re.compile(r"^\s*(i|i'm|i am|we|you|you can|this skill lets you)\b", re.I)
_LINK = re.compile(r'!?\[[^\[\]\n]*\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"\n]*")?\s*\)')
"""A markdown link or image and its target. Link text holds no bracket and the target no parenthesis, so a match
attempt stops at the next one: a body of thousands of `[` or `[a](` is scanned in linear time."""
_SPEC_DIR_PATH = re.compile(r'`((?:scripts|references|assets)/[^`\s]+)`')
_FENCE = re.compile(r'^(```|~~~).*?^\1', re.S | re.M)


@dataclass(frozen=True)
class Finding:
    """One problem with one skill."""

    rule: str
    """Stable rule id, e.g. `name-folder` or `description-short`."""
    severity: Severity
    """`error` fails `skillshelf validate`; `warning` fails it only with `--strict`."""
    message: str
    """What is wrong and how to fix it."""

    @property
    def spec(self) -> bool:
        """Whether the rule is the Agent Skills format's own (see `SPEC_RULES`)."""
        return self.rule in SPEC_RULES


@dataclass
class SkillReport:
    """Everything found about one skill folder."""

    folder: Path
    """The skill folder."""
    name: str | None
    """The skill's name when the frontmatter has a readable one."""
    findings: list[Finding]
    """Problems, in the order they were found."""

    @property
    def errors(self) -> list[Finding]:
        """Findings that make the skill invalid."""
        return [finding for finding in self.findings if finding.severity == 'error']

    @property
    def warnings(self) -> list[Finding]:
        """Advice: the skill works, but could be easier to find or use."""
        return [finding for finding in self.findings if finding.severity == 'warning']


def skill_folders(directory: Path) -> list[Path]:
    """The skill folders in a library directory, as discovery reads them: itself, or its visible sub-folders."""
    if (directory / SKILL_FILE).is_file():
        return [directory]
    if not directory.is_dir():
        return []
    try:
        children = list(directory.iterdir())
    except OSError:
        return []
    return sorted(
        child
        for child in children
        if not child.name.startswith('.') and child.is_dir() and (child / SKILL_FILE).is_file()
    )


def lint_directories(
    directories: Sequence[Path], *, progress: Callable[[int], Callable[[], None]] | None = None
) -> tuple[list[SkillReport], list[str]]:
    """Lint every skill folder in `directories`; also returns problems with the directories themselves.

    `progress`, if given, is called once with the number of folders and returns a callback run after each one.
    """
    reports: list[SkillReport] = []
    problems: list[str] = []
    seen: dict[str, Path] = {}
    found: list[Path] = []
    for directory in directories:
        if not directory.is_dir():
            problems.append(f'{directory}: the directory does not exist')
            continue
        folders = skill_folders(directory)
        misnamed = _misnamed_skill_files(directory, folders)
        problems.extend(f'{path}: skillshelf reads only {SKILL_FILE}; rename the file' for path in misnamed)
        if not folders and not misnamed:
            problems.append(f'{directory}: no skill folder (a folder holding a {SKILL_FILE}) was found')
        found.extend(folders)
    advance = progress(len(found)) if progress is not None else None
    for folder in found:
        report = lint_folder(folder)
        if advance is not None:
            advance()
        if report.name is not None and report.name in seen:
            report.findings.append(
                Finding(
                    'shadowed',
                    'warning',
                    f'another skill named {report.name!r} is in {seen[report.name]}; the earlier one wins',
                )
            )
        elif report.name is not None:
            seen[report.name] = folder
        reports.append(report)
    return reports, problems


def _misnamed_skill_files(directory: Path, folders: Sequence[Path]) -> list[Path]:
    """`skill.md` files (any case but the right one) that other tools accept and skillshelf would not find."""
    try:
        children = sorted(child for child in directory.iterdir() if child.is_dir() and not child.name.startswith('.'))
    except OSError:
        children = []
    candidates = [directory, *children]
    misnamed: list[Path] = []
    for folder in candidates:
        if folder in folders or (folder == directory and folders):
            continue
        try:
            names = sorted(path.name for path in folder.iterdir())
        except OSError:
            continue  # an unreadable folder holds nothing skillshelf could load either
        misnamed.extend(folder / name for name in names if name.lower() == 'skill.md' and name != SKILL_FILE)
    return misnamed


def lint_folder(folder: Path) -> SkillReport:
    """Check one skill folder: the format's rules, whether skillshelf can load it, and authoring advice."""
    skill_file = folder / SKILL_FILE
    findings: list[Finding] = []
    data = _frontmatter_fields(skill_file, findings)
    name: str | None = None
    if data is not None:
        name = _check_fields(folder, data, findings)
    _check_loads(folder, findings)
    try:
        body = read_body(skill_file)
    except SkillFormatError as error:
        if not any(finding.severity == 'error' for finding in findings):
            findings.append(Finding('loads', 'error', f'skillshelf cannot load the skill: {error.problem}'))
    else:
        _check_body(folder, body, findings)
    return SkillReport(folder, name, findings)


def _frontmatter_fields(skill_file: Path, findings: list[Finding]) -> dict[str, Any] | None:
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


def _check_fields(folder: Path, data: Mapping[str, Any], findings: list[Finding]) -> str | None:
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
    if problem := name_problem(name):
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


def _check_loads(folder: Path, findings: list[Finding]) -> None:
    """Report what the library itself refuses or repairs, unless a format rule already explains it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            Skill.from_folder(folder)
        except SkillFormatError as error:
            if not any(finding.severity == 'error' for finding in findings):
                findings.append(Finding('loads', 'error', f'skillshelf cannot load the skill: {error.problem}'))
            return
    if any(finding.rule == 'frontmatter' for finding in findings):
        return  # the library's repairs (quoting a value with ": ") are the frontmatter problem already reported
    for warning in caught:
        if issubclass(warning.category, SkillWarning) and 'characters; the format allows' not in str(warning.message):
            findings.append(Finding('loads', 'warning', str(warning.message).split(': ', 1)[-1]))


def _check_body(folder: Path, body: str, findings: list[Finding]) -> None:
    if not body:
        findings.append(
            Finding(
                'body-empty', 'warning', 'the body is empty: the model gets no instructions when it loads the skill'
            )
        )
        return
    lines = body.count('\n') + 1
    if lines > MAX_BODY_LINES:
        findings.append(
            Finding(
                'body-size',
                'warning',
                f'the body is {lines} lines; keep it under {MAX_BODY_LINES} and move detail into files it references',
            )
        )
    tokens = len(body) // CHARACTERS_PER_TOKEN
    if tokens > MAX_BODY_TOKENS:
        findings.append(
            Finding(
                'body-size',
                'warning',
                f'the body is about {tokens:,} tokens; the format recommends under {MAX_BODY_TOKENS:,}',
            )
        )
    prose = _FENCE.sub('', body)
    for target in _missing_references(folder, _LINK.findall(prose)):
        findings.append(
            Finding('missing-resource', 'error', f'the body links to {target!r}, which is not in the skill folder')
        )
    for target in _missing_references(folder, _SPEC_DIR_PATH.findall(prose)):
        findings.append(
            Finding('missing-resource', 'warning', f'the body mentions {target!r}, which is not in the skill folder')
        )


def _missing_references(folder: Path, targets: Iterable[str]) -> list[str]:
    missing: list[str] = []
    root = folder.resolve()
    for target in dict.fromkeys(targets):
        path = target.split('#', 1)[0].split('?', 1)[0]
        if not path or '://' in path or path.startswith(('/', '~', 'mailto:', '#')) or ':' in path.split('/')[0]:
            continue
        candidate = (root / path).resolve()
        if not candidate.is_relative_to(root) or not candidate.exists():
            missing.append(path)
    return missing
