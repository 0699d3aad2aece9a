"""Reminders: with each new user prompt, the skills that best match it, as a short note at the end of that request.

Models use a skill more often when the matching ones are pointed out next to the request than when they sit in a
long catalog. The note is a part of the request that carries the prompt, so it stays in the history: every later
request repeats it where it was, and the instructions (the cached prefix) never change. Nothing is added when no
skill scores at least the threshold, or when the matches are already loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import cast

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from .._text import one_line
from ..errors import SkillError
from ..library import SkillLibrary
from .meta_tools import MAX_QUERY_CHARACTERS

__all__ = ('REMINDER_TAG', 'Reminder', 'ReminderOptions', 'prompt_to_remind', 'with_reminder')

REMINDER_TAG = 'skill-reminder'
"""The element the note is wrapped in, so a request is reminded once, and readers can tell it from the user's text."""
_DESCRIPTION = 100


@dataclass(frozen=True)
class ReminderOptions:
    """Whether and how new user prompts get a note pointing out matching skills; checked when created.

    Raises:
        SkillError: an option has the wrong type or is out of range (the message names it).
    """

    reminders: int = 0
    """With each new user prompt, point out up to this many matching skills in a short note at the end of that
    request (never in the instructions, so the prompt cache holds); 0 adds none."""
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
    if not isinstance(request, ModelRequest):
        return None
    prompts = [part.content for part in request.parts if isinstance(part, UserPromptPart)]
    text = ' '.join(prompt for prompt in prompts if isinstance(prompt, str))
    if not text.strip() or any(f'<{REMINDER_TAG}>' in prompt for prompt in prompts if isinstance(prompt, str)):
        return None
    return request, ' '.join(text.split())[:MAX_QUERY_CHARACTERS]


@dataclass(frozen=True)
class Reminder:
    """A request with the note pointing out skills."""

    request: ModelRequest
    """The request, the note added at its end."""
    skills: list[str]
    """The skills pointed out, best first."""


def with_reminder(
    request: ModelRequest, query: str, library: SkillLibrary, loaded: Sequence[str], count: int, threshold: float
) -> Reminder | None:
    """`request` (whose prompt is `query`) with a note of up to `count` skills scoring at least `threshold`, or
    `None` when no skill that is not loaded does. Searches the library: call it off the event loop (the first
    search builds the index, and hybrid search may load a model)."""
    hits = [
        hit
        for hit in library.search(query, count + len(loaded))
        if hit.score >= threshold and hit.name not in loaded and library.skills[hit.name].model_invocable
    ][:count]
    if not hits:
        return None
    lines = [f'- {hit.name}: {one_line(library.skills[hit.name].description, _DESCRIPTION)}' for hit in hits]
    heading = 'Skills that may help with this request (load one with `load_skill`):'
    note = '\n'.join([f'<{REMINDER_TAG}>', heading, *lines, f'</{REMINDER_TAG}>'])
    return Reminder(replace(request, parts=[*request.parts, UserPromptPart(note)]), [hit.name for hit in hits])
