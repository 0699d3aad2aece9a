"""Library-level findings, beside the scan of each skill: skills that are near-duplicates of one another (the same
description words, or the same start of instructions), and descriptions too generic to route on. Cheap on purpose:
the search's own terms (`ranking.tokenize`), compared as sets by hashing, never pair by pair."""

from __future__ import annotations

from collections.abc import Iterable

from ..ranking.tokenize import tokenize
from .finding import Finding
from .scanner import SKILL_FILE

__all__ = ('GENERIC_TERMS', 'library_findings')

GENERIC_TERMS = frozenset(
    tokenize(
        'skill skills helper helpers help helps helping helpful utility utilities tool tools task tasks general generic '
        'various misc miscellaneous stuff things thing assist assistant assists assistance use used using useful '
        'handle handles handling work works working do does everything anything something support supports manage '
        'manages perform performs provide provides common basic simple advanced best practices practice guide'
    )
)
"""Words that say nothing about what a skill is for: a description made only of these cannot be routed on."""
_MIN_SPECIFIC_TERMS = 2
_MIN_DUPLICATE_TERMS = 4
"""Descriptions sharing fewer words than this are too short for their equality to mean a copy."""
_BODY_CHARS = 1500


def library_findings(skills: Iterable[tuple[str, str, str]]) -> list[Finding]:
    """The findings about skills `(name, description, start of instructions)` taken together."""
    findings: list[Finding] = []
    by_description: dict[frozenset[str], str] = {}
    by_body: dict[frozenset[str], str] = {}
    for name, description, body in skills:
        terms = frozenset(tokenize(description))
        specific = terms - GENERIC_TERMS
        if len(specific) < _MIN_SPECIFIC_TERMS:
            findings.append(
                Finding(
                    name,
                    SKILL_FILE,
                    0,
                    'generic-description',
                    'warning',
                    f'its description {description[:80]!r} says too little to route on: say what the skill does and '
                    'when to use it, in the words users ask with',
                )
            )
        if len(terms) >= _MIN_DUPLICATE_TERMS:
            first = by_description.setdefault(terms, name)
            if first != name:
                findings.append(
                    Finding(
                        name,
                        SKILL_FILE,
                        0,
                        'near-duplicate',
                        'warning',
                        f'its description has the same words as {first!r}: the model cannot tell which to load',
                    )
                )
                continue
        body_terms = frozenset(tokenize(body[:_BODY_CHARS]))
        if len(body_terms) >= 3 * _MIN_DUPLICATE_TERMS:
            first = by_body.setdefault(body_terms, name)
            if first != name:
                findings.append(
                    Finding(
                        name, SKILL_FILE, 0, 'near-duplicate', 'info', f'its instructions start like those of {first!r}'
                    )
                )
    return findings
