"""Runs never mix: 200 concurrent runs on one `Agent`, each loading its own set of skills, see only their own.

Also: skill folders edited or deleted between runs, and a skill deleted while a conversation has it loaded.
"""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import Skill, Skills, SkillWarning

from reliability.ledger import case, figure
from scripted_model import SMALL
from skill_files import write_skill

AREA = 'Runs'
RUNS = 200
SKILL_COUNT = 8


def make_skills() -> list[Skill[Any]]:
    """Eight Python skills, each with one tool and instructions carrying a unique marker."""
    skills: list[Skill[Any]] = []
    for index in range(SKILL_COUNT):
        skill = Skill(f'skill-{index}', f'Skill number {index}.', f'INSTRUCTIONS-MARKER-{index}')

        def tool(run: str, index: int = index) -> str:
            return f'TOOL-MARKER-{index} for {run}'

        skill.tool_plain(name=f'tool_{index}')(tool)
        skills.append(skill)
    return skills


def subset(run: int) -> list[int]:
    """The skills run `run` loads: the bits of `run + 1`, so all 200 runs load different sets."""
    return [index for index in range(SKILL_COUNT) if (run + 1) >> index & 1]


@dataclass
class Observed:
    tools: dict[int, list[list[str]]] = field(default_factory=dict[int, list[list[str]]])
    events: list[int] = field(default_factory=list[int])


def prompt_of(messages: list[ModelMessage]) -> int:
    return next(
        int(str(part.content).removeprefix('run-'))
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    )


def model(observed: Observed) -> FunctionModel:
    """Per run: load its skills (one response), call every tool it sees and unload the first, then answer."""

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        run = prompt_of(messages)
        tools = sorted(tool.name for tool in info.function_tools)
        observed.tools.setdefault(run, []).append(tools)
        observed.events.append(run)
        await asyncio.sleep(0)  # hand control to the other runs between every request
        step = len(observed.tools[run])
        mine = subset(run)
        if step == 1:
            return ModelResponse(parts=[ToolCallPart('load_skill', {'name': f'skill-{index}'}) for index in mine])
        if step == 2:
            calls = [ToolCallPart(name, {'run': f'run-{run}'}) for name in tools if name.startswith('tool_')]
            return ModelResponse(parts=[*calls, ToolCallPart('unload_skill', {'name': f'skill-{mine[0]}'})])
        return ModelResponse(parts=[TextPart(','.join(tools))])

    return FunctionModel(respond)


def expected_tools(indexes: list[int]) -> list[str]:
    return sorted([*(f'tool_{index}' for index in indexes), *SMALL])


async def test_200_concurrent_runs_on_one_agent_never_see_each_others_skills() -> None:
    observed = Observed()
    capability = Skills(skills=make_skills())
    agent = Agent(model(observed), capabilities=[capability])

    results = await asyncio.gather(*(agent.run(f'run-{run}') for run in range(RUNS)))

    assert capability.loaded == [], 'the agent-level capability must never hold run state'
    first_requests = observed.events[:RUNS]
    assert sorted(first_requests) == list(range(RUNS)), 'every run made its first request before any made a second'
    interleaved = sum(1 for before, after in zip(observed.events, observed.events[1:], strict=False) if before != after)
    assert interleaved > RUNS, 'the runs did not interleave'
    leaks = 0
    for run, result in enumerate(results):
        mine = subset(run)
        # The unloaded skill's tools stay listed (the prompt cache holds); only its calls would be refused.
        assert observed.tools[run] == [SMALL, expected_tools(mine), expected_tools(mine)], run
        assert result.output == ','.join(expected_tools(mine))
        text = repr(result.all_messages())
        for index in range(SKILL_COUNT):
            seen = f'INSTRUCTIONS-MARKER-{index}' in text or f'TOOL-MARKER-{index} ' in text
            assert seen == (index in mine), (run, index)
            leaks += seen != (index in mine)
        tool_returns = [
            str(part.content)
            for message in result.all_messages()
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart) and part.tool_name.startswith('tool_')
        ]
        assert sorted(tool_returns) == sorted(f'TOOL-MARKER-{index} for run-{run}' for index in mine)
    set_sizes = Counter(len(subset(run)) for run in range(RUNS))
    figure(
        'Concurrent runs held on one Agent',
        RUNS,
        f'(asyncio.gather, interleaved at every request; each loads its own set of {SKILL_COUNT} skills, '
        f'{min(set_sizes)} to {max(set_sizes)} at once, all different; cross-run leaks observed: {leaks})',
    )
    case(
        AREA,
        f'{RUNS} concurrent runs on one Agent, each loading a different set of skills',
        f'every run saw exactly its own tools at every step and only its own instructions and tool results; '
        f'{interleaved} switches between runs; the agent-level capability stayed empty',
    )


