"""Discovery quality of a skill library against labelled queries: what `skillshelf eval` measures."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ...capability.meta_tools import MAX_QUERY_CHARACTERS
from ...errors import SkillError
from ...library import SkillLibrary
from ...markdown.frontmatter import SKILL_FILE

__all__ = ('EvalCase', 'EvalReport', 'Miss', 'SkillScore', 'evaluate', 'read_cases')

RANKED = 10
"""How many results each query is ranked to: MRR counts a relevant skill found below this as a miss."""


class EvalFileError(SkillError):
    """The queries file cannot be read; the message says which line and why."""


@dataclass(frozen=True)
class EvalCase:
    """One labelled query."""

    query: str
    """What a user would type."""
    relevant: tuple[str, ...] = ()
    """Skills that should be found; empty for a negative."""
    not_relevant: tuple[str, ...] = ()
    """Skills that must not come first (a named negative); with neither list, no skill should match at all."""

    @property
    def positive(self) -> bool:
        """Whether some skill should be found."""
        return bool(self.relevant)


@dataclass(frozen=True)
class Miss:
    """A positive query whose relevant skill did not come first."""

    query: str
    """The query."""
    expected: tuple[str, ...]
    """The skills that should have come first (their labels, when no skill has that name)."""
    rank: int | None
    """The rank of the best relevant skill (1 is first), `None` if it was not in the top results."""
    got: tuple[str, ...]
    """The top three results instead."""


@dataclass
class SkillScore:
    """How one skill fared: found for its own queries, and first on queries that were not its own."""

    name: str
    """The skill's name."""
    queries: int = 0
    """Positive queries labelled with this skill."""
    first: int = 0
    """Of those, how many ranked it first."""
    reciprocal_rank: float = 0.0
    """Sum of 1/rank over those queries (0 when it was not in the first ten)."""
    wrongly_first: int = 0
    """Queries it ranked first on without being relevant: its description may be too broad."""

    @property
    def precision_at_1(self) -> float:
        """Share of its queries that ranked it first."""
        return self.first / self.queries if self.queries else 0.0

    @property
    def mrr(self) -> float:
        """Mean reciprocal rank over its queries."""
        return self.reciprocal_rank / self.queries if self.queries else 0.0


@dataclass
class EvalReport:
    """The discovery metrics of one library on one set of queries."""

    positives: int = 0
    """Queries with a relevant skill."""
    negatives: int = 0
    """Queries no skill (or a named skill) should answer."""
    precision_at_1: float = 0.0
    """Share of positives whose first result is relevant."""
    recall_at_3: float = 0.0
    """Mean share of the relevant skills found in the first three results."""
    mrr: float = 0.0
    """Mean reciprocal rank of the first relevant result (0 when it is not in the first ten)."""
    false_trigger_rate: float = 0.0
    """Share of negatives that triggered: a named skill came first, or any skill matched an unnamed negative."""
    worst_misses: list[Miss] = field(default_factory=list[Miss])
    """Positives ranked worst, worst first."""
    unknown: list[str] = field(default_factory=list[str])
    """Labels that name no skill in the library (their queries are still counted)."""
    skills: list[SkillScore] = field(default_factory=list[SkillScore])
    """Every skill that was labelled or ranked first, worst first: lowest precision@1, then most wrongly first."""


def read_cases(path: Path, target: str | None = None) -> list[EvalCase]:
    """Read labelled queries from JSON Lines or a JSON array.

    Each record is `{"query": ..., "relevant": [names]}` (an empty list is a negative), optionally with
    `"not_relevant": [names]`, or the agentskills.io trigger-eval form `{"query": ..., "should_trigger": bool}`
    for one skill: the record's `"skill"`, else `target`, else the skill whose `evals/` folder holds the file.

    Raises:
        EvalFileError: the file is unreadable or a record is malformed.
    """
    try:
        text = path.read_text(encoding='utf-8-sig')
    except (OSError, UnicodeDecodeError) as error:
        raise EvalFileError(f'{path}: cannot read the file ({error})') from error
    records = _records(path, text)
    default_skill = target or _owning_skill(path)
    cases: list[EvalCase] = []
    for where, record in records:
        cases.append(_case(f'{path}:{where}', record, default_skill))
    if not cases:
        raise EvalFileError(f'{path}: the file holds no queries')
    return cases


