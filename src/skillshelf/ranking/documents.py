"""What every ranker searches and returns, whatever it is: a skill's searchable text (`SearchDocument`), one ranked
result (`SearchHit`) and the score a result needs by default (`DEFAULT_THRESHOLD`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ('DEFAULT_THRESHOLD', 'SearchDocument', 'SearchHit')

DEFAULT_THRESHOLD = 0.1
"""The default minimum score of a search result, for every ranker (`Skills(search_threshold=...)`,
`SkillLibrary.search(..., threshold=...)`): hits reaching less than a tenth of the best score the query could
get are left out.

On the dev files this drops no right answer at rank 1 (see `benchmarks/README.md`); it removes matches
that share only a common word with the query. Lexical scores cannot tell a near-miss request from a real one.
Hybrid search drops no right answer with it either (0.2 would cost MetaTool half a point), and keeps a pure
paraphrase, which scores only its embedding share, when its cosine similarity reaches 0.17 for a short skill (the
share is 0.6 at the default lexical weight, 0.4) and more for a longer one, whose share is smaller.
"""


@dataclass(frozen=True)
class SearchDocument:
    """The searchable text of one skill."""

    name: str
    """The skill name; hyphens, underscores, dots and camelCase split it into words."""
    description: str
    """The skill description."""
    keywords: str = ''
    """Extra words the author declared (frontmatter `keywords`, `tags`, `triggers`, `when_to_use`); the body's
    "When to use" sections are added to them."""
    body: str = ''
    """The instructions (the `SKILL.md` body); only its beginning is indexed (`RankingConfig.body_chars`)."""


@dataclass(frozen=True)
class SearchHit:
    """One ranked result."""

    name: str
    """The skill's name."""
    score: float
    """Relevance in [0, 1]: the share of the best score the query could reach in this library."""
