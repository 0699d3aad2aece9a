"""Reminders: with each new user prompt, the skills that best match it, as a short note at the end of that request.

Models use a skill more often when the matching ones are pointed out next to the request than when they sit in a
long catalog. The note is a part of the request that carries the prompt, so it stays in the history: every later
request repeats it where it was, and the instructions (the cached prefix) never change. A request gets one note at
most. Nothing is added when no skill scores at least the threshold, or when the matches are already loaded.

A score is a share of the best score the query could reach, so it says which skill fits a request best, not whether
the request asks for anything: "hello" scores 1.0 at a skill whose text happens to hold the word. A skill is
therefore pointed out only with evidence besides its score (`has_evidence`): its own text holds `EVIDENCE_WORDS`
different words of the prompt, one of them where its author says what it is for. Chat filler ("yes", "ok, do it",
"thanks!", "好的", an emoji) has too few words to qualify, in any language.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass, replace
from typing import Any, cast

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from .._text import one_line
from ..errors import SkillError
from ..library import SkillLibrary
from ..ranking.documents import SearchDocument, SearchHit
from ..ranking.lexical import RankingConfig, indexed_text
from ..ranking.tokenize import tokenize, word_terms
from ..skill import Skill
from .meta_tools import MAX_QUERY_CHARACTERS

__all__ = (
    'EVIDENCE_WORDS',
    'REMINDER_TAG',
    'Reminder',
    'ReminderOptions',
    'has_evidence',
    'prompt_to_remind',
    'shared_words',
    'with_reminder',
)

REMINDER_TAG = 'skill-reminder'
"""The element the note is wrapped in, so a request is reminded once, and readers can tell it from the user's text."""
_DESCRIPTION = 100
EVIDENCE_WORDS = 3
"""How many different words of a prompt a skill's own text must hold to be pointed out, one of them in its headline.

One or two words are what chat filler is made of ("hello", "sounds good", "never mind"), and they reach a score of
1.0 at any skill that happens to hold them. Requests to a skill name more: on the benchmark's trigger queries, nearly
every right reminder shares three words or more with its skill (`benchmarks/reminders.py`). A request of two words
("summarise this pdf") gets no reminder; the catalog and `search_skills` still find its skill."""
_RANKING = RankingConfig()


@dataclass(frozen=True)
class ReminderOptions:
    """Whether and how new user prompts get a note pointing out matching skills; checked when created.

    Raises:
        SkillError: an option has the wrong type or is out of range (the message names it).
    """

    reminders: int = 0
    """With each new user prompt, point out up to this many matching skills in a short note at the end of that
    request (never in the instructions, so the prompt cache holds); 0 adds none. A skill matches with a score of at
    least `reminder_threshold` and the evidence `has_evidence` asks for: `EVIDENCE_WORDS` words of the prompt in its
    own text, so chat filler ("yes", "thanks!") points out nothing."""
    reminder_threshold: float = 0.6
    """The score (0 to 1, as `search_skills` reports it) a skill needs to be pointed out by a reminder."""

    def __post_init__(self) -> None:
        count, threshold = cast(object, self.reminders), cast(object, self.reminder_threshold)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise SkillError(f'the `reminders` option must be a whole number, not {count!r}')
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
            raise SkillError(f'the `reminder_threshold` option must be a number from 0 to 1, not {threshold!r}')


def prompt_to_remind(messages: Sequence[ModelMessage]) -> tuple[ModelRequest, str] | None:
    """The last request of `messages` and the text to find skills for (its user prompt), or `None` when it has no
    prompt (a tool result, a retry) or was reminded already."""
    request = messages[-1] if messages else None
    if not isinstance(request, ModelRequest) or any(map(is_reminder, request.parts)):
        return None
    prompts = [part.content for part in request.parts if isinstance(part, UserPromptPart)]
    text = ' '.join(prompt for prompt in prompts if isinstance(prompt, str))
    if not text.strip():
        return None
    return request, ' '.join(text.split())[:MAX_QUERY_CHARACTERS]


