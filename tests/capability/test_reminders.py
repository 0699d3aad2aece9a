"""Reminders: the skills that match a new user prompt, pointed out at the end of that request, never in the
instructions, and kept in the history so every later request repeats them where they were sent."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, TextPart, UserPromptPart

from skillshelf import SkillError, Skills
from skillshelf.ranking.documents import SearchDocument, SearchHit

from repo_paths import SAMPLE_SKILLS
from scripted_model import Script, call


def reminders_in(request_messages: Sequence[ModelMessage]) -> list[str]:
    return [
        str(part.content)
        for message in request_messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and '<skill-reminder>' in str(part.content)
    ]


def test_a_matching_prompt_gets_a_reminder_at_the_end_of_its_request_and_it_stays_there() -> None:
    script = Script([[call('load_skill', name='release-notes')], [TextPart('done')]])
    capability = Skills(SAMPLE_SKILLS, reminders=2)
    result = Agent(script.model(), capabilities=[capability]).run_sync('Write release notes for version 2.1')

    first, second = script.requests
    assert reminders_in(first.messages) == [
        '<skill-reminder>\n'
        'Skills that may help with this request (load one with `load_skill`):\n'
        '- release-notes: Turn a list of merged changes or commits into release notes and changelog entries users can act…\n'
        '</skill-reminder>'
    ]
    assert '<skill-reminder>' not in (first.instructions or '')
    assert first.instructions == second.instructions
    # The first request is a prefix of the second: the reminder is history, not a per-request decoration.
    assert second.messages[: len(first.messages)] == first.messages
    assert reminders_in(result.all_messages()) == reminders_in(first.messages)


def test_nothing_is_added_when_nothing_matches_or_the_match_is_loaded() -> None:
    capability = Skills(SAMPLE_SKILLS, reminders=3)
    quiet = Script([[TextPart('hi')]])
    Agent(quiet.model(), capabilities=[capability]).run_sync('hello there')
    assert reminders_in(quiet.requests[0].messages) == []

    first = Agent(Script([[call('load_skill', name='sql-review')]]).model(), capabilities=[capability])
    history = first.run_sync('hello').all_messages()
    again = Script([[TextPart('ok')]])
    Agent(again.model(), capabilities=[capability]).run_sync('Check this slow SQL query', message_history=history)
    assert reminders_in(again.requests[0].messages) == []


def test_reminders_are_off_by_default_and_tool_results_never_get_one() -> None:
    script = Script([[call('search_skills', query='release notes')], [TextPart('ok')]])
    Agent(script.model(), capabilities=[Skills(SAMPLE_SKILLS)]).run_sync('Write release notes for version 2.1')
    assert all(reminders_in(request.messages) == [] for request in script.requests)

    reminded = Script([[call('search_skills', query='release notes')], [TextPart('ok')]])
    Agent(reminded.model(), capabilities=[Skills(SAMPLE_SKILLS, reminders=1)]).run_sync('Write release notes')
    assert len(reminders_in(reminded.requests[1].messages)) == 1  # the prompt's, not a second for the tool result


def test_the_threshold_decides_what_is_pointed_out() -> None:
    strict = Script([[TextPart('ok')]])
    Agent(strict.model(), capabilities=[Skills(SAMPLE_SKILLS, reminders=3, reminder_threshold=1.0)]).run_sync(
        'Write release notes for version 2.1'
    )
    assert reminders_in(strict.requests[0].messages) == []


@pytest.mark.parametrize(('option', 'value'), [('reminders', -1), ('reminder_threshold', 1.5), ('reminders', True)])
def test_reminder_options_are_checked(option: str, value: object) -> None:
    with pytest.raises(SkillError, match=f'`{option}` option'):
        Skills(SAMPLE_SKILLS, **{option: value})  # pyright: ignore[reportArgumentType]


class LoopCheckingRanker:
    """Ranks every skill alike, noting whether its search ran in a thread with a running event loop."""

    searched_on_loop: ClassVar[list[bool]] = []

    def __init__(self, documents: Sequence[SearchDocument]) -> None:
        self.names = [document.name for document in documents]

    def search(self, query: str, limit: int, threshold: float) -> list[SearchHit]:
        try:
            asyncio.get_running_loop()
            self.searched_on_loop.append(True)
        except RuntimeError:
            self.searched_on_loop.append(False)
        return [SearchHit(name, 0.9) for name in self.names[:limit]]


def test_the_reminder_search_runs_off_the_event_loop() -> None:
    # Its first search builds the index (and hybrid search may load a model): seconds other runs must not wait.
    LoopCheckingRanker.searched_on_loop.clear()
    script = Script([[TextPart('ok')]])
    Agent(script.model(), capabilities=[Skills(SAMPLE_SKILLS, reminders=1, ranker=LoopCheckingRanker)]).run_sync(
        'Write a commit message for this change'  # the first skill it ranks holds these words (see `has_evidence`)
    )
    assert LoopCheckingRanker.searched_on_loop == [False]
    assert len(reminders_in(script.requests[0].messages)) == 1
