"""The `Skills` capability in real agent runs driven by a scripted `FunctionModel`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from inline_snapshot import snapshot
from pydantic_ai import Agent
from pydantic_ai.capabilities import IncludeToolReturnSchemas
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.toolsets import FunctionToolset

from skillshelf import Skill, SkillConflictError, SkillMatch, Skills

from repo_paths import SAMPLE_SKILLS
from scripted_model import META, NO_CATALOG, SMALL, SMALL_WITH_FILES, Script, call, tool_returns
from skill_fixtures import currency, forecast_calls, weather


def run(script: Script, capability: Skills[Any], **kwargs: Any) -> list[ModelMessage]:
    agent = Agent(script.model(), capabilities=[capability])
    return agent.run_sync('hello', **kwargs).all_messages()


def test_skill_tools_appear_after_load_and_are_refused_after_unload(make_script: Callable[..., Script]) -> None:
    """After an unload the tools stay listed, so each request keeps the one before it as a prefix (the prompt
    cache holds), but a call no longer runs."""
    script = make_script(
        [call('load_skill', name='weather')],
        [call('get_forecast', city='Paris')],
        [call('unload_skill', name='weather')],
        [call('get_forecast', city='Rome')],
        [TextPart('done')],
    )
    messages = run(script, Skills(skills=[weather, currency]))

    weather_tools = ['get_alerts', 'get_forecast', *SMALL_WITH_FILES]
    assert [request.tools for request in script.requests] == [SMALL_WITH_FILES, *[weather_tools] * 4]
    assert forecast_calls == ['Paris']
    assert tool_returns(messages, 'get_forecast')[1] == snapshot(
        "The tool 'get_forecast' belongs to the skill 'weather', which was unloaded, so it did not run. Call `load_skill` with 'weather' to use it again."
    )


def test_calling_a_hidden_tool_never_runs_its_body(make_script: Callable[..., Script]) -> None:
    script = make_script([call('get_forecast', city='Oslo')], [TextPart('done')])
    messages = run(script, Skills(skills=[weather]))

    assert forecast_calls == []
    [refusal] = tool_returns(messages, 'get_forecast')
    assert refusal == (
        "The tool 'get_forecast' belongs to the skill 'weather', which is not loaded, so it did not run. "
        "Call `load_skill` with 'weather' first; its tools can be called from your next response."
    )


def test_load_skill_returns_instructions_tools_and_resources(make_script: Callable[..., Script]) -> None:
    script = make_script([call('load_skill', name='currency')], [TextPart('done')])
    messages = run(script, Skills(skills=[currency]))

    assert tool_returns(messages, 'load_skill') == snapshot(
        [
            """\
Loaded skill 'currency'.
Tools available from your next response: convert.

Quote the rate you used and its date.

