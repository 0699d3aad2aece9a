"""Scanning a skill: its `SKILL.md` (frontmatter and body) and every file a rule reads, cut into parts
(`parts`), each part read by the rules of its kind. Nothing is run or fetched.

A file's findings are kept by a digest of its text (`cache`), so a library read again (a refresh, another start of
the agent) scans only what changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..content.base import decode_text
from ..errors import SkillError
from ..markdown.bounded_read import read_skill_file
from ..scripts.needs.scan import MAX_SCRIPT_BYTES
from .cache import findings_cache
from .dependency_rules import requirement_findings
from .finding import Finding
from .parts import Part, file_parts, language_of
from .prompt_rules import hidden_instructions, may_instruct, override_instructions
from .python_rules import python_findings
from .script_rules import javascript_findings, powershell_findings
from .shell_rules import Hit, Language, Where, shell_findings
from .unicode_rules import hidden_characters
from .vocabulary import urls_in

if TYPE_CHECKING:
    from ..skill import Skill

__all__ = ('SKILL_FILE', 'scan_files', 'scan_frontmatter', 'scan_skill')

SKILL_FILE = 'SKILL.md'
_INLINE_SIGNS = (
    '|',
    '$(',
    '<(',
    '`',
    'install',
    'add ',
    'npx ',
    'uvx ',
    'bunx ',
    'pipx ',
    ' -c ',
    'curl ',
    'nc ',
    ' -e ',
)
"""What inline code holds if a rule that reads it (code run, credentials sent, packages installed) can find
anything: most inline code is a name or a path."""
_SEARCH_FIELDS = ('when_to_use', 'when-to-use', 'keywords', 'tags', 'triggers')
"""Frontmatter fields the catalog or the search shows the model beside the description."""
_SCANNED_SUFFIXES = (
    '.md',
    '.markdown',
    '.mdx',
    '.sh',
    '.bash',
    '.zsh',
    '.ksh',
    '.command',
    '.py',
    '.pyw',
    '.js',
    '.mjs',
    '.cjs',
    '.ts',
    '.mts',
    '.cts',
    '.jsx',
    '.tsx',
    '.ps1',
    '.psm1',
    '.txt',
    '.in',
)


def scan_skill(skill: Skill[Any], unread: list[str] | None = None) -> list[Finding]:
    """Every finding in `skill`'s instructions and files, in file and line order; what could not be read now (a
    server down, a folder gone) is appended to `unread`, so a caller keeping verdicts scans that skill again.

    A skill without a `SKILL.md` file (from a package, a registry, Python) is scanned as a `SKILL.md` of its name,
    description and instructions, its lines counted from that frontmatter.
    """
    return scan_files(skill.name, _texts(skill, [] if unread is None else unread))


def scan_frontmatter(skill: Skill[Any]) -> list[Finding]:
    """The findings in what the model reads of `skill` before loading it: its name, description and the search
    fields an author declared (`when_to_use`, ...), read by the cheap rules (hidden characters, override and
    concealment phrasing). Nothing is read from disk, so a library scans thousands of skills this way at build."""
    fields = [('name', skill.name), ('description', skill.description)]
    fields += [(key, str(value)) for key in _SEARCH_FIELDS if (value := skill.metadata.get(key))]
    # As written in a `SKILL.md`: one field a line after `---`, read in one pass (each rule's cost is per text).
    text = '\n'.join(f'{key}: {" ".join(value.splitlines())}' for key, value in fields)
    hits: set[Hit] = {
        (line, 'hidden-unicode', severity, message) for line, severity, message in hidden_characters(text, 2)
    }
    phrase_rules = (('prompt-override', override_instructions), ('concealment', hidden_instructions))
    for rule, read in phrase_rules if may_instruct(text) else ():
        hits.update((line, rule, severity, message) for line, severity, message in read(text, 2, comment=False))
    return sorted(Finding(skill.name, SKILL_FILE, *hit) for hit in hits)


def scan_files(name: str, files: Iterable[tuple[str, str]]) -> list[Finding]:
    """The findings in the files `(path, text)` of the skill `name`."""
    findings = {
        Finding(name, path, line, rule, severity, message)
        for path, text in files
        for line, rule, severity, message in _file_hits(path, text)
    }
    return sorted(findings, key=lambda f: (f.file != SKILL_FILE, f.file, f.line, f.rule, f.message))


def _texts(skill: Skill[Any], unread: list[str]) -> list[tuple[str, str]]:
    """The texts a scan reads: the `SKILL.md`, then every file a rule reads (by suffix, or a `#!` line); a `SKILL.md`
    or file list that cannot be read now is named in `unread`."""
    texts = [(SKILL_FILE, _skill_md(skill, unread))]
    try:
        listed = skill.content.list_files()
    except (SkillError, OSError):
        listed = []  # gone or changed: loading it says so, and nothing of it reaches the model
        unread.append('its file list')
    for path in listed:
        base = path.rsplit('/', 1)[-1]
        if '.' in base and not base.lower().endswith(_SCANNED_SUFFIXES):
            continue
        try:
            data = skill.content.read_bytes(path, MAX_SCRIPT_BYTES)
            text = decode_text(path, data)
        except (SkillError, OSError):
            continue  # binary, not UTF-8, too large or gone: no rule reads it
        if language_of(path, text) is not None:
            texts.append((path, text))
    return texts


def _skill_md(skill: Skill[Any], unread: list[str]) -> str:
    """The `SKILL.md` as a scan reads it; without one (a package, a registry), its frontmatter and instructions; its
    frontmatter alone when the rest cannot be read (loading it then says why, and none of it reaches the model)."""
    if skill.skill_file is not None:
        try:
            return read_skill_file(skill.skill_file).decode('utf-8', 'replace')
        except (OSError, SkillError):
            pass
    front = f'---\nname: {skill.name}\ndescription: {skill.description}\n---\n'
    try:
        return front + skill.content.instructions()
    except (OSError, SkillError):
        unread.append(SKILL_FILE)
        return front


def _file_hits(path: str, text: str) -> tuple[Hit, ...]:
    key = findings_cache.key(path, text)
    hits = findings_cache.get(key)
    if hits is None:
        hits = tuple(_scan_text(path, text))
        findings_cache.put(key, hits)
    return hits


def _scan_text(path: str, text: str) -> list[Hit]:
    hits: list[Hit] = [
        (line, 'hidden-unicode', severity, message) for line, severity, message in hidden_characters(text)
    ]
    where: Where = 'markdown' if language_of(path, text) == 'markdown' else 'script'
    for part in file_parts(path, text):
        hits.extend(_part_hits(part, where))
    return hits


def _part_hits(part: Part, where: Where) -> list[Hit]:
    def shell(code: str, line: int) -> list[Hit]:
        return shell_findings(code, line, where, embedded)

    def python(code: str, line: int) -> list[Hit]:
        return python_findings(code, line, shell)

    def embedded(language: Language, code: str, line: int) -> list[Hit]:
        return python(code, line) if language == 'python' else javascript_findings(code, line, shell)

    if part.kind in ('prose', 'comment'):
        comment = part.kind == 'comment'
        hits: list[Hit] = [
            (line, 'prompt-override', severity, message)
            for line, severity, message in override_instructions(part.text, part.line, comment=comment)
        ]
        hits.extend(
            (line, 'concealment', severity, message)
            for line, severity, message in hidden_instructions(part.text, part.line, comment=comment)
        )
        return hits + (shell(part.text, part.line) if comment else [])
    if part.kind == 'shell':
        return shell(part.text, part.line)
    if part.kind == 'inline':
        if not any(sign in part.text for sign in _INLINE_SIGNS):
            return []
        # Prose names commands to warn against them (`rm -rf ~`) and sketches them (`curl ... | bash`): inline code
        # counts only for what no one writes in passing, code fetched from a URL it names or decoded and run.
        named_url = bool(urls_in(part.text))
        return [
            hit
            for hit in shell(part.text, part.line)
            if hit[1] not in ('destructive', 'persistence', 'other-skills') and (hit[1] != 'remote-code' or named_url)
        ]
    if part.kind == 'python':
        return python(part.text, part.line)
    if part.kind == 'javascript':
        return javascript_findings(part.text, part.line, shell)
    if part.kind == 'powershell':
        return shell(part.text, part.line) + powershell_findings(part.text, part.line)
    return [(line, rule, severity, message) for line, rule, severity, message in requirement_findings(part.text)]
