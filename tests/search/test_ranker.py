"""The search threshold as an option, and rankers of the user's own: real agent runs with a scripted model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic_ai import Agent
from pydantic_ai.agent.spec import AgentSpec

from skillshelf import (
    DEFAULT_THRESHOLD,
    LibraryOptions,
    SearchDocument,
    SearchHit,
    SearchOptions,
    Skill,
    SkillError,
    SkillLibrary,
    Skills,
    SkillWarning,
)
from skillshelf.ranking.lexical import RankingConfig, SkillIndex
from skillshelf.ranking.negatives import split_body, split_description

from repo_paths import SAMPLE_SKILLS
from scripted_model import NO_CATALOG, Script, call, tool_returns
from skill_files import write_skill

REVIEW = 'review a commit history'
"""`commit-messages` scores 0.95; `release-notes`, `sql-review` and `http-api-design` about 0.2 each."""


def search_once(capability: Skills[Any], query: str) -> Any:
    """What `search_skills` returned to the model in a real run that calls it once with `query`."""
    script = Script([[call('search_skills', query=query)]])
    result = Agent(script.model(), capabilities=[capability]).run_sync('go')
    [reply] = tool_returns(result.all_messages(), 'search_skills')
    return reply


def names(reply: Any) -> list[str]:
    return [match.name for match in reply]


def test_search_threshold_decides_which_matches_the_model_sees() -> None:
    default = search_once(Skills(SAMPLE_SKILLS, catalog_budget=NO_CATALOG), REVIEW)
    strict = search_once(Skills(SAMPLE_SKILLS, catalog_budget=NO_CATALOG, search_threshold=0.5), REVIEW)
    everything = search_once(
        Skills(SAMPLE_SKILLS, catalog_budget=NO_CATALOG, search_threshold=0), 'review release notes'
    )
    nothing = search_once(Skills(SAMPLE_SKILLS, catalog_budget=NO_CATALOG, search_threshold=1), REVIEW)

    assert names(default) == ['commit-messages', 'release-notes', 'sql-review', 'http-api-design']
    assert names(strict) == ['commit-messages']
    assert 'csv-analysis' in names(everything)  # 0.11, kept only because the threshold is 0
    assert isinstance(nothing, str)
    assert nothing.startswith('No skill matches')


def test_library_search_takes_the_threshold_with_the_same_default() -> None:
    library = SkillLibrary.build(options=LibraryOptions(directories=[SAMPLE_SKILLS]))

    assert library.search(REVIEW, 5) == library.search(REVIEW, 5, DEFAULT_THRESHOLD)
    assert [hit.name for hit in library.search(REVIEW, 5, 0.5)] == ['commit-messages']
    assert all(hit.score >= 0.2 for hit in library.search(REVIEW, 5, 0.2))


def test_a_spec_sets_the_search_threshold() -> None:
    spec = AgentSpec.model_validate(
        {
            'model': 'test',
            'capabilities': [
                {'Skills': {'directories': str(SAMPLE_SKILLS), 'search_threshold': 0.5, 'catalog_budget': NO_CATALOG}}
            ],
        }
    )
    script = Script([[call('search_skills', query=REVIEW)]])
    agent = Agent.from_spec(spec, custom_capability_types=[Skills], model=script.model())
    [reply] = tool_returns(agent.run_sync('go').all_messages(), 'search_skills')

    assert names(reply) == ['commit-messages']


@pytest.mark.parametrize('value', [1.5, -0.1, 'high', True])
def test_a_bad_search_threshold_is_refused_with_the_option_name(value: object) -> None:
    with pytest.raises(SkillError, match='`search_threshold` option must be a number from 0 to 1'):
        Skills(SAMPLE_SKILLS, search_threshold=value)  # pyright: ignore[reportArgumentType]


class LongestDescription:
    """A ranker no built-in one resembles: every skill whose description contains a query word, the longest
    description first, scored by its length against the longest in the library."""

    built: ClassVar[list[list[SearchDocument]]] = []
    """The documents each instance was built from, for the tests to check."""

    def __init__(self, documents: Sequence[SearchDocument]) -> None:
        self.documents = list(documents)
        self.longest = max((len(d.description) for d in self.documents), default=1)
        LongestDescription.built.append(self.documents)

    def search(self, query: str, limit: int, threshold: float) -> list[SearchHit]:
        words = query.lower().split()
        hits = [
            SearchHit(d.name, round(len(d.description) / self.longest, 3))
            for d in self.documents
            if any(word in d.description.lower() for word in words)
        ]
        return sorted((hit for hit in hits if hit.score >= threshold), key=lambda hit: -hit.score)[:limit]


@pytest.fixture(autouse=True)
def forget_built_rankers() -> None:
    LongestDescription.built.clear()


def test_a_custom_ranker_ranks_what_search_skills_returns() -> None:
    reply = search_once(
        Skills(SAMPLE_SKILLS, catalog_budget=NO_CATALOG, ranker=LongestDescription, search_threshold=0.9), 'a'
    )

    # Every sample description holds an "a"; only the two longest reach 0.9 of the longest.
    assert names(reply) == ['csv-analysis', 'sql-review']
    assert reply[0].score == 1.0
    [documents] = LongestDescription.built
    assert [d.name for d in documents][:2] == ['commit-messages', 'csv-analysis']  # catalog order
    assert '# Analysing CSV data' in documents[1].body  # each body's start comes along


def test_a_spec_names_a_custom_ranker_by_import_path() -> None:
    spec = {
        'model': 'test',
        'capabilities': [
            {
                'Skills': {
                    'directories': str(SAMPLE_SKILLS),
                    'ranker': 'test_ranker:LongestDescription',
                    'catalog_budget': NO_CATALOG,
                }
            }
        ],
    }
    script = Script([[call('search_skills', query='SQL', limit=1)]])
    agent = Agent.from_spec(spec, custom_capability_types=[Skills], model=script.model())
    [reply] = tool_returns(agent.run_sync('go').all_messages(), 'search_skills')

    assert names(reply) == ['sql-review']
    assert len(LongestDescription.built) == 1


class Broken:
    """A ranker whose every search fails, as an embedding API that is down does."""

    def __init__(self, documents: Sequence[SearchDocument]) -> None:
        pass

    def search(self, query: str, limit: int, threshold: float) -> list[SearchHit]:
        raise ConnectionError('the ranking service is down')


class Inventive:
    """A ranker that returns a skill the library does not have."""

    def __init__(self, documents: Sequence[SearchDocument]) -> None:
        pass

    def search(self, query: str, limit: int, threshold: float) -> list[SearchHit]:
        return [SearchHit('no-such-skill', 0.9)]


class OutOfRange:
    def __init__(self, documents: Sequence[SearchDocument]) -> None:
        self.first = documents[0].name

    def search(self, query: str, limit: int, threshold: float) -> list[SearchHit]:
        return [SearchHit(self.first, 12.5)]


@pytest.mark.parametrize(
    ('ranker', 'problem'),
    [
        (Broken, 'the ranking service is down'),
        (Inventive, "returned SearchHit(name='no-such-skill'"),
        (OutOfRange, 'scores must be from 0 to 1'),
        (lambda documents: 'not a ranker', 'which has no `search` method'),
    ],
)
def test_a_failing_custom_ranker_falls_back_to_lexical_ranking_with_a_warning(ranker: Any, problem: str) -> None:
    with pytest.warns(SkillWarning, match='the custom ranker failed, so this search ranked lexically') as caught:
        reply = search_once(Skills(SAMPLE_SKILLS, catalog_budget=NO_CATALOG, ranker=ranker), REVIEW)

    assert names(reply)[0] == 'commit-messages'  # the run goes on with the lexical results
    assert any(problem in str(warning.message) for warning in caught)


def test_a_custom_ranker_is_built_once_and_again_when_the_skills_change(tmp_path: Path) -> None:
    write_skill(tmp_path, 'weather', 'Steps.', description='Forecasts for a city.')
    library = SkillLibrary.build(
        options=LibraryOptions(directories=[tmp_path]), search=SearchOptions(ranker=LongestDescription)
    )
    assert [hit.name for hit in library.search('city', 3)] == ['weather']
    assert [hit.name for hit in library.search('city', 3)] == ['weather']
    write_skill(tmp_path, 'city-guide', 'Steps.', description='Walks, museums and food in a city you visit.')
    assert library.refresh()

    assert [hit.name for hit in library.search('city', 3)] == ['city-guide', 'weather']
    assert [[d.name for d in documents] for documents in LongestDescription.built] == [
        ['weather'],
        ['city-guide', 'weather'],
    ]


@pytest.mark.parametrize(
    ('options', 'message'),
    [
        ({'ranker': 42}, 'the ranker must be a callable that builds a Ranker'),
        ({'ranker': LongestDescription, 'search': 'hybrid'}, 'a custom ranker replaces the built-in search'),
        ({'ranker': 'test_ranker:nothing_here'}, "has no attribute 'nothing_here'"),
    ],
)
def test_a_bad_ranker_option_is_refused_at_construction(options: dict[str, Any], message: str) -> None:
    with pytest.raises(SkillError, match=message):
        Skills(SAMPLE_SKILLS, **options)


def test_not_for_clauses_leave_the_description_and_when_not_to_use_sections_leave_the_body() -> None:
    description = 'Edit prose for clarity. Not for creative writing tasks. Use when a draft reads badly; 不适用于翻译。'
    body = '# Editor\n\nSteps.\n\n## When NOT to use\n\n- poems\n\n### Also\n\n- lyrics\n\n## Steps\n\nRead it.\n'

    assert split_description(description) == (
        'Edit prose for clarity.  Use when a draft reads badly;  ',
        'Not for creative writing tasks. 不适用于翻译。',
    )
    kept, excluded = split_body(body)
    assert 'poems' not in kept
    assert 'lyrics' not in kept
    assert 'Read it.' in kept
    assert 'poems' in excluded
    assert 'lyrics' in excluded
    assert split_body('# Tool\n\n## Usage\n\nRun it.\n') == ('# Tool\n\n## Usage\n\nRun it.\n', '')


NEGATIVES_LIBRARY = [
    SearchDocument('prose-editor', 'Tighten and edit prose. Not for creative writing tasks.'),
    SearchDocument('story-coach', 'Help with stories, plots and characters: writing fiction.'),
    SearchDocument('screen-capture', 'Capture screenshots of a whole site. Not for single-page screenshots.'),
]


def test_a_query_a_skill_says_it_is_not_for_ranks_it_lower_not_higher() -> None:
    index = SkillIndex(NEGATIVES_LIBRARY)
    unpenalised = SkillIndex(NEGATIVES_LIBRARY, RankingConfig(negative_weight=0))

    def score(of: SkillIndex, query: str, name: str) -> float:
        return next(hit.score for hit in of.search(query, 3, threshold=0) if hit.name == name)

    assert [hit.name for hit in index.search('creative writing tasks', 3)] == ['story-coach']
    assert score(index, 'edit creative prose', 'prose-editor') < score(
        unpenalised, 'edit creative prose', 'prose-editor'
    )
    # A word the skill also uses for what it does ("screenshots") never counts against it.
    assert score(index, 'site screenshots', 'screen-capture') == score(
        unpenalised, 'site screenshots', 'screen-capture'
    )


def test_search_skills_does_not_offer_a_skill_for_what_its_author_excludes() -> None:
    skills = [
        Skill(name='prose-editor', description='Tighten and edit prose. Not for creative writing tasks.'),
        Skill(name='story-coach', description='Help with plots and characters in fiction.'),
    ]
    reply = search_once(Skills(skills=skills, catalog_budget=NO_CATALOG), 'creative writing tasks')

    assert isinstance(reply, str)  # once the excluded words stop counting for it, nothing matches
    assert reply.startswith('No skill matches')
