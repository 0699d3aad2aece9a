"""OpenTelemetry spans of the meta-tools and index builds, read from an in-memory exporter after real agent runs:
children of pydantic-ai's tool spans when the run is instrumented, nothing at all when it is not."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability, Instrumentation, LocalWorkspace
from pydantic_ai.messages import ModelResponsePart, TextPart
from pydantic_ai.models.instrumented import InstrumentationSettings

from skillshelf import Skills

from repo_paths import SAMPLE_SKILLS
from scripted_model import NO_CATALOG, Script, call, tool_returns
from skill_fixtures import weather


@pytest.fixture(scope='module')
def exporter() -> Iterator[InMemorySpanExporter]:
    """Every span of the global tracer provider (pydantic-ai's default, and the one index builds use)."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # set once per process; another module may have set it first
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.shutdown()  # a provider's processors stay; a shut exporter keeps nothing for later modules


@pytest.fixture
def spans(exporter: InMemorySpanExporter) -> Iterator[InMemorySpanExporter]:
    exporter.clear()
    yield exporter
    exporter.clear()


def run(
    steps: Sequence[Sequence[ModelResponsePart]],
    capability: Skills[Any],
    instrument: InstrumentationSettings | None,
    workspace: AbstractCapability[Any] | None = None,
) -> Any:
    """The messages of a run, instrumented with `instrument` (pydantic-ai's `Instrumentation` capability) unless None."""
    capabilities: list[AbstractCapability[Any]] = [*([workspace] if workspace is not None else []), capability]
    if instrument is not None:
        capabilities.append(Instrumentation(settings=instrument))
    return Agent(Script(steps).model(), capabilities=capabilities).run_sync('go').all_messages()


def named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [span for span in exporter.get_finished_spans() if span.name == name]


def tool_span(exporter: InMemorySpanExporter, tool: str) -> ReadableSpan:
    """pydantic-ai's span of the one call of `tool`."""
    [span] = [s for s in exporter.get_finished_spans() if (s.attributes or {}).get('gen_ai.tool.name') == tool]
    return span


def attributes_of(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def test_search_load_read_and_unload_are_spans_inside_the_tool_spans(spans: InMemorySpanExporter) -> None:
    run(
        [
            [call('search_skills', query='write release notes for a new version')],
            [call('load_skill', name='release-notes')],
            [call('read_skill_resource', name='sql-review', path='x.md')],  # refused: not loaded
            [call('unload_skill', name='release-notes')],
        ],
        Skills(SAMPLE_SKILLS, skills=[weather], catalog_budget=NO_CATALOG),  # a library that uses every meta-tool
        instrument=InstrumentationSettings(),
    )

    [search] = named(spans, 'skillshelf.search')
    assert parent_of(search) == span_id(tool_span(spans, 'search_skills'))
    attributes = attributes_of(search)
    assert attributes['skillshelf.query'] == 'write release notes for a new version'
    results, scores = attributes['skillshelf.results'], attributes['skillshelf.scores']
    assert results[0] == 'release-notes'
    assert len(scores) == len(results)
    assert list(scores) == sorted(scores, reverse=True)
    assert all(0 < score <= 1 for score in scores)
    assert attributes['skillshelf.loaded_skills'] == ()

    [load] = named(spans, 'skillshelf.load')
    assert parent_of(load) == span_id(tool_span(spans, 'load_skill'))
    assert load.attributes == {
        'logfire.msg': 'skillshelf.load release-notes',
        'skillshelf.skill': 'release-notes',
        'skillshelf.loaded_skills': ('release-notes',),
    }

    [read] = named(spans, 'skillshelf.read_resource')
    assert parent_of(read) == span_id(tool_span(spans, 'read_skill_resource'))
    assert attributes_of(read)['skillshelf.skill'] == 'sql-review'

    [unload] = named(spans, 'skillshelf.unload')
    assert parent_of(unload) == span_id(tool_span(spans, 'unload_skill'))
    assert attributes_of(unload)['skillshelf.loaded_skills'] == ()

    # The first search built the index, inside the search's span.
    [build] = named(spans, 'skillshelf.index_build')
    assert parent_of(build) == span_id(search)
    assert build.attributes == {'skillshelf.skills': 6, 'skillshelf.search_mode': 'lexical'}


def test_without_content_the_query_is_left_out_but_the_results_are_kept(spans: InMemorySpanExporter) -> None:
    run(
        [[call('search_skills', query='review a SQL query')]],
        Skills(SAMPLE_SKILLS, catalog_budget=NO_CATALOG),
        instrument=InstrumentationSettings(include_content=False),
    )
    [search] = named(spans, 'skillshelf.search')
    attributes = attributes_of(search)
    assert 'skillshelf.query' not in attributes
    assert not any('review a SQL query' in str(value) for value in attributes.values())
    assert attributes['skillshelf.results'][0] == 'sql-review'


def test_a_search_that_finds_nothing_has_empty_results(spans: InMemorySpanExporter) -> None:
    capability = Skills(SAMPLE_SKILLS, catalog_budget=NO_CATALOG)
    run([[call('search_skills', query='zzzq xylophone')]], capability, instrument=InstrumentationSettings())
    [search] = named(spans, 'skillshelf.search')
    assert attributes_of(search)['skillshelf.results'] == ()
    assert attributes_of(search)['skillshelf.scores'] == ()


def test_an_uninstrumented_run_records_nothing(spans: InMemorySpanExporter) -> None:
    messages = run(
        [[call('search_skills', query='write release notes')], [call('load_skill', name='release-notes')]],
        Skills(SAMPLE_SKILLS, catalog_budget=NO_CATALOG),  # a fresh library: this run builds its index too
        instrument=None,
    )
    assert tool_returns(messages, 'search_skills')[0][0].name == 'release-notes'  # the search did run
    assert spans.get_finished_spans() == ()


def test_instrument_all_gives_the_same_spans(spans: InMemorySpanExporter) -> None:
    Agent.instrument_all()
    try:
        Agent(
            Script([[call('load_skill', name='csv-analysis')]]).model(), capabilities=[Skills(SAMPLE_SKILLS)]
        ).run_sync('go')
    finally:
        Agent.instrument_all(False)
    [load] = named(spans, 'skillshelf.load')
    assert parent_of(load) == span_id(tool_span(spans, 'load_skill'))


def test_a_script_run_records_the_script_and_its_exit_code(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    folder = tmp_path / 'lib' / 'tool-kit'
    (folder / 'scripts').mkdir(parents=True)
    (folder / 'SKILL.md').write_text('---\nname: tool-kit\ndescription: Scripts that do things.\n---\nRun them.\n')
    (folder / 'scripts' / 'fail.py').write_text('import sys\nprint("bad input")\nsys.exit(3)\n')
    run(
        [
            [call('load_skill', name='tool-kit')],
            [call('run_skill_script', name='tool-kit', script='scripts/fail.py')],
        ],
        Skills(tmp_path / 'lib', scripts=True, script_approval=False),  # on the host: trusted, so not asked
        instrument=InstrumentationSettings(),
        workspace=LocalWorkspace(tmp_path),
    )
    [script_run] = named(spans, 'skillshelf.run_script')
    assert parent_of(script_run) == span_id(tool_span(spans, 'run_skill_script'))
    attributes = attributes_of(script_run)
    assert attributes['skillshelf.skill'] == 'tool-kit'
    assert attributes['skillshelf.script'] == 'scripts/fail.py'
    assert attributes['skillshelf.exit_code'] == 3
    assert attributes['skillshelf.timed_out'] is False
    assert attributes['skillshelf.output_bytes'] == len('bad input\n')


def test_an_index_build_is_a_span_only_inside_a_trace(spans: InMemorySpanExporter) -> None:
    Skills(SAMPLE_SKILLS).library.prepare_search()
    assert spans.get_finished_spans() == ()

    with trace.get_tracer('app').start_as_current_span('warm up') as warm_up:
        Skills(SAMPLE_SKILLS, search='lexical').library.prepare_search()
    [build] = named(spans, 'skillshelf.index_build')
    assert parent_of(build) == warm_up.get_span_context().span_id


def test_a_users_slash_command_is_a_load_span_of_the_run(spans: InMemorySpanExporter) -> None:
    agent = Agent(
        Script([]).model(), capabilities=[Skills(SAMPLE_SKILLS), Instrumentation(settings=InstrumentationSettings())]
    )
    agent.run_sync('/release-notes v2.1')
    [load] = named(spans, 'skillshelf.load')
    assert attributes_of(load)['skillshelf.skill'] == 'release-notes'
    assert attributes_of(load)['skillshelf.invoked_by'] == 'user'
    assert attributes_of(load)['skillshelf.loaded_skills'] == ('release-notes',)


def test_a_reminder_is_a_span_with_the_skills_it_pointed_out(spans: InMemorySpanExporter) -> None:
    for include_content in (True, False):
        spans.clear()
        agent = Agent(
            Script([[TextPart('ok')]]).model(),
            capabilities=[
                Skills(SAMPLE_SKILLS, reminders=2),
                Instrumentation(settings=InstrumentationSettings(include_content=include_content)),
            ],
        )
        agent.run_sync('Write release notes for version 2.1')
        [reminder] = named(spans, 'skillshelf.reminder')
        assert attributes_of(reminder)['skillshelf.reminded'] == ('release-notes',)
        query = attributes_of(reminder).get('skillshelf.query')
        assert query == ('Write release notes for version 2.1' if include_content else None)
