"""Ranking behaviour of the search engine behind `search_skills`, on small in-test libraries."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import unicodedata
import zlib
from collections.abc import Callable, Sequence
from itertools import chain, pairwise
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skillshelf.library.index
import skillshelf.ranking.lexical
from skillshelf import LibraryOptions, Skill, SkillLibrary
from skillshelf.files import cache_directory
from skillshelf.ranking import tokenize as _tokenize
from skillshelf.ranking.bm25 import BM25Matrix
from skillshelf.ranking.cache import CACHE_MIN_SKILLS
from skillshelf.ranking.documents import SearchDocument, SearchHit
from skillshelf.ranking.hybrid import HybridIndex
from skillshelf.ranking.lexical import RankingConfig, SkillIndex
from skillshelf.ranking.tokenize import (
    decode_piece,
    piece_bytes,
    piece_terms,
    split_identifier,
    terms_of_pieces,
    tokenize,
)
from skillshelf.ranking.when_to_use import when_to_use_sections

from repo_paths import REPO
from skill_files import write_library, write_skill

LIBRARY = [
    SearchDocument('pdf-forms', 'Fill in and flatten PDF forms.', body='Use pypdf to read AcroForm fields.'),
    SearchDocument('csv-charts', 'Turn CSV files into charts.', body='Plot columns with matplotlib; label axes.'),
    SearchDocument('code-review', 'Review a pull request for bugs and style.', body='Read the diff first.'),
    SearchDocument('release-notes', 'Write release notes from merged pull requests.', keywords='changelog'),
    SearchDocument('代码审查', '审查代码质量，找出缺陷和风格问题。'),
    SearchDocument('sql-tuning', 'Speed up slow SQL queries.', body='Read the query plan; add indexes.'),
]


def names(index: SkillIndex, query: str, limit: int = 3) -> list[str]:
    return [hit.name for hit in index.search(query, limit, threshold=0)]


@pytest.fixture(scope='module')
def index() -> SkillIndex:
    return SkillIndex(LIBRARY)


# --------------------------------------------------------------------------------------- tokenisation


def test_words_are_stemmed_and_stop_words_dropped() -> None:
    assert tokenize('The triggers are running for the charts') == ['trigger', 'run', 'chart']


def test_identifiers_split_into_words() -> None:
    assert split_identifier('pdf-form_filler.v2') == 'pdf form filler v2'
    assert tokenize(split_identifier('FormFiller')) == ['form', 'filler']


def test_cjk_runs_become_character_pairs_inside_mixed_text() -> None:
    assert tokenize('帮我review代码审查') == ['帮我', 'review', '代码', '码审', '审查']
    assert tokenize('한국어') == ['한국', '국어']


def test_full_width_text_is_normalised() -> None:
    assert tokenize('ＰＤＦ') == tokenize('pdf')


@pytest.mark.parametrize('apostrophe', ["'", '\u2019'], ids=['straight', 'curly'])
def test_contractions_and_possessives_give_no_term_of_their_own(apostrophe: str) -> None:
    def terms(text: str) -> list[str]:
        return tokenize(text.replace("'", apostrophe))

    assert terms("what's") == []
    assert 's' not in terms("What's the user's file")
    assert terms("What's the user's file") == ['user', 'file']
    assert terms("I'm sure you're right, we've seen they'll say I'd") == ['sure', 'right', 'seen', 'say']
    # A negated auxiliary is a stop word and "not": no term at all, rather than `don` and `t`.
    assert terms("don't DOESN'T can't won't isn't") == []
    assert terms("the team's deploy doesn't start") == ['team', 'deploy', 'start']
    # Only an ending after a letter or digit: a quoted letter and other apostrophes still split words.
    assert terms("the 's' flag of rock'n'roll by O'Brien in the 90's") == [
        's',
        'flag',
        'rock',
        'n',
        'roll',
        'o',
        'brien',
        '90',
    ]


POSSESSIVES = [
    SearchDocument('brand-voice', "Apply the company's brand voice.", body="Follow the brand's style guide."),
    SearchDocument('doc-coauthoring', 'Co-author documents.', body="It's a workflow for the user's docs."),
]


def test_a_possessive_in_the_query_finds_no_unrelated_skill() -> None:
    # In Anthropic's public skills library, the term `s` of "what's" ranked an unrelated skill first (0.988).
    index = SkillIndex(POSSESSIVES)
    assert index.search("what's the weather in Paris", 5, threshold=0) == []
    assert index.search('What\u2019s the weather in Paris', 5, threshold=0) == []
    with_weather = SkillIndex([*POSSESSIVES, SearchDocument('weather', 'Get the weather forecast for a city.')])
    assert [hit.name for hit in with_weather.search("what's the weather in Paris", 5, threshold=0)] == ['weather']


def test_a_full_term_cache_still_gives_every_word_its_terms(monkeypatch: pytest.MonkeyPatch) -> None:
    cached = len(_tokenize._TERMS)  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(_tokenize, '_CACHE_LIMIT', cached + 2)
    terms = terms_of_pieces(['zorbulating', 'the', 'flumpered', 'quixotified', '蘑菇炖汤', 'zorbulating'])
    assert terms == [('zorbul',), (), ('flumper',), ('quixotifi',), ('蘑菇', '菇炖', '炖汤'), ('zorbul',)]
    assert len(_tokenize._TERMS) == cached + 2  # pyright: ignore[reportPrivateUsage]


MIXED_SCRIPT = st.sampled_from(
    [
        *"aZ9 _-.':·Σσİé\u0301\u0345ﬁＰ\u00a0\u2024\u2028代码한국\u1100\u1161ΑΔ\U0001f600",
        *("'s", "N'T", '\u2019re', '\uff07d', "'ll", 's', 't'),  # contractions: straight, curly and full-width
    ]
)
CONTRACTION_ENDING = re.compile(r"(?<=[^\W_])['\u2019](?:s|re|ve|ll|d|m)(?![^\W_])|[^\W_]*n['\u2019]t(?![^\W_])")


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(MIXED_SCRIPT).map(''.join)))
def test_fast_splitting_agrees_with_one_unicode_regex(text: str) -> None:
    # The reference: NFKC, lower-case, then every run of letters and digits of any script. The fast path
    # lower-cases piece by piece, so a capital sigma at the end of a piece is `σ`, never the final form `ς`.
    def same_sigma(terms: list[str]) -> list[str]:
        return [term.replace('ς', 'σ') for term in terms]

    # Contraction endings and `n't` words are dropped from the normalised text first.
    normalised = CONTRACTION_ENDING.sub(' ', unicodedata.normalize('NFKC', text).lower())
    reference = re.findall(r'[^\W_]+', normalised)
    expected = [term for word in reference for term in piece_terms(word)]
    assert same_sigma(tokenize(text)) == same_sigma(expected)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(MIXED_SCRIPT).map(''.join)))
def test_the_index_splitting_gives_a_text_the_terms_a_query_gets(text: str) -> None:
    # The index splits bytes, where a no-break space or line separator does not split: the terms must not change.
    indexed = [term for piece in piece_bytes(text) for term in piece_terms(decode_piece(piece))]
    assert indexed == tokenize(text)


CJK_LETTERS = st.sampled_from(
    ['代', '码', '审', '查', '가', '각', 'あ', 'カ', 'ヿ', 'ゟ', '゛', '・', 'ー', '\uf900', '豈', '\u3099']
)


@given(st.text(CJK_LETTERS, min_size=1, max_size=8))
def test_the_cjk_word_shortcut_gives_the_terms_of_the_general_path(piece: str) -> None:
    general = tuple(chain.from_iterable(map(_tokenize._word_terms, _tokenize._piece_words(piece))))  # pyright: ignore[reportPrivateUsage]
    if _tokenize._is_cjk_word(piece):  # pyright: ignore[reportPrivateUsage]
        assert tuple(_tokenize._cjk_terms(piece)) == general  # pyright: ignore[reportPrivateUsage]
    assert piece_terms(piece) == general


@given(st.text(st.sampled_from(["'", 'a', 'n', 't', 's', 'd', 'e', 'A', '0']), min_size=1, max_size=9))
def test_the_quoted_word_shortcut_gives_the_terms_of_the_general_path(piece: str) -> None:
    general = tuple(chain.from_iterable(map(_tokenize._word_terms, _tokenize._piece_words(piece))))  # pyright: ignore[reportPrivateUsage]
    if "'" in piece:
        _tokenize._TERMS.pop(piece, None)  # pyright: ignore[reportPrivateUsage]
        assert piece_terms(piece) == general


def test_the_skill_named_for_the_task_comes_first(index: SkillIndex) -> None:
    assert names(index, 'fill a PDF form', 1) == ['pdf-forms']
    assert names(index, 'make a chart from a csv', 1) == ['csv-charts']


def test_inflected_query_words_match_through_stemming(index: SkillIndex) -> None:
    assert names(index, 'charting', 1) == ['csv-charts']
    assert names(index, 'flattening forms', 1) == ['pdf-forms']


def test_body_words_find_a_skill_whose_headline_does_not_mention_them(index: SkillIndex) -> None:
    assert names(index, 'matplotlib', 1) == ['csv-charts']
    assert names(index, 'query plan indexes', 1) == ['sql-tuning']


def test_keywords_from_frontmatter_are_searched(index: SkillIndex) -> None:
    assert names(index, 'changelog', 1) == ['release-notes']


def test_a_headline_match_beats_a_passing_mention_in_a_body() -> None:
    index = SkillIndex(
        [
            SearchDocument('notes', 'Take meeting notes.', body='Docker is mentioned once here. ' + 'Write. ' * 50),
            SearchDocument('docker-deploy', 'Deploy services with Docker.', body='Write a Dockerfile.'),
        ]
    )
    assert names(index, 'docker', 2) == ['docker-deploy', 'notes']


def test_a_when_to_use_section_weighs_more_than_the_rest_of_the_body() -> None:
    filler = 'Follow the steps. ' * 30
    index = SkillIndex(
        [
            SearchDocument('ledger', 'Keep the books.', body=f'# Ledger\n\n## Steps\n\nReconcile invoices.\n{filler}'),
            SearchDocument(
                'billing', 'Handle money.', body=f'# Billing\n\n## When to use\n\nReconcile invoices.\n{filler}'
            ),
        ]
    )
    assert names(index, 'reconcile the invoices', 2) == ['billing', 'ledger']


def test_when_to_use_sections_keep_their_subsections_and_leave_out_when_not_to_use() -> None:
    body = (
        '# When to use this planner\n'  # the body's first line is its title
        'Title text.\n'
        '## When to use\n'
        'Planning requests.\n'
        '### Examples\n'
        '"plan my sprint"\n'
        '## Steps\n'
        'Procedure.\n'
        '## When NOT to use\n'
        'Quick fixes.\n'
        '## Trigger phrases\n'
        'roadmap\n'
        '## 触发条件\n'
        '用户要求制定计划\n'
    )
    sections = [section.strip() for section in when_to_use_sections(body)]
    assert sections == ['Planning requests.', 'Examples \n"plan my sprint"', 'roadmap', '用户要求制定计划']
    assert when_to_use_sections('# Tool\n\n## Usage\n\nRun it.\n') == []
    # A section heading may open the body: only a level-1 heading there is the title.
    opening = '## Use this skill when\n- rotating secrets\n## Steps\nRotate.'
    assert [section.strip() for section in when_to_use_sections(opening)] == ['- rotating secrets']
    assert when_to_use_sections('# Trigger.dev\nRun background jobs.\n') == []


def test_chinese_query_finds_chinese_skill_without_spaces(index: SkillIndex) -> None:
    assert names(index, '帮我做一下代码审查', 1) == ['代码审查']


def test_a_skill_the_query_names_comes_first_with_score_one(index: SkillIndex) -> None:
    # 'pull request' points at code-review; naming release-notes overrides that.
    assert names(index, 'review the pull request', 1) == ['code-review']
    assert index.search('use release-notes to review the pull request', 1) == [SearchHit('release-notes', 1.0)]
    assert names(index, 'Run `Release-Notes` on the pull request', 1) == ['release-notes']


def test_a_one_word_name_is_named_only_as_a_command() -> None:
    index = SkillIndex([*LIBRARY, SearchDocument('planner', 'Break a feature into steps.', body='Plan the work.')])
    assert names(index, 'review the pull request', 1) == ['code-review']
    assert names(index, '/planner review the pull request', 1) == ['planner']
    assert names(index, '$planner review the pull request', 1) == ['planner']
    # A plain word only describes the request; it names nothing.
    assert index.named_in('planner: review the pull request') == []


@pytest.mark.parametrize(
    'query',
    [
        'review the pull request in src/release-notes.ts',
        'review the pull request of ~/skills/release-notes/',
        'see https://example.com/planner about the pull request',
        'a plan/planner/review loop for the pull request',
    ],
)
def test_paths_urls_and_file_names_name_no_skill(query: str) -> None:
    index = SkillIndex([*LIBRARY, SearchDocument('planner', 'Break a feature into steps.')])
    assert index.named_in(query) == []


def test_a_named_skill_is_found_even_when_no_other_word_matches(index: SkillIndex) -> None:
    assert index.search('帮我用 sql-tuning', 3) == [SearchHit('sql-tuning', 1.0)]
    assert index.search('/nothing-here', 3) == []


def test_several_skills_with_the_named_name_keep_their_score_order() -> None:
    twins = [
        SearchDocument('deploy', 'Deploy the web app.'),
        SearchDocument('deploy', 'Deploy docker containers.'),
        SearchDocument('docker-build', 'Build docker images.'),
    ]
    ranked = SkillIndex(twins).rank('/deploy docker containers', 3, threshold=0)
    assert [position for position, _ in ranked] == [1, 0, 2]
    assert [score for _, score in ranked] == [1.0, 1.0, pytest.approx(0.268, abs=0.001)]


def test_shared_words_rank_both_skills_in_order(index: SkillIndex) -> None:
    assert names(index, 'review the pull request', 2) == ['code-review', 'release-notes']


def test_only_the_body_start_is_indexed() -> None:
    documents = [SearchDocument('a', 'first', body='x ' * 100 + 'needle'), SearchDocument('b', 'second')]
    assert names(SkillIndex(documents, RankingConfig(body_chars=50)), 'needle') == []
    assert names(SkillIndex(documents, RankingConfig(body_chars=5000)), 'needle') == ['a']


def test_a_body_budget_shares_body_characters_across_a_large_library() -> None:
    config = RankingConfig(body_chars=5000, body_budget=100)
    assert config.body_limit(2) == 50
    assert config.body_limit(1000) == 0
    documents = [SearchDocument('a', 'first', body='x ' * 40 + 'needle'), SearchDocument('b', 'second')]
    assert names(SkillIndex(documents, config), 'needle') == []
    assert names(SkillIndex(documents, RankingConfig(body_budget=1000)), 'needle') == ['a']
    assert names(SkillIndex(documents, config), 'first') == ['a']


# --------------------------------------------------------------------------------------- scores and limits


def test_scores_are_in_unit_range_and_descending(index: SkillIndex) -> None:
    hits = index.search('review pull request bugs', 6, threshold=0)
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(0 < score <= 1 for score in scores)


def test_score_grows_with_the_share_of_the_query_matched(index: SkillIndex) -> None:
    full, partial = index.search('review pull request bugs', 2, threshold=0)
    assert (full.name, partial.name) == ('code-review', 'release-notes')
    assert full.score > partial.score
    assert index.search('fill flatten pdf forms', 1)[0].score == 1.0


def test_threshold_drops_weak_matches(index: SkillIndex) -> None:
    everything = index.search('read', 6, threshold=0)
    assert len(everything) >= 2
    assert index.search('read', 6, threshold=1.01) == []


def test_unknown_words_and_empty_queries_return_nothing(index: SkillIndex) -> None:
    assert index.search('zebra giraffe', 5) == []
    assert index.search('the and of', 5) == []
    assert index.search('', 5) == []
    assert index.search('pdf', 0) == []
    assert SkillIndex([]).search('pdf', 5) == []


def test_limit_caps_results_and_ties_keep_library_order() -> None:
    documents = [SearchDocument(f'skill-{n}', 'Convert images.') for n in range(10)]
    hits = SkillIndex(documents).search('convert images', 3)
    assert [hit.name for hit in hits] == ['skill-0', 'skill-1', 'skill-2']


def test_rank_returns_positions_so_duplicate_names_stay_apart() -> None:
    index = SkillIndex([SearchDocument('same', 'About cats.'), SearchDocument('same', 'About dogs.')])
    assert index.rank('dogs', 2) == [(1, 1.0)]


# --------------------------------------------------------------------------------------- BM25 arithmetic


def test_bm25_weights_match_the_formula() -> None:
    # two documents: [t0 t0 t1] and [t1], the first given with t0 in two entries whose counts add up
    term_ids, counts, entries = np.array([0, 1, 0, 1]), np.array([1, 1, 1, 1]), np.array([3, 1])
    matrix = BM25Matrix.build(term_ids, counts, entries, 2, k1=1.2, b=0.75)
    scores = matrix.scores([0])
    average = 2.0
    idf = np.log1p((2 - 1 + 0.5) / (1 + 0.5))
    expected = idf * 2 * 2.2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 3 / average))
    assert scores[0] == pytest.approx(expected, rel=1e-6)
    assert scores[1] == 0
    assert matrix.best()[0] == pytest.approx(expected, rel=1e-6)
    assert matrix.scores([]).tolist() == [0.0, 0.0]


@pytest.mark.parametrize('big_count', [3, 2**60], ids=['small counts', 'counts past 32 bits'])
def test_bm25_sums_the_counts_of_repeated_term_document_pairs(big_count: int) -> None:
    # document 0: t2 in two entries, t0 once; document 1: t0 in three entries, t1 once
    term_ids, counts = np.array([2, 0, 2, 0, 1, 0, 0]), np.array([1, big_count, 2, 1, 1, 1, 1])
    matrix = BM25Matrix.build(term_ids, counts, np.array([3, 4]), 3)
    assert matrix.starts.tolist() == [0, 2, 3, 4]
    assert matrix.docs.tolist() == [0, 1, 1, 0]
    lengths, average = np.array([3 + big_count, 4]), (7 + big_count) / 2
    tf = np.array([big_count, 3, 1, 3])
    idf = np.log1p((2 - np.array([2, 2, 1, 1]) + 0.5) / (np.array([2, 2, 1, 1]) + 0.5))
    norm = 1.2 * (0.25 + 0.75 * lengths[[0, 1, 1, 0]] / average)
    assert matrix.weights == pytest.approx(idf * tf * 2.2 / (tf + norm), rel=1e-6)


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from([3, 2**16, 2**16 + 5, 2**20]))
def test_bm25_pairs_are_those_a_dict_sums_in_term_then_document_order(data: st.DataObject, n_terms: int) -> None:
    # Term ids on both sides of 2**16 (sorted by their low, then their high 16 bits), repeated within a document.
    term = st.one_of(st.integers(0, min(n_terms, 4) - 1), st.integers(max(n_terms - 3, 0), n_terms - 1))
    documents = data.draw(st.lists(st.lists(st.tuples(term, st.integers(0, 3)), max_size=8), min_size=1, max_size=6))
    term_ids = np.array([t for document in documents for t, _ in document], dtype=np.int32)
    counts = np.array([c for document in documents for _, c in document], dtype=np.int32)
    matrix = BM25Matrix.build(term_ids, counts, np.array([len(d) for d in documents]), n_terms)
    tf: dict[tuple[int, int], int] = {}
    for position, document in enumerate(documents):
        for t, c in document:
            tf[t, position] = tf.get((t, position), 0) + c
    pairs = sorted(tf)
    assert matrix.docs.dtype == np.int32
    assert matrix.starts.dtype == np.int64
    assert matrix.docs.tolist() == [position for _, position in pairs]
    assert np.diff(matrix.starts).tolist() == np.bincount([t for t, _ in pairs], minlength=n_terms).tolist()
    lengths = np.array([sum(c for _, c in document) for document in documents], dtype=np.float64)
    average = float(lengths.mean()) if lengths.sum() else 1.0
    df = np.bincount([t for t, _ in pairs], minlength=n_terms)
    terms, docs = np.array([t for t, _ in pairs], dtype=np.int64), np.array([p for _, p in pairs], dtype=np.int64)
    frequencies = np.array([tf[pair] for pair in pairs], dtype=np.float64)
    idf = np.log1p((len(documents) - df[terms] + 0.5) / (df[terms] + 0.5))
    norm = 1.2 * (0.25 + 0.75 * lengths[docs] / average)
    assert matrix.weights.tolist() == pytest.approx((idf * frequencies * 2.2 / (frequencies + norm)).tolist(), rel=1e-6)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_bm25_blocks_give_the_matrix_of_all_documents_at_once(data: st.DataObject) -> None:
    # The documents split into blocks anywhere (empty blocks and empty documents included): pairs are summed per block,
    # then merged by term, so every block boundary must leave the matrix as `build` makes it from one block.
    documents = data.draw(
        st.lists(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), max_size=6), min_size=1, max_size=8)
    )
    cuts = sorted(data.draw(st.lists(st.integers(0, len(documents)), max_size=4)))
    term_ids = [np.array([t for t, _ in d], dtype=np.int32) for d in documents]
    counts = [np.array([c for _, c in d], dtype=np.int32) for d in documents]

    def block(first: int, end: int) -> tuple[Any, Any, Any]:
        return (
            np.concatenate([np.zeros(0, np.int32), *term_ids[first:end]]),
            np.concatenate([np.zeros(0, np.int32), *counts[first:end]]),
            np.array([len(d) for d in documents[first:end]], dtype=np.int64),
        )

    whole = BM25Matrix.build(*block(0, len(documents)), 6)
    bounds = [0, *cuts, len(documents)]
    blocked = BM25Matrix.from_blocks([block(a, b) for a, b in pairwise(bounds)], 6)
    assert blocked.n_docs == whole.n_docs == len(documents)
    assert blocked.starts.tolist() == whole.starts.tolist()
    assert blocked.docs.tolist() == whole.docs.tolist()
    assert blocked.weights.tolist() == whole.weights.tolist()


def test_an_index_built_in_small_blocks_is_the_index_built_in_one(monkeypatch: pytest.MonkeyPatch) -> None:
    documents = [
        *LIBRARY,
        *(SearchDocument(f'skill-{n}', f'Handle topic {n}.', body=f'word{n} ' * n) for n in range(40)),
    ]
    whole = SkillIndex(documents)
    monkeypatch.setattr(skillshelf.ranking.lexical, '_BLOCK_ENTRIES', 8)  # dozens of blocks, skills split across none
    blocked = SkillIndex(documents)
    assert blocked.vocabulary == whole.vocabulary
    for mine, theirs in zip(blocked.matrices, whole.matrices, strict=True):
        assert mine.starts.tolist() == theirs.starts.tolist()
        assert mine.docs.tolist() == theirs.docs.tolist()
        assert mine.weights.tolist() == theirs.weights.tolist()


# --------------------------------------------------------------------------------------- library and cache


def numbered_skills(count: int) -> dict[str, tuple[str, str]]:
    """`skill-0000`, `skill-0001`...: each body has a word of its own (`word3`), and skill 7 is about kubernetes."""
    skills: dict[str, tuple[str, str]] = {}
    for n in range(count):
        topic = 'kubernetes clusters' if n == 7 else f'topic {n}'
        skills[f'skill-{n:04d}'] = (f'Handle {topic}.', f'\nBody of skill {n}, word{n}.')
    return skills


def test_library_search_finds_words_of_the_bodies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('SKILLSHELF_CACHE_DIR', 'off')
    library = SkillLibrary.build(
        options=LibraryOptions(directories=[write_library(tmp_path / 'lib', numbered_skills(12))])
    )
    assert [hit.name for hit in library.search('kubernetes', 3)] == ['skill-0007']
    assert [hit.name for hit in library.search('word3', 3)] == ['skill-0003']


def test_prepare_search_builds_the_index_before_the_first_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('SKILLSHELF_CACHE_DIR', 'off')
    library = SkillLibrary.build(
        options=LibraryOptions(directories=[write_library(tmp_path / 'lib', numbered_skills(12))])
    )
    built: list[int] = []
    build = skillshelf.library.index.lexical_index

    def counting(headlines: Sequence[SearchDocument], *args: Any) -> SkillIndex:
        built.append(len(headlines))
        return build(headlines, *args)

    monkeypatch.setattr(skillshelf.library.index, 'lexical_index', counting)
    library.prepare_search()
    assert built == [12]
    assert [hit.name for hit in library.search('word3', 3)] == ['skill-0003']
    assert built == [12]


def test_the_index_keeps_the_bodies_it_read_until_a_refresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('SKILLSHELF_CACHE_DIR', 'off')
    root = write_library(tmp_path / 'lib', numbered_skills(12))
    library = SkillLibrary.build(options=LibraryOptions(directories=[root]))
    assert [hit.name for hit in library.search('word3', 3)] == ['skill-0003']
    skill_file = root / 'skill-0003' / 'SKILL.md'
    skill_file.write_text(skill_file.read_text(encoding='utf-8').replace('word3', 'zeppelin'), encoding='utf-8')

    assert [hit.name for hit in library.search('word3', 3)] == ['skill-0003']
    assert library.search('zeppelin', 3) == []
    library.refresh()
    assert [hit.name for hit in library.search('zeppelin', 3)] == ['skill-0003']
    assert library.search('word3', 3) == []


def test_a_body_that_cannot_be_read_is_indexed_without_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('SKILLSHELF_CACHE_DIR', 'off')
    root = write_library(tmp_path / 'lib', numbered_skills(12))
    library = SkillLibrary.build(options=LibraryOptions(directories=[root]))
    (root / 'skill-0003' / 'SKILL.md').unlink()  # gone between discovery and the first search

    assert library.search('word3', 3) == []
    assert [hit.name for hit in library.search('topic 3', 1)] == ['skill-0003']  # its description is still known
    assert [hit.name for hit in library.search('word4', 3)] == ['skill-0004']


def test_large_library_index_is_cached_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / 'cache'
    monkeypatch.setenv('SKILLSHELF_CACHE_DIR', str(cache))
    assert cache_directory() == cache
    root = write_library(tmp_path / 'lib', numbered_skills(CACHE_MIN_SKILLS))

    built = SkillLibrary.build(options=LibraryOptions(directories=[root]))
    built.prepare_search()
    [cached_file] = cache.glob('index-*.npz')
    assert built.index_cache_path() == cached_file
    loaded = SkillLibrary.build(options=LibraryOptions(directories=[root]))
    with monkeypatch.context() as patch:  # no body may be read again: the index comes from the file
        patch.setattr(skillshelf.library.index, '_body', lambda *args: pytest.fail('indexed again'))  # pyright: ignore[reportUnknownLambdaType]
        loaded.prepare_search()
    for query in ('kubernetes', 'word42', 'topic 199'):
        assert loaded.search(query, 5) == built.search(query, 5)
    assert vocabulary(loaded) == vocabulary(built)

    # Editing a SKILL.md changes the key: the stale file is not used.
    skill_file = root / 'skill-0042' / 'SKILL.md'
    skill_file.write_text(skill_file.read_text(encoding='utf-8').replace('word42', 'zeppelin'), encoding='utf-8')
    fresh = SkillLibrary.build(options=LibraryOptions(directories=[root]))
    assert [hit.name for hit in fresh.search('zeppelin', 1)] == ['skill-0042']
    assert len(list(cache.glob('index-*.npz'))) == 2


def vocabulary(library: SkillLibrary) -> dict[str, int]:
    index = library._search_index.lexical  # pyright: ignore[reportPrivateUsage]
    assert index is not None
    return index.vocabulary


def test_python_skills_are_part_of_the_index_cache_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('SKILLSHELF_CACHE_DIR', str(tmp_path / 'cache'))
    root = write_library(tmp_path / 'lib', numbered_skills(CACHE_MIN_SKILLS))

    def library(instructions: str) -> SkillLibrary:
        weather = Skill(name='weather', description='Weather forecasts.', instructions=instructions)
        return SkillLibrary.build([weather], LibraryOptions(directories=[root]))

    first = library('Call the forecast API.')
    assert [hit.name for hit in first.search('forecast api', 1)] == ['weather']
    changed = library('Read the barometer.')
    assert changed.index_cache_path() != first.index_cache_path()
    assert [hit.name for hit in changed.search('barometer', 1)] == ['weather']
    assert (
        SkillLibrary.build(
            options=LibraryOptions(directories=[write_library(tmp_path / 'small', numbered_skills(3))])
        ).index_cache_path()
        is None
    )


def test_one_library_has_one_index_cache_however_its_directory_is_spelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('SKILLSHELF_CACHE_DIR', str(tmp_path / 'cache'))
    root = write_library(tmp_path / 'work' / 'lib', numbered_skills(CACHE_MIN_SKILLS))
    monkeypatch.chdir(tmp_path / 'work')
    spellings = [root, Path('lib'), Path('./lib/'), tmp_path / 'work' / '..' / 'work' / 'lib']
    paths = {
        SkillLibrary.build(options=LibraryOptions(directories=[spelling])).index_cache_path() for spelling in spellings
    }
    assert len(paths) == 1
    [path] = paths
    assert path is not None
    # The key names each file by its absolute path: the same relative spelling elsewhere is another library.
    other = write_library(tmp_path / 'elsewhere' / 'lib', numbered_skills(CACHE_MIN_SKILLS))
    monkeypatch.chdir(other.parent)
    assert SkillLibrary.build(options=LibraryOptions(directories=[Path('lib')])).index_cache_path() != path


def _rewritten(name: str, change: Callable[[Any], Any]) -> Callable[[bytes], bytes]:
    """A corruption: the file with one array changed, written as skillshelf writes it (a valid file, wrong contents)."""

    def corrupt(data: bytes) -> bytes:
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            arrays = {key: stored[key] for key in stored.files}
        arrays[name] = change(arrays[name])
        written = io.BytesIO()
        np.savez(written, allow_pickle=True, **arrays)
        return written.getvalue()

    return corrupt


def _without(name: str) -> Callable[[bytes], bytes]:
    def corrupt(data: bytes) -> bytes:
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            arrays = {key: stored[key] for key in stored.files if key != name}
        written = io.BytesIO()
        np.savez(written, **arrays)
        return written.getvalue()

    return corrupt


def _flipped_byte(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]


@pytest.mark.parametrize(
    'corrupt',
    [
        lambda data: b'not an index file',
        lambda data: data[: len(data) // 2],
        _flipped_byte,
        _without('head_weights'),
        _rewritten('whole_docs', lambda docs: docs + 1),
        _rewritten('whole_docs', lambda docs: docs.astype(np.float64)),
        _rewritten('whole_weights', lambda weights: np.array([object()] * len(weights))),
        _rewritten('terms', lambda terms: np.frombuffer(b'\xff\xfe' + terms.tobytes(), dtype=np.uint8)),
        _rewritten('whole_starts', lambda starts: starts[::-1].copy()),
    ],
    ids=[
        'other file',
        'cut in half',
        'a flipped byte',
        'an array missing',
        'skill id out of range',
        'floats for skill ids',
        'object dtype (pickled)',
        'terms not UTF-8',
        'offsets out of order',
    ],
)
def test_a_corrupt_cache_file_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corrupt: Callable[[bytes], bytes]
) -> None:
    cache = tmp_path / 'cache'
    monkeypatch.setenv('SKILLSHELF_CACHE_DIR', str(cache))
    root = write_library(tmp_path / 'lib', numbered_skills(CACHE_MIN_SKILLS))
    SkillLibrary.build(options=LibraryOptions(directories=[root])).prepare_search()
    [cached] = cache.glob('index-*.npz')
    damaged = corrupt(cached.read_bytes())
    assert damaged != cached.read_bytes()
    cached.write_bytes(damaged)

    assert [
        hit.name for hit in SkillLibrary.build(options=LibraryOptions(directories=[root])).search('kubernetes', 1)
    ] == ['skill-0007']
    # The rebuilt index replaced the damaged file, and the next process loads it.
    with np.load(cached, allow_pickle=False) as rewritten:
        assert rewritten['whole_docs'].dtype == np.int32
    assert [hit.name for hit in SkillLibrary.build(options=LibraryOptions(directories=[root])).search('word42', 1)] == [
        'skill-0042'
    ]


def test_cache_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('SKILLSHELF_CACHE_DIR', 'off')
    assert cache_directory() is None


def test_the_first_search_imports_no_module(tmp_path: Path) -> None:
    # Every module an index build uses is imported with skillshelf: one imported at the first search (as `np.unique`
    # imported `numpy.ma`, 9 ms) is paid inside every cold start.
    for number in range(3):
        write_skill(
            tmp_path / 'skills', f'skill-{number}', f'Body {number} of a skill.', description=f'Skill {number}.'
        )
    probe = (
        'import sys\n'
        'from pathlib import Path\n'
        'from skillshelf import LibraryOptions, SkillLibrary\n'
        'before = set(sys.modules)\n'
        f'library = SkillLibrary.build(options=LibraryOptions(directories=[Path({str(tmp_path / "skills")!r})]))\n'
        "assert library.search('skill body', 3)\n"
        'print(sorted(set(sys.modules) - before))\n'
    )
    completed = subprocess.run(
        [sys.executable, '-c', probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, 'SKILLSHELF_CACHE_DIR': 'off'},
    )
    assert completed.stdout.strip() == '[]'


def test_large_library_example_finds_and_loads_skills_offline() -> None:
    completed = subprocess.run(
        [sys.executable, str(REPO / 'examples' / 'large_library.py'), '--count', '300'],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, 'SKILLSHELF_CACHE_DIR': 'off'},
    )
    output = completed.stdout
    assert 'library: 300 skill folders' in output
    assert 'model  -> load_skill({"name": "optimise-postgres"})' in output
    assert 'model  -> load_skill({"name": "release-notes"})' in output
    assert 'model  -> load_skill({"name": "代码审查"})' in output


# --------------------------------------------------------------------------------------- optional semantic extra


def bag_of_words_encoder(texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """A stand-in for the sentence model: hashed, L2-normalised bags of stemmed words (synonyms mapped)."""
    synonyms = {'photo': 'imag', 'pictur': 'imag', 'shrink': 'compress'}
    vectors = np.zeros((len(texts), 256), dtype=np.float32)
    for row, text in enumerate(texts):
        for term in tokenize(text):
            vectors[row, zlib.crc32(synonyms.get(term, term).encode()) % 256] += 1
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1, norms)).astype(np.float32)


SEMANTIC_LIBRARY = [
    SearchDocument('image-compress', 'Compress image files.'),
    SearchDocument('pdf-merge', 'Merge PDF files into one.'),
]


def test_hybrid_finds_a_paraphrase_lexical_search_misses() -> None:
    lexical = SkillIndex(SEMANTIC_LIBRARY)
    hybrid = HybridIndex(SEMANTIC_LIBRARY, encoder=bag_of_words_encoder)
    assert lexical.search('shrink my photos', 2, threshold=0) == []
    assert [hit.name for hit in hybrid.search('shrink my photos', 2, threshold=0)][:1] == ['image-compress']


def test_hybrid_with_full_lexical_weight_ranks_like_the_lexical_engine() -> None:
    hybrid = HybridIndex(LIBRARY, encoder=bag_of_words_encoder, lexical_weight=1.0)
    lexical = SkillIndex(LIBRARY)
    for query in ('fill a PDF form', 'review the pull request', 'matplotlib'):
        assert hybrid.search(query, 3, threshold=0) == lexical.search(query, 3, threshold=0)


def test_hybrid_scores_stay_in_unit_range() -> None:
    hybrid = HybridIndex(LIBRARY, encoder=bag_of_words_encoder)
    scores = hybrid.scores('review pull request bugs')
    assert scores.shape == (len(LIBRARY),)
    assert float(scores.min()) >= 0
    assert float(scores.max()) <= 1
