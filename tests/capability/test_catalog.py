"""The catalog stays within its budget and degrades in a predictable order."""

from __future__ import annotations

import re

import pytest
from inline_snapshot import snapshot

from skillshelf import CatalogEntry, SkillError, Skills, render_catalog

ENTRIES = [CatalogEntry(f'skill-{i:03}', f'Does task number {i} ' + 'with a long explanation ' * 25) for i in range(40)]


def test_whole_descriptions_when_they_fit_then_cut_at_a_word_boundary() -> None:
    whole = render_catalog(ENTRIES[:2], budget=10_000)
    assert whole.splitlines()[-1] == f'- skill-001: {ENTRIES[1].description.strip()}'

    catalog = render_catalog(ENTRIES[:30], budget=10_000)
    assert 9_500 < len(catalog) <= 10_000  # the budget is used, not left idle
    cuts = [line.removeprefix(f'- skill-{i:03}: ') for i, line in enumerate(catalog.splitlines()[-30:])]
    assert all(cut.endswith('…') and ENTRIES[i].description.startswith(cut[:-1] + ' ') for i, cut in enumerate(cuts))
    assert max(map(len, cuts)) - min(map(len, cuts)) <= len(' explanation')  # shared alike, cut at a word


def test_shorter_descriptions_then_names_then_a_pointer_as_the_budget_shrinks() -> None:
    forms = [render_catalog(ENTRIES, budget) for budget in (20_000, 5_000, 1_000, 400)]

    assert all(len(text) <= budget for text, budget in zip(forms, (20_000, 5_000, 1_000, 400), strict=True))
    assert forms[0].count('with a long explanation') > forms[1].count('with a long explanation') > 0
    assert forms[2].endswith('skill-039.')
    assert 'Does task' not in forms[2]
    assert forms[3].endswith('The library is too large to list here: call `search_skills` to find skills.')


def test_the_names_form_is_used_down_to_the_last_character_of_budget() -> None:
    names = render_catalog(ENTRIES, 1_000)
    assert render_catalog(ENTRIES, len(names)) == names
    assert render_catalog(ENTRIES, len(names) - 1).endswith('call `search_skills` to find skills.')


def test_the_catalog_is_a_pure_function_of_its_entries() -> None:
    assert render_catalog(ENTRIES, 5_000) == render_catalog(list(ENTRIES), 5_000)


def test_an_empty_library_still_explains_the_tools() -> None:
    assert render_catalog([]) == snapshot(
        'You have 0 skills. Load one with `load_skill` only when the task needs it; run its scripts rather than '
        'rewriting them, and say which skill you use. `search_skills` finds skills by task.'
    )


def test_when_to_use_joins_the_description_only_in_the_full_form() -> None:
    entry = CatalogEntry('pdf', 'Fill PDF forms.', {'when_to_use': 'Use when a user sends a PDF form.'})
    assert render_catalog([entry]).endswith('- pdf: Fill PDF forms. Use when a user sends a PDF form.')
    shorter = render_catalog([entry, *ENTRIES[:30]], budget=10_000)
    assert '- pdf: Fill PDF forms.\n' in shorter


def test_a_custom_header_and_entry_template_show_the_fields_asked_for() -> None:
    entries = [
        CatalogEntry('release-notes', 'Write release notes.', {'argument-hint': '[version]', 'license': 'MIT'}),
        CatalogEntry('summarise', 'Summarise a text.'),
    ]
    text = render_catalog(entries, header='Team skills ({count}):', entry='* {name} {argument-hint} - {description}')
    assert text == snapshot("""\
Team skills (2):

* release-notes [version] - Write release notes.
* summarise - Summarise a text.\
""")


@pytest.mark.parametrize(
    ('template', 'problem'),
    [('- {description}', 'must show `{name}`'), ('- {name', 'not a valid template'), ('{0} {name}', 'not a valid')],
)
def test_a_broken_entry_template_is_refused_with_the_option_named(template: str, problem: str) -> None:
    with pytest.raises(SkillError, match=re.escape(problem)):
        Skills(catalog_entry=template)