Files (read with `read_skill_resource`): rates.md.\
"""
        ]
    )


def test_loading_a_loaded_skill_is_a_harmless_no_op(make_script: Callable[..., Script]) -> None:
    script = make_script([call('load_skill', name='weather')], [call('load_skill', name='weather')], [TextPart('done')])
    messages = run(script, Skills(skills=[weather]))

    assert tool_returns(messages, 'load_skill')[1] == snapshot(
        "The skill 'weather' is already loaded; its instructions are above and its tools are available."
    )
    assert script.requests[-1].tools == ['get_alerts', 'get_forecast', *SMALL]


def test_loading_one_skill_twice_in_one_response_loads_it_once(make_script: Callable[..., Script]) -> None:
    script = make_script([call('load_skill', name='weather'), call('load_skill', name='weather')], [TextPart('ok')])
    messages = run(script, Skills(skills=[weather]))

    returns = tool_returns(messages, 'load_skill')
    assert sum('already loaded' in str(text) for text in returns) == 1
    assert script.requests[-1].tools == ['get_alerts', 'get_forecast', *SMALL]


def test_unknown_skill_names_get_the_closest_names_and_a_search_hint(make_script: Callable[..., Script]) -> None:
    script = make_script(
        [call('load_skill', name='wether')],
        [call('unload_skill', name='nothing-like-it')],
        [call('read_skill_resource', name='curency', path='rates.md')],
        [TextPart('done')],
    )
    messages = run(script, Skills(skills=[weather, currency]))

    assert tool_returns(messages, 'load_skill') == snapshot(
        ["There is no skill named 'wether'. Did you mean 'weather'? The skills are listed in your instructions."]
    )
    assert tool_returns(messages, 'unload_skill') == snapshot(
        ["There is no skill named 'nothing-like-it'. The skills are listed in your instructions."]
    )
    assert tool_returns(messages, 'read_skill_resource') == snapshot(
        ["There is no skill named 'curency'. Did you mean 'currency'? The skills are listed in your instructions."]
    )
    assert script.requests[-1].tools == SMALL_WITH_FILES


def test_unloading_a_skill_that_is_not_loaded_explains_instead_of_failing(make_script: Callable[..., Script]) -> None:
    script = make_script([call('unload_skill', name='weather')], [TextPart('done')])
    messages = run(script, Skills(skills=[weather]))

    assert tool_returns(messages, 'unload_skill') == snapshot(
        ["The skill 'weather' is not loaded, so there is nothing to unload. Loaded skills: none."]
    )


def test_search_results_are_ranked_and_say_which_skills_are_loaded(make_script: Callable[..., Script]) -> None:
    script = make_script(
        [call('load_skill', name='weather')],
        [call('search_skills', query='weather forecast for a city')],
        [TextPart('done')],
    )
    messages = run(script, Skills(skills=[weather, currency], catalog_budget=NO_CATALOG))

    [results] = tool_returns(messages, 'search_skills')
    assert isinstance(results[0], SkillMatch)
    assert (results[0].name, results[0].loaded) == ('weather', True)
    assert results[0].description == 'Current weather, forecasts and alerts for a city.'
    assert all(not match.loaded for match in results[1:])


def test_continued_conversation_keeps_loaded_skills(make_script: Callable[..., Script]) -> None:
    capability = Skills(skills=[weather])
    first = make_script([call('load_skill', name='weather')], [TextPart('loaded')])
    history = run(first, capability)

    second = make_script([call('get_forecast', city='Rome')], [TextPart('done')])
    run(second, capability, message_history=history)

    assert second.requests[0].tools == ['get_alerts', 'get_forecast', *SMALL]
    assert forecast_calls == ['Rome']


def test_unload_in_a_continued_conversation_refuses_the_tools_it_keeps_listed(
    make_script: Callable[..., Script],
) -> None:
    capability = Skills(skills=[weather])
    history = run(make_script([call('load_skill', name='weather')], [TextPart('a')]), capability)
    history = run(
        make_script([call('unload_skill', name='weather')], [TextPart('b')]), capability, message_history=history
    )

    third = make_script([call('get_forecast', city='Oslo')], [TextPart('c')])
    messages = run(third, capability, message_history=history)
    assert third.requests[0].tools == ['get_alerts', 'get_forecast', *SMALL]
    assert forecast_calls == []
    assert 'which was unloaded, so it did not run' in tool_returns(messages, 'get_forecast')[0]


async def test_concurrent_runs_on_one_agent_keep_their_own_skills() -> None:
    order: list[str] = []

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next(
            part.content
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, UserPromptPart)
        )
        tools = sorted(tool.name for tool in info.function_tools)
        order.append(f'{prompt}:{len(messages)}')
        await asyncio.sleep(0)
        if len(messages) == 1:
            return ModelResponse(parts=[call('load_skill', name=str(prompt))])
        return ModelResponse(parts=[TextPart(','.join(name for name in tools if name not in META))])

    agent = Agent(FunctionModel(respond), capabilities=[Skills(skills=[weather, currency])])
    results = await asyncio.gather(agent.run('weather'), agent.run('currency'))

    assert [result.output for result in results] == ['get_alerts,get_forecast', 'convert']
    assert order[:2] == ['weather:1', 'currency:1'], 'the runs did not interleave'


def test_for_run_returns_a_clone_and_never_mutates_the_agent_level_instance(make_script: Callable[..., Script]) -> None:
    capability = Skills(skills=[weather])
    run(make_script([call('load_skill', name='weather')], [TextPart('done')]), capability)

    assert capability.loaded == []


def test_catalog_is_the_same_on_every_request(make_script: Callable[..., Script]) -> None:
    script = make_script([call('load_skill', name='weather')], [call('unload_skill', name='weather')], [TextPart('x')])
    run(script, Skills(skills=[weather, currency]))

    assert len({request.instructions for request in script.requests}) == 1
    assert script.requests[0].instructions == snapshot("""\
