"""The benchmark data: the skills, tools and queries of `../shared/bench`, read into `Dataset`s, and larger
libraries made from the real skills."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Doc:
    """One skill or tool of a benchmark library."""

    id: str
    name: str
    description: str
    body: str = ''
    source: str = ''


@dataclass(frozen=True)
class Query:
    text: str
    relevant: frozenset[int]
    """Positions in the library of the right answers; empty for a query no item should answer."""
    source: str = ''
    lang: str = ''


@dataclass(frozen=True)
class Negative:
    text: str
    not_relevant: frozenset[int]
    source: str = ''


@dataclass(frozen=True)
class OfferedQuery:
    """A BFCL query with the few functions BFCL offered with it: its original, smaller setting."""

    text: str
    offered: frozenset[int]
    """Positions in the library of the offered functions."""
    relevant: frozenset[int]
    """The offered functions that answer it; empty when none does (BFCL's irrelevance queries)."""


@dataclass
class Dataset:
    name: str
    title: str
    docs: list[Doc]
    queries: list[Query]
    negatives: list[Negative] = field(default_factory=list[Negative])
    unanswerable: list[str] = field(default_factory=list[str])
    offered: list[OfferedQuery] = field(default_factory=list[OfferedQuery])
    """Each query again with only the functions offered with it (BFCL); scored against the whole library."""
    match: Callable[[Doc], str] | None = None
    """When set, a hit counts if its key matches a relevant doc's key (BFCL: same-name siblings)."""


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding='utf-8') as file:
        return [json.loads(line) for line in file if line.strip()]


def _skill_docs(rows: Iterable[dict[str, Any]]) -> list[Doc]:
    return [
        Doc(row['id'], row['name'], row['description'], row.get('body') or '', row.get('source_repo', ''))
        for row in rows
    ]


def trigger_sets(data: Path) -> list[Dataset]:
    """The 298-skill trigger set, and the same queries against the pooled 2,651-skill library."""
    skills = _skill_docs(read_jsonl(data / 'skilltrigger_skills.jsonl'))
    pooled = (
        skills
        + _skill_docs(read_jsonl(data / 'skills_corpus.jsonl'))
        + _skill_docs(read_jsonl(data / 'skills_corpus_composio_toolkits.jsonl'))
    )
    position = {doc.id: i for i, doc in enumerate(skills)}
    queries = [
        Query(row['query'], frozenset(position[r] for r in row['relevant']), row['source_repo'], row.get('lang', ''))
        for row in read_jsonl(data / 'skilltrigger_queries_dev.jsonl')
    ]
    negatives = [
        Negative(row['query'], frozenset(position[r] for r in row['not_relevant']), row['source_repo'])
        for row in read_jsonl(data / 'skilltrigger_negatives_dev.jsonl')
    ]
    return [
        Dataset('trigger', f'{len(skills)} real skills, trigger queries', skills, queries, negatives),
        Dataset('trigger_pooled', f'pooled library of {len(pooled)} real skills', pooled, queries, negatives),
    ]


def metatool_set(data: Path, sample: int = 3000, seed: int = 0) -> Dataset:
    rows = read_jsonl(data / 'metatool_tools.jsonl')
    docs = [Doc(r['id'], r['name'], r['description'], r.get('description_for_model') or '') for r in rows]
    position = {doc.id: i for i, doc in enumerate(docs)}
    all_queries = read_jsonl(data / 'metatool_queries_dev.jsonl')
    chosen = random.Random(seed).sample(all_queries, min(sample, len(all_queries)))
    queries = [Query(r['query'], frozenset(position[x] for x in r['relevant'])) for r in chosen]
    return Dataset('metatool', f'MetaTool: {len(docs)} tools, {len(queries)} sampled dev queries', docs, queries)


def _parameters_text(parameters: Any) -> str:
    if not isinstance(parameters, dict):
        return ''
    properties: dict[str, Any] = parameters.get('properties') or {}  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    parts: list[str] = []
    for key, value in properties.items():
        parts.append(str(key))
        if isinstance(value, dict) and value.get('description'):  # pyright: ignore[reportUnknownMemberType]
            parts.append(str(value['description']))  # pyright: ignore[reportUnknownArgumentType]
    return ' '.join(parts)


def bfcl_set(data: Path) -> Dataset:
    rows = read_jsonl(data / 'bfcl_tools.jsonl')
    docs = [Doc(r['id'], r['name'], r.get('description') or '', _parameters_text(r.get('parameters'))) for r in rows]
    position = {doc.id: i for i, doc in enumerate(docs)}
    queries: list[Query] = []
    unanswerable: list[str] = []
    offered: list[OfferedQuery] = []
    for row in read_jsonl(data / 'bfcl_queries.jsonl'):
        relevant = frozenset(position[x] for x in row['relevant'])
        if relevant:
            queries.append(Query(row['query'], relevant, row['category']))
        else:
            unanswerable.append(row['query'])
        if row['candidates']:
            offered.append(OfferedQuery(row['query'], frozenset(position[x] for x in row['candidates']), relevant))
    return Dataset(
        'bfcl',
        f'BFCL: {len(docs)} functions, {len(queries)} answerable queries',
        docs,
        queries,
        unanswerable=unanswerable,
        offered=offered,
        match=lambda doc: doc.name,
    )


def scaled_docs(data: Path, size: int, seed: int = 0) -> list[Doc]:
    """The first `size` skills of the pooled library; past its 2,651 real skills, mutated copies (new names, each
    description given words of another real skill, the same body)."""
    real = trigger_sets(data)[1].docs
    docs = list(real[:size])
    rng = random.Random(seed)
    n = 0
    while len(docs) < size:
        base = real[n % len(real)]
        donor = real[rng.randrange(len(real))]
        extra = rng.sample(donor.description.split(), min(6, len(donor.description.split())))
        description = f'{base.description} {" ".join(extra)}'
        docs.append(Doc(f'{base.id}-v{n}', f'{base.name}-v{n}', description, base.body, base.source))
        n += 1
    return docs
