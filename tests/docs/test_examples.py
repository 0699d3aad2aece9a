"""The examples run offline and show what the README promises."""

from __future__ import annotations

import shutil
import subprocess
import sys

from repo_paths import REPO


def run_example(name: str) -> str:
    completed = subprocess.run(
        [sys.executable, str(REPO / 'examples' / name)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd='/',
    )
    return completed.stdout


def test_quickstart_shows_catalog_search_load_tool_call_unload_and_sizes() -> None:
    completed = subprocess.run(
        [sys.executable, str(REPO / 'examples' / 'quickstart.py')],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    output = completed.stdout
    expected_in_order = [
        'Catalog in the instructions',
        '- weather: Current weather, forecasts and alerts for a city.',
        'model  -> search_skills({"query":"weather forecast for a city"})',
        'model  -> load_skill({"name":"weather"})',
        "tool   <- Loaded skill 'weather'.",
        'model  -> get_forecast({"city":"Lisbon","days":2})',
        'tool   <- Lisbon: day 1: sunny, 21 °C; day 2: sunny, 22 °C',
        'model  -> unload_skill({"name":"weather"})',
        'request 1:',
        'every skill in context instead:',
    ]
    positions = [output.find(text) for text in expected_in_order]
    assert -1 not in positions, [text for text, at in zip(expected_in_order, positions, strict=True) if at == -1]
    assert positions == sorted(positions)


def test_spec_agent_builds_from_yaml_with_a_python_skill_by_import_path() -> None:
    output = run_example('spec_agent.py')
    assert output.startswith('Skills from the spec: weather, commit-messages, csv-analysis,')
    assert 'model -> get_alerts({"city":"Madrid"})' in output


def test_markdown_skill_example_reads_a_bundled_file() -> None:
    output = run_example('markdown_skill.py')
    assert 'model -> read_skill_resource({"name":"sql-review","path":"references/checklist.md"})' in output
    assert 'tool  <- # SQL review checklist' in output


def test_wordllama_encoder_example_ranks_with_a_real_wordllama_model() -> None:
    output = run_example('wordllama_encoder.py')
    first = {'lexical': [], 'hybrid': []}
    for line in output.splitlines():
        method, _, ranked = line.strip().partition(' ')
        if method in first:
            first[method].append(ranked.split()[0])
    # The second paraphrase misleads the lexical ranking and the embeddings put the right skill first. The third
    # misleads both: these skills run to 160-220 words, so their similarity gets only part of the dense share.
    assert first == {
        'lexical': ['sql-review', 'http-api-design', 'csv-analysis'],
        'hybrid': ['sql-review', 'release-notes', 'csv-analysis'],
    }


def test_skill_script_example_profiles_a_csv_with_the_bundled_script() -> None:
    output = run_example('skill_script.py') if shutil.which('bwrap') else run_example_local('skill_script.py')
    assert 'model -> run_skill_script({"name":"csv-analysis","script":"scripts/profile.py"' in output
    assert 'tool  <- scripts/profile.py exited with code 0.' in output
    assert 'amount: numeric, 1 missing, min 45.5, median 80.0, max 120.0' in output


def run_example_local(name: str) -> str:
    completed = subprocess.run(
        [sys.executable, str(REPO / 'examples' / name), '--local'],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return completed.stdout


def test_document_workflow_example_edits_a_word_file_the_application_put_in_and_reads_back() -> None:
    sandboxed = shutil.which('bwrap') is not None
    name = 'document_workflow.py'
    output = run_example(name) if sandboxed else run_example_local(name)
    expected_in_order = [
        'model -> run_skill_script({"name":"docx-text","script":"scripts/unpack.py","args":["letter.docx","letter"]})',
        'unpacked [Content_Types].xml, _rels/.rels, word/document.xml',
        '3\t<w:p><w:r><w:t>The review meeting is on Monday at 10:00.</w:t></w:r></w:p>',
        "tool  <- Edited 'letter/word/document.xml'.",
        'packed 3 parts into letter-new.docx',
        'before: The review meeting is on Monday at 10:00.',
        'after : The review meeting is on Thursday at 10:00.',
    ]
    positions = [output.find(text) for text in expected_in_order]
    assert -1 not in positions, [text for text, at in zip(expected_in_order, positions, strict=True) if at == -1]
    assert positions == sorted(positions)
    if sandboxed:
        assert output.endswith('in the conversation folder: letter, letter-new.docx, letter.docx\n')
    local = run_example_local(name)
    assert 'after : The review meeting is on Thursday at 10:00.' in local
