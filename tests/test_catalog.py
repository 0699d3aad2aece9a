"""The catalog stays within its budget and degrades in a predictable order."""

from __future__ import annotations

from inline_snapshot import snapshot

from skillshelf import CatalogEntry, render_catalog

ENTRIES = [CatalogEntry(f'skill-{i:03}', f'Does task number {i} ' + 'with a long explanation ' * 10) for i in range(40)]


def test_full_descriptions_when_they_fit_cut_at_a_word_boundary() -> None:
    text = render_catalog(ENTRIES[:2], budget=10_000)
    last_line = text.splitlines()[-1]
    assert last_line.startswith('- skill-001: Does task number 1 with a long explanation')
    assert last_line.endswith('with a long…')
    assert len(last_line) <= len('- skill-001: ') + 250


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
    assert render_catalog([]) == snapshot("""\
You have 0 skills: instructions and tools you can load when a task needs them.
Call `search_skills` to find skills, `load_skill` to read a skill and unlock its tools (usable from your next response), `read_skill_resource` for its files, and `unload_skill` when you are done with it.\
""")
