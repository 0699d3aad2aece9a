"""Hybrid (lexical + embedding) search: choosing it, failing early without the extra, and caching vectors.

Most tests use a deterministic bag of words hashed into 64 dimensions (`WordEncoder`), with a few synonyms
folded together, so a paraphrase can match by meaning where BM25 sees no shared word. The `[semantic]` extra's
real model is tested in `test_semantic_model.py`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import TextPart

import skillshelf.ranking.semantic as semantic
from skillshelf import (
    Encoder,
    LibraryOptions,
    SearchOptions,
    SemanticUnavailableError,
    Skill,
    SkillError,
    SkillLibrary,
    SkillMatch,
    Skills,
    SkillWarning,
)
from skillshelf.ranking.documents import DEFAULT_THRESHOLD, SearchDocument, SearchHit
from skillshelf.ranking.hybrid import SHORT_TEXT_WORDS, dense_shares, indexed_words

from scripted_model import NO_CATALOG, Script, call, tool_returns
from skill_files import write_library
from skill_fixtures import WordEncoder

PARAPHRASE = 'hire an automobile'
"""No word in common with any skill below: BM25 finds nothing, the synonyms find `car-rental`."""


def encode_words(texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """A module-level encoder, for agent specs that name one by import path."""
    return WordEncoder()(texts)


def travel_skills() -> list[Skill[Any]]:
    return [
        Skill(name='car-rental', description='Rent a car.'),
        Skill(name='flight-booking', description='Book plane tickets and choose seats.'),
        Skill(name='pdf-forms', description='Fill PDF forms and extract their fields.'),
    ]


def numbered_skills(count: int) -> dict[str, tuple[str, str]]:
    """`skill-000`, `skill-001`...: skill n is about `topic<n>`."""
    return {f'skill-{n:03d}': (f'Task number {n} for topic{n} work.', f'Steps for topic{n}.') for n in range(count)}


@pytest.fixture
def extra_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend fastembed is not installed (skillshelf's lookup only)."""
    monkeypatch.setattr(semantic, 'find_spec', lambda name, package=None: None)


@pytest.fixture
def fake_bundled_model(monkeypatch: pytest.MonkeyPatch) -> list[WordEncoder]:
    """Pretend the extra is installed; `load_encoder` hands out a `WordEncoder` and records each load."""
    loads: list[WordEncoder] = []

    def load() -> Encoder:
        loads.append(WordEncoder())
        return loads[-1]

    monkeypatch.setattr(semantic, 'find_spec', lambda name, package=None: object())
    monkeypatch.setattr(semantic, 'load_encoder', load)
    monkeypatch.setattr(semantic, '_shared', [])  # a fresh process-wide cache for this test
    return loads


def test_hybrid_ranks_a_paraphrase_that_lexical_misses() -> None:
    lexical = SkillLibrary.build(travel_skills())
    hybrid = SkillLibrary.build(travel_skills(), search=SearchOptions(search='hybrid', encoder=WordEncoder()))

    assert lexical.search(PARAPHRASE, 3) == []
    [best, *_] = hybrid.search(PARAPHRASE, 3)
    assert best.name == 'car-rental'
    assert best.score >= DEFAULT_THRESHOLD
    # The lexical half still counts: an exact-word query keeps its skill first.
    assert hybrid.search('extract fields from a PDF', 1)[0].name == 'pdf-forms'


def test_hybrid_puts_a_skill_the_query_names_first_too() -> None:
    hybrid = SkillLibrary.build(travel_skills(), search=SearchOptions(search='hybrid', encoder=WordEncoder()))
    assert hybrid.search(PARAPHRASE, 1)[0].name == 'car-rental'
    assert [hit.name for hit in hybrid.search(f'{PARAPHRASE} with flight-booking', 2)] == [
        'flight-booking',
        'car-rental',
    ]