def is_reminder(part: object) -> bool:
    """Whether a part of a request is a reminder's note (so that request is never reminded again); a user's text
    that merely quotes the tag is not."""
    if not isinstance(part, UserPromptPart) or not isinstance(part.content, str):
        return False
    return part.content.startswith(f'<{REMINDER_TAG}>\n') and part.content.endswith(f'</{REMINDER_TAG}>')


@dataclass(frozen=True)
class Reminder:
    """A request with the note pointing out skills."""

    request: ModelRequest
    """The request, the note added at its end."""
    skills: list[str]
    """The skills pointed out, best first."""


def with_reminder(
    request: ModelRequest,
    query: str,
    library: SkillLibrary,
    loaded: Sequence[str],
    count: int,
    threshold: float,
    evidence_words: int = EVIDENCE_WORDS,
) -> Reminder | None:
    """`request` (whose prompt is `query`) with a note of up to `count` skills scoring at least `threshold` that
    have the evidence `has_evidence` asks for, or `None` when no skill that is not loaded does. `evidence_words=0`
    asks for none (the score alone, as before the rule; for measurements). Searches the library and reads the
    skills it finds: call it off the event loop (the first search builds the index, and hybrid search may load a
    model)."""
    words = word_terms(query)
    if shared_words(words, frozenset(tokenize(query))) < evidence_words:
        return None  # no skill can hold more of the prompt's words than it has: nothing to search for
    body_chars = _RANKING.body_limit(len(library.skills))
    hits: list[SearchHit] = []
    for hit in library.search(query, 2 * count + len(loaded)):
        skill = library.skills[hit.name]
        if len(hits) == count or hit.score < threshold or hit.name in loaded or not skill.model_invocable:
            continue
        if has_evidence(words, skill, body_chars, evidence_words):  # reads the skill's text: only while needed
            hits.append(hit)
    if not hits:
        return None
    lines = [f'- {hit.name}: {one_line(library.skills[hit.name].description, _DESCRIPTION)}' for hit in hits]
    heading = 'Skills that may help with this request (load one with `load_skill`):'
    note = '\n'.join([f'<{REMINDER_TAG}>', heading, *lines, f'</{REMINDER_TAG}>'])
    return Reminder(replace(request, parts=[*request.parts, UserPromptPart(note)]), [hit.name for hit in hits])


def has_evidence(words: Sequence[tuple[str, ...]], skill: Skill[Any], body_chars: int, needed: int) -> bool:
    """Whether `skill`'s text, as search indexes it (its body read to `body_chars`), holds `needed` different words
    of a prompt given as `words` (`tokenize.word_terms`), at least one of them in its headline: name, description,
    keywords or "When to use" sections, where its author says what it is for. `needed=0` asks for nothing."""
    if needed <= 0:
        return True
    try:
        body = skill.load_instructions(body_chars) if body_chars > 0 else ''
    except (SkillError, OSError):  # searched a moment ago; judged on its headline if it can no longer be read
        body = ''
    headline, body = indexed_text(SearchDocument(skill.name, skill.description, skill.keywords, body), body_chars)
    in_headline = frozenset(tokenize(headline))
    return shared_words(words, in_headline) >= 1 and shared_words(words, in_headline | set(tokenize(body))) >= needed


def shared_words(words: Sequence[tuple[str, ...]], terms: Set[str]) -> int:
    """How many different words of a text given as `words` (`tokenize.word_terms`) hold one of `terms`.

    A word of a spaced script is one term. A run of CJK characters is a list of character pairs that overlap; only
    pairs that do not overlap count, each once: a run whose pairs all match counts as many words as half its
    characters ("代码审查", code review, counts two), so a single word cannot count as several.
    """
    counted: set[str] = set()
    for pairs in words:
        position = 0
        while position < len(pairs):
            term = pairs[position]
            if term in terms and term not in counted:
                counted.add(term)
                position += 2  # the next pair shares this one's second character
            else:
                position += 1
    return len(counted)