# --- skill folders changing between runs ----------------------------------------------------------------------------


@dataclass
class Conversation:
    """One agent, replayed turn by turn with a scripted model, keeping the message history."""

    capability: Skills[Any]
    history: list[ModelMessage] = field(default_factory=list[ModelMessage])

    def turn(self, *calls: ToolCallPart) -> list[str]:
        """One run: the model makes `calls` (in one response), then says 'done'. Returns the calls' replies."""
        steps = [list(calls)] if calls else []

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            index = sum(isinstance(message, ModelResponse) for message in messages[len(self.history) :])
            return ModelResponse(parts=steps[index] if index < len(steps) else [TextPart('done')])

        result = Agent(FunctionModel(respond), capabilities=[self.capability]).run_sync(
            'next', message_history=self.history or None
        )
        assert result.output == 'done'
        new = result.new_messages()
        self.history = result.all_messages()
        return [
            part.model_response_str()
            for message in new
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]


@pytest.fixture
def library(tmp_path: Path) -> Path:
    library = tmp_path / 'lib'
    write_skill(library, 'alpha', 'Alpha body v1.', description='The alpha skill.', files={'notes.md': 'alpha notes'})
    write_skill(library, 'beta', 'Beta body.')
    return library


def test_an_edited_skill_body_is_picked_up_by_the_next_load(library: Path) -> None:
    conversation = Conversation(Skills(library))
    [first] = conversation.turn(ToolCallPart('load_skill', {'name': 'alpha'}))
    (library / 'alpha' / 'SKILL.md').write_text('---\nname: alpha\ndescription: Alpha.\n---\nAlpha body v2.\n', 'utf-8')

    fresh = Conversation(conversation.capability)
    [second] = fresh.turn(ToolCallPart('load_skill', {'name': 'alpha'}))

    assert first.endswith('Alpha body v1.\n\nFiles (read with `read_skill_resource`): notes.md.')
    assert second.endswith('Alpha body v2.\n\nFiles (read with `read_skill_resource`): notes.md.')
    case(AREA, 'a skill body edited between runs', 'picked up: the next load_skill returns the new body')


def test_a_skill_deleted_between_runs_leaves_the_catalog_and_loads_explain(library: Path) -> None:
    capability = Skills(library)
    assert '- beta: ' in capability.get_instructions()
    shutil.rmtree(library / 'beta')

    [reply] = Conversation(capability).turn(ToolCallPart('load_skill', {'name': 'beta'}))

    assert reply == (
        "The skill 'beta' is no longer available: its folder was deleted or moved. "
        'Carry on without it, or pick one listed in your instructions.'
    )
    assert '- beta: ' not in capability.get_instructions()
    case(AREA, 'a skill folder deleted between runs', f'dropped from the catalog; load_skill says: {reply}')


def test_a_skill_deleted_while_loaded_gets_a_clear_message_not_a_crash(library: Path) -> None:
    (library / 'beta' / 'notes.md').write_text('beta notes', encoding='utf-8')  # files remain: reads stay offered
    conversation = Conversation(Skills(library))
    conversation.turn(ToolCallPart('load_skill', {'name': 'alpha'}))
    shutil.rmtree(library / 'alpha')

    [read] = conversation.turn(ToolCallPart('read_skill_resource', {'name': 'alpha', 'path': 'notes.md'}))
    [reload] = conversation.turn(ToolCallPart('load_skill', {'name': 'alpha'}))

    gone = (
        "The skill 'alpha' is no longer available: its folder was deleted or moved. "
        'Carry on without it, or pick one listed in your instructions.'
    )
    assert read == reload == gone
    case(
        AREA,
        'a skill deleted while a conversation has it loaded',
        f'the conversation goes on; read and load both say: {gone}',
    )


