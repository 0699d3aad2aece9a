"""Ranking skills for `search_skills`: BM25 over each skill's name, description and keywords."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import bm25s
import numpy as np

__all__ = ('SearchDocument', 'SearchHit', 'SkillIndex')

_WORD = re.compile(r'\w+', re.UNICODE)
_STOPWORDS = frozenset(
    'a an and are as at be by can do for from how i in is it me my of on or please the this to use want we what'
    ' when with you your'.split()
)
_NAME_WEIGHT = 3
"""Name tokens are repeated so that a query naming a skill outranks one that only mentions it."""


@dataclass(frozen=True)
class SearchDocument:
    """The searchable text of one skill."""

    name: str
    """The skill name; hyphens split it into words."""
    description: str
    """The skill description."""
    keywords: str = ''
    """Extra words the author declared (frontmatter `keywords`, `tags`, `triggers`, `when_to_use`)."""


@dataclass(frozen=True)
class SearchHit:
    """One ranked result."""

    name: str
    """The skill's name."""
    score: float
    """Relevance in [0, 1]: the BM25 score relative to the best possible match for this query."""


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without stop words."""
    return [token for token in _WORD.findall(text.lower().replace('_', ' ')) if token not in _STOPWORDS]


class SkillIndex:
    """An in-memory BM25 index over skills."""

    def __init__(self, documents: Sequence[SearchDocument]) -> None:
        self._names = [document.name for document in documents]
        self._retriever = bm25s.BM25()
        corpus = [_document_tokens(document) for document in documents]
        if corpus:
            self._retriever.index(corpus, show_progress=False)

    def search(self, query: str, limit: int) -> list[SearchHit]:
        """The best `limit` skills for `query`, best first; skills that share no word with it are left out."""
        tokens = tokenize(query)
        if not tokens or not self._names or limit < 1:
            return []
        scores = self._retriever.get_scores(tokens)
        best = float(scores.max())
        if best <= 0:
            return []
        order = np.argsort(-scores, kind='stable')[:limit]
        return [SearchHit(self._names[i], round(float(scores[i]) / best, 3)) for i in order if scores[i] > 0]


def _document_tokens(document: SearchDocument) -> list[str]:
    name_tokens = tokenize(document.name.replace('-', ' '))
    return name_tokens * _NAME_WEIGHT + tokenize(document.description) + tokenize(document.keywords)
