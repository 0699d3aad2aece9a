"""Advice on a skill's body: its size, and the files it links to or mentions."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from .report import CHARACTERS_PER_TOKEN, Finding

__all__ = ('MAX_BODY_LINES', 'MAX_BODY_TOKENS', 'check_body')

MAX_BODY_LINES = 500
"""The format recommends keeping `SKILL.md` under 500 lines and moving detail into referenced files."""


MAX_BODY_TOKENS = 5000
"""The format recommends instructions under about 5,000 tokens."""


_LINK = re.compile(r'!?\[[^\[\]\n]*\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"\n]*")?\s*\)')
"""A markdown link or image and its target. Link text holds no bracket and the target no parenthesis, so a match
attempt stops at the next one: a body of thousands of `[` or `[a](` is scanned in linear time."""


_SPEC_DIR_PATH = re.compile(r'`((?:scripts|references|assets)/[^`\s]+)`')


_FENCE = re.compile(r'^(```|~~~).*?^\1', re.S | re.M)


def check_body(folder: Path, body: str, findings: list[Finding]) -> None:
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
