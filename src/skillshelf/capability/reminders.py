"""Reminders: with each new user prompt, the skills that best match it, as a short note at the end of that request.

Models use a skill more often when the matching ones are pointed out next to the request than when they sit in a
long catalog. The note is a part of the request that carries the prompt, so it stays in the history: every later
request repeats it where it was, and the instructions (the cached prefix) never change. Nothing is added when no
skill scores at least the threshold, or when the matches are already loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from .._text import one_line
from ..library import SkillLibrary
from .meta_tools import MAX_QUERY_CHARACTERS

__all__ = ('REMINDER_TAG', 'with_reminder')

REMINDER_TAG = 'skill-reminder'
"""The element the note is wrapped in, so a request is reminded once, and readers can tell it from the user's text."""
_DESCRIPTION = 100


def with_reminder(
    messages: Sequence[ModelMessage], library: SkillLibrary, loaded: Sequence[str], count: int, threshold: float
) -> ModelRequest | None:
    """The last request of `messages` with a reminder of up to `count` skills scoring at least `threshold` for its
    user prompt, or `None` when it has no new prompt (a tool result, a retry) or no skill matches."""
    request = messages[-1] if messages else None
    if not isinstance(request, ModelRequest):
        return None
    prompts = [part.content for part in request.parts if isinstance(part, UserPromptPart)]
    text = ' '.join(prompt for prompt in prompts if isinstance(prompt, str))
    if not text.strip() or any(f'<{REMINDER_TAG}>' in prompt for prompt in prompts if isinstance(prompt, str)):
        return None
    hits = [
        hit
        for hit in library.search(' '.join(text.split())[:MAX_QUERY_CHARACTERS], count + len(loaded))
        if hit.score >= threshold and hit.name not in loaded and library.skills[hit.name].model_invocable
    ][:count]
    if not hits:
        return None
    lines = [f'- {hit.name}: {one_line(library.skills[hit.name].description, _DESCRIPTION)}' for hit in hits]
    heading = 'Skills that may help with this request (load one with `load_skill`):'
    note = '\n'.join([f'<{REMINDER_TAG}>', heading, *lines, f'</{REMINDER_TAG}>'])
    return replace(request, parts=[*request.parts, UserPromptPart(note)])
