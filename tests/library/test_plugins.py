"""Claude Code plugins given as a library directory: a plugin folder, a folder of plugins and a marketplace, their
skills named `plugin:skill` and loaded (and invoked by a user) on real agent runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent

from skillshelf import LibraryOptions, Skill, SkillLibrary, Skills, SkillWarning

from scripted_model import Script, call, tool_returns
from skill_files import write_skill
from warnings_said import said


def manifest(folder: Path, data: dict[str, Any], name: str = 'plugin.json') -> None:
    (folder / '.claude-plugin').mkdir(parents=True, exist_ok=True)
    (folder / '.claude-plugin' / name).write_text(json.dumps(data), encoding='utf-8')


def plugin(folder: Path, name: str | None, *skills: str) -> Path:
    """A plugin folder with `skills/<skill>/SKILL.md` for each of `skills`, its manifest naming it `name`."""
    for skill in skills:
        write_skill(folder / 'skills', skill, f'Do {skill} the {folder.name} way.', description=f'Does {skill}.')
    manifest(folder, {} if name is None else {'name': name, 'version': '1.0.0'})
    return folder


def build(directory: Path, **options: Any) -> SkillLibrary:
    return SkillLibrary.build(options=LibraryOptions(directories=[directory], **options))


def test_a_plugin_folder_names_its_skills_after_the_plugin_and_a_model_and_a_user_load_them(tmp_path: Path) -> None:
    root = plugin(tmp_path / 'office-plugin', 'office', 'pdf', 'xlsx')
    assert list(build(root).skills) == ['office:pdf', 'office:xlsx']
    script = Script([[call('load_skill', name='office:xlsx')]])
    result = Agent(script.model(), capabilities=[Skills(root)]).run_sync('/office:pdf invoice.pdf')
    user, model = tool_returns(result.all_messages(), 'load_skill')
    assert user.startswith("Loaded skill 'office:pdf'.")
    assert 'Do pdf the office-plugin way.' in user
    assert 'invoice.pdf' in user
    assert model.startswith("Loaded skill 'office:xlsx'.")
    assert '- office:pdf: Does pdf.' in str(script.requests[0].instructions)


def test_a_manifest_adds_skill_folders_inside_the_plugin_only_and_its_folder_names_a_plugin_without_one(
    tmp_path: Path,
) -> None:
    root = plugin(tmp_path / 'kit', None, 'lint')
    write_skill(root / 'extra', 'format', 'Format it.', description='Formats code.')
    write_skill(tmp_path / 'elsewhere', 'secret', 'Read it.', description='Reads secrets.')
    manifest(root, {'skills': ['./extra', '../elsewhere', './skills/lint', './missing']})
    with pytest.warns(SkillWarning) as caught:
        library = build(root)
    assert list(library.skills) == ['kit:lint', 'kit:format']  # skills/ by default, and what the manifest adds
    problems = ' '.join(said(caught))
    assert "lists skills outside its folder: '../elsewhere'" in problems
    assert "lists skills in './missing', which is no folder" in problems


def test_a_folder_of_plugins_loads_two_skills_of_one_name_side_by_side(tmp_path: Path) -> None:
    plugin(tmp_path / 'plugins' / 'one', 'alpha', 'review')
    plugin(tmp_path / 'plugins' / 'two', 'beta', 'review')
    assert list(build(tmp_path / 'plugins').skills) == ['alpha:review', 'beta:review']


def test_a_marketplace_lists_local_plugins_reports_remote_ones_and_edits_are_picked_up(tmp_path: Path) -> None:
    market = tmp_path / 'market'
    plugin(market / 'plugins' / 'tools', 'tools', 'grep')
    docs = plugin(market / 'plugins' / 'docs', 'docs', 'one', 'two')
    entries = [
        {'name': 'tools', 'source': './plugins/tools'},
        {'name': 'docs', 'source': './plugins/docs', 'skills': ['./skills/one']},  # the entry's list replaces skills/
        {'name': 'remote', 'source': {'source': 'github', 'repo': 'someone/plugin'}},
    ]
    manifest(market, {'name': 'market', 'plugins': entries}, 'marketplace.json')
    with pytest.warns(SkillWarning, match="the plugin 'remote' comes from"):
        library = build(market)
    assert list(library.skills) == ['tools:grep', 'docs:one']
    write_skill(docs / 'skills', 'three', 'Three.', description='Does three.')
    entries[1]['skills'] = ['./skills/one', './skills/three']
    manifest(market, {'name': 'market', 'plugins': entries}, 'marketplace.json')
    assert library.refresh()  # the manifest changed: read again (the remote plugin was reported already)
    assert list(library.skills) == ['tools:grep', 'docs:one', 'docs:three']


def test_a_marketplace_of_its_own_repository_is_read_as_the_repository_under_plain_names(tmp_path: Path) -> None:
    # Anthropic's skills repository: every plugin's source is the repository itself, listing its own skills/.
    root = tmp_path / 'anthropic-like'
    write_skill(root / 'skills', 'pdf', 'Fill forms.', description='Fills PDF forms.')
    write_skill(root / 'skills', 'xlsx', 'Make sheets.', description='Makes spreadsheets.')
    entries = [
        {'name': 'document-skills', 'source': './', 'strict': False, 'skills': ['./skills/pdf', './skills/xlsx']}
    ]
    manifest(root, {'name': 'anthropic-agent-skills', 'plugins': entries}, 'marketplace.json')
    assert list(build(root).skills) == ['pdf', 'xlsx']


def test_a_trusted_plugin_imports_declared_tools_and_plugin_names_follow_the_naming_rules(tmp_path: Path) -> None:
    root = plugin(tmp_path / 'p', 'Bad Name', 'x')
    with pytest.warns(SkillWarning, match="the plugin name 'Bad Name' cannot name skills"):
        assert list(build(root).skills) == []
    assert Skill('alpha:beta', 'A plugin skill made in Python.').name == 'alpha:beta'
    with pytest.raises(Exception, match='in the plugin skill name'):
        Skill('alpha:Beta', 'Bad.')