def test_a_skill_deleted_while_loaded_within_one_run_gets_a_clear_message(library: Path) -> None:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        responses = sum(isinstance(message, ModelResponse) for message in messages)
        if responses == 0:
            return ModelResponse(parts=[ToolCallPart('load_skill', {'name': 'alpha'})])
        if responses == 1:
            shutil.rmtree(library / 'alpha')  # mid-run: the run already read the library
            return ModelResponse(parts=[ToolCallPart('read_skill_resource', {'name': 'alpha', 'path': 'notes.md'})])
        return ModelResponse(parts=[TextPart('done')])

    result = Agent(FunctionModel(respond), capabilities=[Skills(library)]).run_sync('go')

    [read] = [
        part.model_response_str()
        for message in result.all_messages()
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == 'read_skill_resource'
    ]
    assert result.output == 'done'
    assert read == (
        "Cannot read 'notes.md' from 'alpha': the skill folder changed after the library was read (it was deleted or "
        'moved); its files are not served until the library is read again. It has no resources.'
    )
    case(AREA, 'a skill folder deleted in the middle of a run that has it loaded', f'read_skill_resource says: {read}')


def test_a_skill_folder_broken_by_an_edit_between_runs_is_reported(library: Path) -> None:
    capability = Skills(library)
    (library / 'beta' / 'SKILL.md').write_text('---\nname: beta\ndescription: [broken\n', 'utf-8')

    with pytest.warns(SkillWarning, match='beta/SKILL.md: the frontmatter is not closed by a `---` line'):
        [reply] = Conversation(capability).turn(ToolCallPart('load_skill', {'name': 'beta'}))

    assert reply == (
        "The skill 'beta' is no longer available: its SKILL.md is now skipped "
        '(the frontmatter is not closed by a `---` line). Carry on without it, or pick one listed in your instructions.'
    )
    case(AREA, 'a SKILL.md broken by an edit between runs', f'a SkillWarning names the file; load_skill says: {reply}')


def test_a_skill_added_between_runs_is_in_the_next_runs_catalog_and_loads(library: Path) -> None:
    capability = Skills(library)
    conversation = Conversation(capability)
    conversation.turn()
    write_skill(library, 'gamma', 'Gamma body.', description='The gamma skill.')

    [reply] = conversation.turn(ToolCallPart('load_skill', {'name': 'gamma'}))

    assert reply.endswith('Gamma body.')
    assert '- gamma: The gamma skill.' in capability.get_instructions()
    case(AREA, 'a skill folder added between runs', "picked up: in the next run's catalog, and load_skill loads it")


def test_with_auto_reload_off_the_library_stays_as_it_was_built(library: Path) -> None:
    capability = Skills(library, auto_reload=False)
    conversation = Conversation(capability)
    conversation.turn()
    write_skill(library, 'gamma', 'Gamma body.')

    [reply] = conversation.turn(ToolCallPart('load_skill', {'name': 'gamma'}))

    assert reply.startswith("There is no skill named 'gamma'.")
    assert 'gamma' not in capability.get_instructions()
    assert 'gamma' not in capability.library.skills
    case(AREA, 'a skill folder added between runs, with auto_reload=False', 'not picked up: the library stays as built')


def test_a_description_edited_between_runs_updates_the_catalog_but_never_within_a_run(library: Path) -> None:
    capability = Skills(library)
    seen: list[str | None] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.instructions)
        if len(seen) == 1:  # edited during the run: this run keeps its catalog
            (library / 'alpha' / 'SKILL.md').write_text('---\nname: alpha\ndescription: Renamed.\n---\nx\n', 'utf-8')
            return ModelResponse(parts=[ToolCallPart('search_skills', {'query': 'alpha'})])
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(FunctionModel(respond), capabilities=[capability])
    agent.run_sync('first')
    agent.run_sync('second')

    assert seen[0] == seen[1], 'the catalog changed within a run'
    assert '- alpha: The alpha skill.' in (seen[0] or '')
    assert '- alpha: Renamed.' in (seen[2] or '')
    case(
        AREA,
        'a description edited during a run',
        'the running conversation keeps its catalog (cache-stable); the next run shows the new description',
    )