def test_lexical_weight_moves_the_score_between_the_two_halves() -> None:
    dense_only = SkillLibrary.build(travel_skills(), search=SearchOptions(encoder=WordEncoder(), lexical_weight=0.0))
    lexical_only = SkillLibrary.build(travel_skills(), search=SearchOptions(encoder=WordEncoder(), lexical_weight=1.0))

    assert dense_only.search(PARAPHRASE, 1)[0].name == 'car-rental'
    assert lexical_only.search(PARAPHRASE, 1) == []


def same_vector(texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Every text, query or skill, embedded alike: each skill's similarity to any query is 1."""
    return np.ones((len(texts), 4), dtype=np.float32)


def test_a_long_skills_similarity_counts_less_than_a_short_ones(tmp_path: Path) -> None:
    for name, body in (('short-tool', 'Run it.'), ('long-guide', ' '.join(['step'] * 600))):
        (tmp_path / name).mkdir()
        (tmp_path / name / 'SKILL.md').write_text(
            f'---\nname: {name}\ndescription: Handles invoices.\n---\n{body}\n', encoding='utf-8'
        )
    library = SkillLibrary.build(
        options=LibraryOptions(directories=[tmp_path]), search=SearchOptions(encoder=same_vector, lexical_weight=0.4)
    )

    # No word of the query is indexed, so each score is the skill's share of similarity alone.
    short, long = library.search('zzz qqq', 2, threshold=0)
    assert short == SearchHit('short-tool', 0.6)  # 4 indexed words: the whole share, 1 - 0.4
    # 603 words (name, description, the whole body): 75 of them count, as the embedding tells only of the start.
    assert long == SearchHit('long-guide', round(0.6 * SHORT_TEXT_WORDS / 603, 3))  # scores are given to 3 places


def test_dense_shares_follow_indexed_length() -> None:
    shares = dense_shares([0, SHORT_TEXT_WORDS, 2 * SHORT_TEXT_WORDS, 10 * SHORT_TEXT_WORDS], lexical_weight=0.4)
    assert shares.tolist() == pytest.approx([0.6, 0.6, 0.3, 0.06])
    assert dense_shares([5000], lexical_weight=1.0).tolist() == [0.0]  # lexical alone, at any length
    # 1 + 3 + 2 words, and 3 of the body's first 9 characters ('One two t')
    assert indexed_words(SearchDocument('pdf-forms', 'Fill PDF forms.', 'pdf acro', 'One two three four'), 9) == 9


def test_search_skills_in_an_agent_run_returns_the_hybrid_ranking(make_script: Callable[..., Script]) -> None:
    script = make_script(
        [call('search_skills', query=PARAPHRASE, limit=2)], [call('load_skill', name='car-rental')], [TextPart('ok')]
    )
    capability = Skills(skills=travel_skills(), encoder=WordEncoder(), catalog_budget=NO_CATALOG)
    messages = Agent(script.model(), capabilities=[capability]).run_sync('I need wheels').all_messages()

    assert capability.search == 'hybrid'  # an encoder implies hybrid search
    [matches] = tool_returns(messages, 'search_skills')
    assert isinstance(matches, list)
    assert [type(match) for match in matches] == [SkillMatch] * len(matches)
    assert matches[0] == SkillMatch('car-rental', 'Rent a car.', matches[0].score, loaded=False)
    assert 0.2 <= matches[0].score <= 1
    assert tool_returns(messages, 'load_skill')[0].startswith("Loaded skill 'car-rental'.")


def test_lexical_stays_the_default_and_needs_no_encoder(make_script: Callable[..., Script]) -> None:
    script = make_script([call('search_skills', query=PARAPHRASE)], [TextPart('ok')])
    capability = Skills(skills=travel_skills(), catalog_budget=NO_CATALOG)
    messages = Agent(script.model(), capabilities=[capability]).run_sync('I need wheels').all_messages()

    assert capability.search == 'lexical'
    assert tool_returns(messages, 'search_skills')[0].startswith("No skill matches 'hire an automobile'.")


@pytest.mark.usefixtures('extra_missing')
def test_hybrid_without_the_extra_fails_at_construction_with_the_pip_hint() -> None:
    with pytest.raises(SemanticUnavailableError, match=r"pip install 'skillshelf\[semantic\]'"):
        Skills(skills=travel_skills(), search='hybrid')
    # Bringing an encoder needs no extra, and lexical search never looks for one.
    assert Skills(skills=travel_skills(), search='hybrid', encoder=WordEncoder()).library.search_mode == 'hybrid'
    assert Skills(skills=travel_skills()).library.search_mode == 'lexical'


def test_the_bundled_model_loads_at_the_first_search_once_per_process(fake_bundled_model: list[WordEncoder]) -> None:
    first = Skills(skills=travel_skills(), search='hybrid')
    second = SkillLibrary.build(travel_skills(), search=SearchOptions(search='hybrid'))
    assert fake_bundled_model == []  # construction only checks that the extra is installed

    assert first.library.search(PARAPHRASE, 1)[0].name == 'car-rental'
    assert second.search(PARAPHRASE, 1)[0].name == 'car-rental'
    assert len(fake_bundled_model) == 1
    assert fake_bundled_model[0].texts.count(PARAPHRASE) == 2


@pytest.mark.usefixtures('extra_missing')
def test_spec_with_search_hybrid_and_no_extra_fails_clearly(tmp_path: Path) -> None:
    spec_file = tmp_path / 'agent.yaml'
    spec_file.write_text('model: test\ncapabilities:\n  - Skills:\n      search: hybrid\n', encoding='utf-8')

    with pytest.raises(ValueError, match=r"Skills.*pip install 'skillshelf\[semantic\]'") as raised:
        Agent.from_file(spec_file, custom_capability_types=[Skills])
    assert isinstance(raised.value.__cause__, SemanticUnavailableError)


def test_spec_names_an_encoder_by_import_path(tmp_path: Path, make_script: Callable[..., Script]) -> None:
    (tmp_path / 'car-rental').mkdir()
    (tmp_path / 'car-rental' / 'SKILL.md').write_text('---\nname: car-rental\ndescription: Rent a car.\n---\n')
    spec = {
        'model': 'test',
        'capabilities': [
            {
                'Skills': {
                    'directories': str(tmp_path),
                    'encoder': 'test_hybrid:encode_words',
                    'lexical_weight': 0.3,
                    'catalog_budget': NO_CATALOG,
                }
            }
        ],
    }
    script = make_script([call('search_skills', query=PARAPHRASE)], [TextPart('ok')])
    agent = Agent.from_spec(spec, custom_capability_types=[Skills], model=script.model())
    messages = agent.run_sync('wheels').all_messages()

    [capability] = [c for c in agent.root_capability.capabilities if isinstance(c, Skills)]
    assert (capability.search, capability.lexical_weight) == ('hybrid', 0.3)
    assert [match.name for match in tool_returns(messages, 'search_skills')[0]] == ['car-rental']


@pytest.mark.parametrize(
    ('options', 'message'),
    [
        ({'search': 'dense'}, "the `search` option must be 'lexical' or 'hybrid', not 'dense'"),
        (
            {'search': 'hybrid', 'lexical_weight': 1.5},
            'the `lexical_weight` option must be a number from 0 to 1, not 1.5',
        ),
        (
            {'search': 'hybrid', 'lexical_weight': '0.3'},
            "the `lexical_weight` option must be a number from 0 to 1, not '0.3'",
        ),
        (
            {'encoder': 'skill_fixtures'},
            'the encoder import path \'skill_fixtures\' must look like "package.module:attribute"',
        ),
        (
            {'encoder': 'skill_fixtures:nope'},
            "module 'skill_fixtures' has no attribute 'nope' (from 'skill_fixtures:nope')",
        ),
        ({'encoder': 'skill_fixtures:forecast_calls'}, 'the encoder must be a callable from texts to embedding rows'),
    ],
)
def test_bad_search_options_in_a_spec_say_what_is_expected(options: dict[str, Any], message: str) -> None:
    with pytest.raises(SkillError, match=re.escape(message)):
        Skills.from_spec(**options)


def test_an_encoder_returning_the_wrong_shape_is_named_and_search_falls_back_to_lexical() -> None:
    library = SkillLibrary.build(
        travel_skills(), search=SearchOptions(encoder=lambda texts: np.ones((1, 8), dtype=np.float32))
    )

    with pytest.warns(SkillWarning, match=r'ranked lexically: .*returned an array of shape \(1, 8\) for 3 texts'):
        hits = library.search('extract fields from a PDF', 3)

    assert [hit.name for hit in hits] == ['pdf-forms']


class FlakyEncoder(WordEncoder):
    """An embedding API that is down until `up` is set."""

    up = False

    def __call__(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not self.up:
            raise ConnectionError('embedding service unavailable')
        return super().__call__(texts)


def test_a_failing_encoder_never_ends_the_run_and_is_tried_again(make_script: Callable[..., Script]) -> None:
    encoder = FlakyEncoder()
    capability = Skills(skills=travel_skills(), encoder=encoder, catalog_budget=NO_CATALOG)
    script = make_script([call('search_skills', query='book plane tickets')], [TextPart('ok')])

    with pytest.warns(SkillWarning, match='hybrid search failed, so this search ranked lexically: embedding service'):
        messages = Agent(script.model(), capabilities=[capability]).run_sync('fly me').all_messages()

    [matches] = tool_returns(messages, 'search_skills')
    assert [match.name for match in matches] == ['flight-booking']
    encoder.up = True
    assert capability.library.search(PARAPHRASE, 1)[0].name == 'car-rental'  # hybrid again once the API is back


def test_prepare_search_embeds_up_front_and_raises_what_a_search_would_only_warn_about() -> None:
    encoder = FlakyEncoder()
    library = SkillLibrary.build(travel_skills(), search=SearchOptions(encoder=encoder))
    with pytest.raises(ConnectionError, match='embedding service unavailable'):
        library.prepare_search()

    encoder.up = True
    library.prepare_search()
    assert len(encoder.texts) == len(travel_skills())
    assert library.search(PARAPHRASE, 1)[0].name == 'car-rental'
    assert len(encoder.texts) == len(travel_skills()) + 1  # the search embedded its query only


def test_vectors_are_cached_on_disk_and_reused_until_a_skill_changes(tmp_path: Path, cache_dir: Path) -> None:
    library_dir = write_library(tmp_path / 'library', numbered_skills(200))

    def searched_texts(encoder: WordEncoder) -> list[str]:
        library = SkillLibrary.build(
            options=LibraryOptions(directories=[library_dir]), search=SearchOptions(encoder=encoder)
        )
        assert library.search('topic7 work', 1)[0].name == 'skill-007'
        return encoder.texts

    cold = searched_texts(WordEncoder())
    [vector_file] = cache_dir.glob('vectors-*.npz')
    assert len(cold) == 1 + 200 + 1  # the model probe, every skill, the query
    with np.load(vector_file, allow_pickle=False) as data:
        assert data['vectors'].shape == (200, 64)

    assert searched_texts(WordEncoder()) == [semantic_probe(cold), 'topic7 work']

    skill_file = library_dir / 'skill-042' / 'SKILL.md'
    skill_file.write_text(skill_file.read_text().replace('Task number 42', 'Edited task 42'), encoding='utf-8')
    edited = searched_texts(WordEncoder())
    assert len(edited) == 3
    assert 'Edited task 42' in edited[1]

    # Another model (same encoder class, other weights) never reuses the stored vectors.
    assert len(searched_texts(WordEncoder(seed=1))) == 1 + 200 + 1


def semantic_probe(texts: list[str]) -> str:
    """The probe sentence the cache embeds to identify the model (the first text of a cold build)."""
    assert texts[0].startswith('skillshelf model probe')
    return texts[0]


def test_an_unreadable_vector_cache_is_ignored_and_rewritten(tmp_path: Path, cache_dir: Path) -> None:
    library_dir = write_library(tmp_path / 'library', numbered_skills(200))
    SkillLibrary.build(
        options=LibraryOptions(directories=[library_dir]), search=SearchOptions(encoder=WordEncoder())
    ).search('topic1', 1)
    [vector_file] = cache_dir.glob('vectors-*.npz')
    vector_file.write_bytes(b'PK\x03\x04 not really a zip file')

    encoder = WordEncoder()
    assert (
        SkillLibrary.build(options=LibraryOptions(directories=[library_dir]), search=SearchOptions(encoder=encoder))
        .search('topic1', 1)[0]
        .name
        == 'skill-001'
    )
    assert len(encoder.texts) == 1 + 200 + 1
    with np.load(vector_file, allow_pickle=False) as data:
        assert data['vectors'].shape == (200, 64)


def test_small_libraries_are_not_cached_but_a_refresh_embeds_only_what_changed(
    tmp_path: Path, cache_dir: Path, make_script: Callable[..., Script]
) -> None:
    library_dir = write_library(tmp_path / 'library', numbered_skills(3))
    encoder = WordEncoder()
    capability = Skills(library_dir, encoder=encoder)
    agent = Agent(make_script().model(), capabilities=[capability])
    assert capability.library.search('topic2', 1)[0].name == 'skill-002'
    assert len(encoder.texts) == 3 + 1

    skill_file = library_dir / 'skill-001' / 'SKILL.md'
    skill_file.write_text(skill_file.read_text().replace('topic1 work', 'invoices'), encoding='utf-8')
    agent.run_sync('hello')  # each run re-reads changed directories
    assert capability.library.search('invoices', 1)[0].name == 'skill-001'

    assert len(encoder.texts) == 3 + 1 + 1 + 1  # only the edited skill and the new query
    assert not cache_dir.exists()


# ----------------------------------------------------------------------------------------------- the extra missing


def test_a_missing_runtime_is_named_with_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, 'fastembed', None)  # `import fastembed` now fails as if not installed
    hint = r"pip install 'skillshelf\[semantic\]' \(fastembed, .*no PyTorch\)"

    with pytest.raises(SemanticUnavailableError, match=hint):
        Skills(skills=travel_skills(), search='hybrid')  # found at construction, before any model loads
    with pytest.raises(SemanticUnavailableError, match=hint):
        semantic.load_encoder()


def test_each_skill_is_embedded_with_the_start_of_its_body(tmp_path: Path) -> None:
    folder = tmp_path / 'fleet-tools'
    folder.mkdir()
    opening = 'Use this to hire an automobile for the team.'
    (folder / 'SKILL.md').write_text(
        f'---\nname: fleet-tools\ndescription: Company vehicle paperwork.\n---\n{opening}\n{"x" * 2000} tail-marker\n',
        encoding='utf-8',
    )
    encoder = WordEncoder()
    library = SkillLibrary.build(
        options=LibraryOptions(directories=[tmp_path]), search=SearchOptions(encoder=encoder, lexical_weight=0.0)
    )

    assert library.search('rent a car', 1)[0].name == 'fleet-tools'  # found through its body's words
    embedded = next(text for text in encoder.texts if 'paperwork' in text)
    assert opening in embedded
    assert 'tail-marker' not in embedded  # only the start of the body: the model reads 256 word pieces


def test_building_hybrid_search_reads_each_skill_body_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import skillshelf.content.folder

    library = SkillLibrary.build(
        options=LibraryOptions(directories=[write_library(tmp_path, numbered_skills(5))]),
        search=SearchOptions(encoder=WordEncoder()),
    )
    reads: list[int | None] = []
    read_body = skillshelf.content.folder.read_body

    def counted(file: Any, max_chars: int | None = None) -> str:
        reads.append(max_chars)
        return read_body(file, max_chars)

    monkeypatch.setattr(skillshelf.content.folder, 'read_body', counted)
    library.prepare_search()

    assert len(reads) == 5  # the index and the embeddings share one read of each body start
    assert library.search('topic3 work', 1)[0].name == 'skill-003'