def _records(path: Path, text: str) -> list[tuple[str, Any]]:
    stripped = text.strip()
    if stripped.startswith('['):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as error:
            raise EvalFileError(f'{path}: not valid JSON ({error})') from error
        return [(f'item {index}', item) for index, item in enumerate(cast('list[Any]', data), 1)]
    records: list[tuple[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append((f'line {number}', json.loads(line)))
        except json.JSONDecodeError as error:
            raise EvalFileError(f'{path}:line {number}: not valid JSON ({error.msg})') from error
    return records


def _case(where: str, record: Any, default_skill: str | None) -> EvalCase:
    if not isinstance(record, dict) or not isinstance(cast('dict[str, Any]', record).get('query'), str):
        raise EvalFileError(f'{where}: each record needs a string "query"')
    data = cast('dict[str, Any]', record)
    query = cast('str', data['query'])
    if 'should_trigger' in data:
        skill = data.get('skill', default_skill)
        if not isinstance(skill, str):
            raise EvalFileError(
                f'{where}: a "should_trigger" record needs the skill it is about: add "skill", or pass --target NAME'
            )
        return EvalCase(query, (skill,)) if data['should_trigger'] else EvalCase(query, not_relevant=(skill,))
    return EvalCase(query, _names(where, data, 'relevant'), _names(where, data, 'not_relevant'))


def _names(where: str, data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in cast('list[Any]', value)):
        raise EvalFileError(f'{where}: "{key}" must be a list of skill names')
    return tuple(cast('list[str]', value))


def _owning_skill(path: Path) -> str | None:
    """The folder name of the skill whose `evals/` folder holds `path`, as agentskills.io lays them out."""
    folder = path.resolve().parent
    if folder.name == 'evals' and (folder.parent / SKILL_FILE).is_file():
        return folder.parent.name
    return None


def evaluate(
    library: SkillLibrary,
    cases: Sequence[EvalCase],
    *,
    advance: Callable[[], None] = lambda: None,
    worst: int = 5,
) -> EvalReport:
    """Rank every query with the library's search, as `search_skills` does, and score the rankings."""
    report = EvalReport()
    known = set(library.skills)
    resolve = _resolver(known)
    unknown: dict[str, None] = {}
    reciprocal = precise = recall = 0.0
    triggered = 0
    misses: list[tuple[float, int, Miss]] = []
    scores: dict[str, SkillScore] = {}

    def score(name: str) -> SkillScore:
        return scores.setdefault(name, SkillScore(name))

    for index, case in enumerate(cases):
        query = ' '.join(case.query.split())[:MAX_QUERY_CHARACTERS]
        ranking = [hit.name for hit in library.search(query, RANKED)] if query else []
        relevant = _resolve_all(case.relevant, resolve, unknown)
        if case.positive:
            report.positives += 1
            rank = next((position for position, name in enumerate(ranking, 1) if name in relevant), None)
            reciprocal += 1 / rank if rank else 0.0
            precise += 1.0 if rank == 1 else 0.0
            recall += len(relevant.intersection(ranking[:3])) / len(case.relevant)
            for name in relevant:
                own = score(name)
                own.queries += 1
                position = ranking.index(name) + 1 if name in ranking else None
                own.first += position == 1
                own.reciprocal_rank += 1 / position if position else 0.0
            if ranking and ranking[0] not in relevant:
                score(ranking[0]).wrongly_first += 1
            if rank != 1:
                expected = tuple(sorted(relevant)) or case.relevant
                miss = Miss(case.query, expected, rank, tuple(ranking[:3]))
                misses.append((1 / rank if rank else 0.0, index, miss))
        else:
            report.negatives += 1
            named = _resolve_all(case.not_relevant, resolve, unknown)
            if (ranking[:1] and ranking[0] in named) or (not case.not_relevant and ranking):
                triggered += 1
                score(ranking[0]).wrongly_first += 1
        advance()
    if report.positives:
        report.precision_at_1 = precise / report.positives
        report.recall_at_3 = recall / report.positives
        report.mrr = reciprocal / report.positives
    if report.negatives:
        report.false_trigger_rate = triggered / report.negatives
    report.worst_misses = [miss for _, _, miss in sorted(misses, key=lambda item: (item[0], item[1]))[:worst]]
    report.unknown = list(unknown)
    report.skills = sorted(
        scores.values(), key=lambda item: (item.precision_at_1 if item.queries else 1.0, -item.wrongly_first, item.name)
    )
    return report


def _resolver(known: set[str]) -> Callable[[str], str | None]:
    """Match a label to a skill: its exact name, or the part after the last `:` or `/` (`repo:skill` ids)."""

    def resolve(label: str) -> str | None:
        if label in known:
            return label
        for separator in (':', '/'):
            tail = label.rsplit(separator, 1)[-1]
            if tail in known:
                return tail
        return None

    return resolve


def _resolve_all(labels: Iterable[str], resolve: Callable[[str], str | None], unknown: dict[str, None]) -> set[str]:
    names: set[str] = set()
    for label in labels:
        name = resolve(label)
        if name is None:
            unknown[label] = None
        else:
            names.add(name)
    return names