def test_an_unchanged_library_is_not_read_again(library: Path) -> None:
    capability = Skills(library)
    before = dict(capability.library.skills)

    Conversation(capability).turn()
    Conversation(capability).turn()

    assert all(capability.library.skills[name] is skill for name, skill in before.items())
    case(AREA, 'runs over an unchanged library', 'nothing is read again: one stat per skill folder decides')


def test_a_new_folder_that_clashes_with_a_python_skill_keeps_the_previous_library(library: Path) -> None:
    python_skill = Skill('delta', 'Python delta.', 'Python body.')
    capability = Skills(library, skills=[python_skill])
    write_skill(library, 'delta', 'Folder body.')

    with pytest.warns(SkillWarning, match="the Python skill 'delta' and the folder .* share a name"):
        [reply] = Conversation(capability).turn(ToolCallPart('load_skill', {'name': 'delta'}))

    assert reply.endswith('Python body.')
    case(
        AREA,
        'a folder added between runs that clashes with a Python skill',
        'a SkillWarning explains the clash; the previous library stays in use',
    )


def test_runs_in_many_threads_on_one_agent_keep_their_own_skills() -> None:
    threads_count = 24
    observed = Observed()
    lock = threading.Lock()

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        run = prompt_of(messages)
        tools = sorted(tool.name for tool in info.function_tools)
        with lock:
            observed.tools.setdefault(run, []).append(tools)
            step = len(observed.tools[run])
        if step == 1:
            return ModelResponse(
                parts=[ToolCallPart('load_skill', {'name': f'skill-{index}'}) for index in subset(run)]
            )
        return ModelResponse(parts=[TextPart(','.join(tools))])

    agent = Agent(FunctionModel(respond), capabilities=[Skills(skills=make_skills())])
    barrier = threading.Barrier(threads_count, timeout=60)
    outputs: dict[int, str] = {}

    def worker(run: int) -> None:
        barrier.wait()  # start together so the runs overlap
        outputs[run] = agent.run_sync(f'run-{run}').output

    threads = [threading.Thread(target=worker, args=(run,)) for run in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    for run in range(threads_count):
        assert observed.tools[run] == [SMALL, expected_tools(subset(run))], run
        assert outputs[run] == ','.join(expected_tools(subset(run)))
    case(
        AREA,
        f'{threads_count} runs in parallel threads (run_sync) on one Agent',
        'every run saw exactly its own tools; no shared state between threads',
    )


async def test_a_library_changing_under_concurrent_runs_never_changes_a_runs_catalog(tmp_path: Path) -> None:
    library = tmp_path / 'lib'
    write_skill(library, 'alpha', 'Alpha.')
    capability = Skills(library)
    catalogs: dict[int, list[str | None]] = {}
    runs = 40

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        run = prompt_of(messages)
        catalogs.setdefault(run, []).append(info.instructions)
        await asyncio.sleep(0)
        if len(catalogs[run]) == 1:
            if run % 10 == 0:  # some runs change the library while the others are mid-run
                write_skill(library, f'added-{run}', f'Added by run {run}.')
            return ModelResponse(parts=[ToolCallPart('search_skills', {'query': 'added'})])
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(FunctionModel(respond), capabilities=[capability])
    first = await asyncio.gather(*(agent.run(f'run-{run}') for run in range(runs)))
    later = await agent.run(f'run-{runs}')

    assert all(result.output == 'done' for result in [*first, later])
    for run, seen in catalogs.items():
        assert len(set(seen)) == 1, f'run {run} saw its catalog change'
    assert all(f'- added-{run}: ' in (catalogs[runs][0] or '') for run in range(0, runs, 10))
    case(
        AREA,
        f'skill folders added while {runs} concurrent runs are in flight',
        'no run saw its catalog change mid-run; the next run lists every added skill',
    )