You have 2 skills. Load one with `load_skill` only when the task needs it; run its scripts rather than rewriting them, \
and say which skill you use.

- weather: Current weather, forecasts and alerts for a city.
- currency: Convert amounts between currencies at the current exchange rate.\
""")


def test_the_loading_tools_return_text_in_their_schema() -> None:
    # What the model reads of `load_skill` and `unload_skill` is text; the schema of `ToolReturn` itself (every content
    # type it can carry) misdescribed it, and building it was most of a `Skills` construction.
    seen: dict[str, Any] = {}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.update({tool.name: tool.return_schema for tool in info.function_tools})
        return ModelResponse(parts=[TextPart('done')])

    capabilities = [Skills(skills=[weather, currency]), IncludeToolReturnSchemas()]
    model = FunctionModel(respond, profile=ModelProfile(supports_tool_return_schema=True))
    Agent(model, capabilities=capabilities).run_sync('hi')

    assert {name: seen[name] for name in ('load_skill', 'unload_skill', 'read_skill_resource')} == {
        'load_skill': {'type': 'string'},
        'unload_skill': {'type': 'string'},
        'read_skill_resource': {'type': 'string'},
    }


def test_meta_tool_schemas(make_script: Callable[..., Script]) -> None:
    seen: dict[str, Any] = {}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.update({tool.name: (tool.description, tool.parameters_json_schema) for tool in info.function_tools})
        return ModelResponse(parts=[TextPart('done')])

    capabilities = [Skills(skills=[weather, currency], catalog_budget=NO_CATALOG)]  # a library that uses every one
    Agent(FunctionModel(respond), capabilities=capabilities).run_sync('hi')

    assert seen == snapshot(
        {
            'search_skills': (
                'Find skills for a task, best first (scores 0-1).',
                {
                    'additionalProperties': False,
                    'properties': {
                        'query': {
                            'description': 'The task in a few words.',
                            'type': 'string',
                        },
                        'limit': {
                            'default': 5,
                            'description': 'At most 20.',
                            'type': 'integer',
                        },
                    },
                    'required': ['query'],
                    'type': 'object',
                },
            ),
            'load_skill': (
                'Load a skill: its instructions, files and tools (usable from your next response).',
                {
                    'additionalProperties': False,
                    'properties': {
                        'name': {
                            'description': 'The skill.',
                            'type': 'string',
                            'enum': ['weather', 'currency'],
                        },
                        'arguments': {
                            'default': '',
                            'description': 'Its arguments, if any.',
                            'type': 'string',
                        },
                    },
                    'required': ['name'],
                    'type': 'object',
                },
            ),
            'unload_skill': (
                'Unload a skill: its tools stop working.',
                {
                    'additionalProperties': False,
                    'properties': {'name': {'description': 'The skill.', 'type': 'string'}},
                    'required': ['name'],
                    'type': 'object',
                },
            ),
            'read_skill_resource': (
                'Read a file of a loaded skill (a long one in pages).',
                {
                    'additionalProperties': False,
                    'properties': {
                        'name': {'description': 'The skill.', 'type': 'string'},
                        'path': {
                            'description': 'As `load_skill` lists it.',
                            'type': 'string',
                        },
                        'offset': {'default': 0, 'description': 'First line (for the next page).', 'type': 'integer'},
                        'limit': {'default': 2000, 'description': 'Lines, at most 2000.', 'type': 'integer'},
                    },
                    'required': ['name', 'path'],
                    'type': 'object',
                },
            ),
        }
    )


def test_tools_that_are_not_skill_tools_are_left_untouched(make_script: Callable[..., Script]) -> None:
    other = FunctionToolset[Any](id='other')

    @other.tool_plain
    def lookup(term: str) -> str:
        return term

    script = make_script([TextPart('done')])
    agent = Agent(script.model(), toolsets=[other], capabilities=[Skills(skills=[weather])])

    @agent.tool_plain
    def clock() -> str:
        return 'noon'

    agent.run_sync('hi')
    assert script.requests[0].tools == sorted(['clock', 'lookup', *SMALL])


def test_skill_tools_are_identified_by_metadata_so_prefixing_keeps_working(make_script: Callable[..., Script]) -> None:
    script = make_script(
        [call('kit_load_skill', name='weather')], [call('kit_get_forecast', city='Lima')], [TextPart('ok')]
    )
    agent = Agent(script.model(), capabilities=[Skills(skills=[weather]).prefix_tools('kit')])
    agent.run_sync('hi')

    assert script.requests[0].tools == [f'kit_{name}' for name in SMALL]
    assert 'kit_get_forecast' in script.requests[1].tools
    assert forecast_calls == ['Lima']


def test_read_skill_resource_serves_a_loaded_skills_files_only(make_script: Callable[..., Script]) -> None:
    script = make_script(
        [call('read_skill_resource', name='sql-review', path='references/checklist.md')],
        [call('load_skill', name='sql-review')],
        [call('read_skill_resource', name='sql-review', path='references/checklist.md')],
        [call('read_skill_resource', name='sql-review', path='../commit-messages/SKILL.md')],
        [call('read_skill_resource', name='sql-review', path='missing.md')],
        [TextPart('done')],
    )
    messages = run(script, Skills(SAMPLE_SKILLS))

    before, during, escape, missing = tool_returns(messages, 'read_skill_resource')
    assert before == snapshot(
        "The skill 'sql-review' is not loaded: call `load_skill` with 'sql-review' first, then read its files."
    )
    assert during.startswith('# SQL review checklist')
    assert escape == snapshot(
        "Cannot read '../commit-messages/SKILL.md' from 'sql-review': '../commit-messages/SKILL.md' is not a path inside the skill folder. Its resources are: references/checklist.md."
    )
    assert missing == snapshot(
        "Cannot read 'missing.md' from 'sql-review': no resource 'missing.md'. Its resources are: references/checklist.md."
    )


def test_markdown_skill_loads_its_body_and_lists_its_files(make_script: Callable[..., Script]) -> None:
    script = make_script([call('load_skill', name='csv-analysis')], [TextPart('done')])
    messages = run(script, Skills(SAMPLE_SKILLS))

    [text] = tool_returns(messages, 'load_skill')
    assert text.startswith("Loaded skill 'csv-analysis'.\n\n# Analysing CSV data")
    assert text.endswith('\n\nFiles (read with `read_skill_resource`): scripts/profile.py.')


def test_python_and_folder_skills_share_one_catalog(make_script: Callable[..., Script]) -> None:
    script = make_script([TextPart('done')])
    run(script, Skills(SAMPLE_SKILLS, skills=[weather]))

    instructions = script.requests[0].instructions or ''
    assert '- weather: Current weather' in instructions
    assert '- sql-review: Review SQL queries' in instructions


def test_two_skills_capabilities_with_one_id_merge_into_one_library(make_script: Callable[..., Script]) -> None:
    script = make_script([call('load_skill', name='currency')], [TextPart('done')])
    agent = Agent(script.model(), capabilities=[Skills(skills=[weather]), Skills(skills=[currency])])
    agent.run_sync('hi')

    assert script.requests[1].tools == ['convert', *SMALL_WITH_FILES]
    assert '- weather:' in (script.requests[0].instructions or '')


def test_duplicate_skill_names_are_refused_at_construction() -> None:
    twin = Skill('weather', 'Another weather skill.')
    with pytest.raises(SkillConflictError, match="two Python skills are named 'weather'"):
        Skills(skills=[weather, twin])


def test_two_skills_exposing_one_tool_name_are_refused_at_construction() -> None:
    clone = Skill('weather-two', 'Weather again.')

    @clone.tool_plain
    def get_alerts(city: str) -> list[str]:
        return []

    with pytest.raises(SkillConflictError, match="both have a tool named 'get_alerts'"):
        Skills(skills=[weather, clone])


def test_a_skill_tool_named_like_a_meta_tool_is_refused() -> None:
    sneaky = Skill('sneaky', 'Shadows a meta-tool.')

    @sneaky.tool_plain
    def load_skill(name: str) -> str:
        return name

    with pytest.raises(SkillConflictError, match="tool named 'load_skill', which is a skillshelf meta-tool"):
        Skills(skills=[sneaky])


def test_a_skill_can_use_an_existing_toolset_or_a_list_of_tools(make_script: Callable[..., Script]) -> None:
    existing = FunctionToolset[Any](id='geo.tools')

    @existing.tool_plain
    def distance(a: str, b: str) -> str:
        return f'{a}-{b}: 500 km'

    def elevation(place: str) -> str:
        return f'{place}: 1,000 m'

    geo = Skill('geo', 'Distances between places.', toolset=existing)
    terrain = Skill('terrain', 'Elevation of places.', tools=[elevation])
    script = make_script(
        [call('load_skill', name='geo'), call('load_skill', name='terrain')],
        [call('distance', a='Oslo', b='Bergen'), call('elevation', place='Oslo')],
        [TextPart('done')],
    )
    messages = run(script, Skills(skills=[geo, terrain]))

    assert script.requests[1].tools == sorted(['distance', 'elevation', *SMALL])
    assert tool_returns(messages, 'distance') == ['Oslo-Bergen: 500 km']
    assert tool_returns(messages, 'elevation') == ['Oslo: 1,000 m']
    assert (geo.toolset.id, terrain.toolset.id) == ('geo.tools', 'skillshelf.terrain')


def test_a_tool_added_to_a_python_skill_after_construction_works_once_loaded(
    make_script: Callable[..., Script],
) -> None:
    clock = Skill('clock', 'Tells the time in a city.')
    capability = Skills(skills=[clock])

    @clock.tool_plain
    def ping(city: str) -> str:
        return f'{city}: 12:00'

    script = make_script([call('load_skill', name='clock')], [call('ping', city='Oslo')], [TextPart('done')])
    messages = run(script, capability)

    [loaded] = tool_returns(messages, 'load_skill')
    assert 'Tools available from your next response: ping.' in loaded
    assert tool_returns(messages, 'ping') == ['Oslo: 12:00']
    assert script.requests[1].tools == sorted(['ping', *SMALL])


def test_a_tool_added_after_construction_that_clashes_is_refused_at_the_next_run(
    make_script: Callable[..., Script],
) -> None:
    first, second = Skill('first', 'The first skill.'), Skill('second', 'The second skill.')
    capability = Skills(skills=[first, second])

    @first.tool_plain
    def lookup() -> str:
        return 'first'

    @second.tool_plain(name='lookup')
    def second_lookup() -> str:
        return 'second'

    with pytest.raises(SkillConflictError, match="skills 'first' and 'second' both have a tool named 'lookup'"):
        run(make_script([TextPart('done')]), capability)


def test_a_tool_added_to_a_folder_skill_after_construction_is_never_announced(
    make_script: Callable[..., Script],
) -> None:
    capability = Skills(SAMPLE_SKILLS)
    capability.library.skills['csv-analysis'].tool_plain(name='late_tool')(lambda: 'late')
    script = make_script([call('load_skill', name='csv-analysis')], [TextPart('done')])
    [loaded] = tool_returns(run(script, capability), 'load_skill')

    assert 'late_tool' not in loaded
    assert script.requests[1].tools == ['load_skill', 'read_skill_resource']  # whole catalog, files, no tools
