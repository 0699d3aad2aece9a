"""The shapes of the public skill libraries people install, rebuilt from our own fixtures: the same layout and the same
frontmatter quirks as Anthropic's `skills`, OpenAI's `skills`, obra/superpowers and Vercel's `agent-skills`, with
none of their text. Each loads as Claude Code or Codex would load it, says what deviates from the format, and
works in a real run.
"""

from __future__ import annotations

import json
import subprocess
import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import TextPart

from skillshelf import GitSource, LibraryOptions, SkillError, SkillFormatWarning, SkillLibrary, Skills

from scripted_model import Script, call, tool_returns
from warnings_said import said

LONG_DESCRIPTION = (
    'Reference for building with the Example API and SDK: model ids, prices, parameters, streaming, tool use,\n'
    + 'TRIGGER when the code imports the example SDK or the user asks about the Example API; '
    + 'read this skill before opening the file, even for a one-line change. ' * 11
    + '\nSKIP only when another provider is in use (this overrides every trigger above).'
)


def skill(folder: Path, frontmatter: str, body: str = 'Follow the steps.', files: dict[str, str] | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / 'SKILL.md').write_text(f'---\n{frontmatter}\n---\n\n{body}\n', encoding='utf-8')
    for name, text in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding='utf-8')


def git_repository(path: Path) -> Path:
    for arguments in (
        ['init', '-q', '-b', 'main'],
        ['config', 'user.email', 'test@example.com'],
        ['config', 'user.name', 'Test'],
        ['add', '.'],
        ['commit', '-q', '-m', 'skills'],
    ):
        subprocess.run(['git', *arguments], cwd=path, check=True, capture_output=True)
    return path


def build(*directories: Path, **options: Any) -> tuple[SkillLibrary, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        library = SkillLibrary.build(options=LibraryOptions(directories=directories, **options))
    return library, said(caught)


def run(capability: Skills[Any], prompt: str, *steps: list[Any]) -> tuple[Script, list[Any]]:
    script = Script([*steps, [TextPart('done')]])
    result = Agent(script.model(), capabilities=[capability]).run_sync(prompt)
    return script, tool_returns(result.all_messages(), 'load_skill')


# --- Anthropic: skills/<name>/ with LICENSE.txt, one 1,000+ character description, a template at the root ----------


def anthropic_like(root: Path) -> Path:
    license_text = 'Complete terms in LICENSE.txt'
    skill(
        root / 'skills' / 'example-api',
        f'name: example-api\ndescription: |-\n  {LONG_DESCRIPTION.replace(chr(10), chr(10) + "  ")}\nlicense: {license_text}',
        '# Building with the Example API\n\n| model | input | output |\n|---|---|---|\n| big | $5.00 | $25.00 |\n'
        '| small | $1.00 | $5.00 |',
        {'LICENSE.txt': 'Terms.\n', 'shared/models.md': 'Model list.\n'},
    )
    skill(
        root / 'skills' / 'forms',
        'name: forms\ndescription: "Use this skill whenever the user wants to fill in a form: read its fields, write '
        'the values, check the result."\nlicense: Proprietary. LICENSE.txt has complete terms',
        'Run `python scripts/check_fields.py form.bin` from this folder. See FORMS.md.',
        {
            'LICENSE.txt': 'All rights reserved.\n',
            'forms.md': 'Field guide.\n',
            'scripts/check_fields.py': 'print(1)\n',
        },
    )
    skill(
        root / 'skills' / 'slides',
        'name: slides\ndescription: Build slide decks. Use when the user asks for a presentation.\nlicense: '
        + license_text,
        'Write the deck.',
        {'LICENSE.txt': 'Terms.\n'},
    )
    skill(root / 'template', 'name: template-skill\ndescription: Replace with a description of the skill.')
    (root / 'spec').mkdir()
    (root / 'spec' / 'agent-skills-spec.md').write_text('# The spec\n', encoding='utf-8')
    (root / 'THIRD_PARTY_NOTICES.md').write_text('Notices.\n', encoding='utf-8')
    (root / 'README.md').write_text('# Skills\n', encoding='utf-8')
    (root / '.claude-plugin').mkdir()
    (root / '.claude-plugin' / 'marketplace.json').write_text(
        json.dumps({'plugins': [{'name': 'document-skills', 'source': './', 'skills': ['./skills/forms']}]}),
        encoding='utf-8',
    )
    return root


def test_an_anthropic_shaped_library_loads_whole_and_reports_the_long_description(tmp_path: Path) -> None:
    root = anthropic_like(tmp_path / 'anthropic')
    library, warned = build(root / 'skills')
    assert list(library.skills) == ['example-api', 'forms', 'slides']
    assert warned == [
        f'{root / "skills" / "example-api" / "SKILL.md"}: the description is {len(LONG_DESCRIPTION)} characters; '
        'the format allows 1024, so catalogs may shorten it (and Codex skips the skill)'
    ]
    assert library.skills['example-api'].description == LONG_DESCRIPTION
    with pytest.raises(SkillError, match='the description is'):
        build(root / 'skills', strict=True)

    # The repository as a git source: its `skills/` folder is found without a `subdirectory`.
    repository = git_repository(root)
    library, warned = build(sources=[GitSource(str(repository), cache_dir=tmp_path / 'cache')])
    assert list(library.skills) == ['example-api', 'forms', 'slides']
    assert len(warned) == 1

    # The model loads it with no arguments: the price table arrives as written.
    with pytest.warns(SkillFormatWarning):
        capability = Skills[None](root / 'skills')
    _, [loaded] = run(capability, 'what does the big model cost?', [call('load_skill', name='example-api')])
    assert '| big | $5.00 | $25.00 |' in loaded
    assert 'shared/models.md' in loaded


# --- OpenAI: every skill in a hidden folder, with agents/openai.yaml ------------------------------------------------


def openai_like(root: Path) -> Path:
    skills = root / 'skills'
    interface = (
        'interface:\n  display_name: "{0}"\n  short_description: "{0} for Codex"\n  default_prompt: "Use ${1}."\n'
    )
    for tier, name, description in [
        ('.curated', 'gh-fix-ci', 'Inspect failing GitHub checks and fix them. Use when CI is red on a PR.'),
        ('.curated', 'notion-capture', 'Capture notes into Notion. Use when asked to save knowledge.'),
        ('.experimental', 'create-plan', 'Create a short plan before coding. Use when asked to plan.'),
        ('.system', 'skill-creator', 'Create or update a skill. Use when asked to make a skill.'),
        ('.system', 'skill-installer', 'Install skills from a list or a repository. Use when asked to install one.'),
    ]:
        title = name.replace('-', ' ').title()
        skill(
            skills / tier / name,
            f'name: {name}\ndescription: {description}\nmetadata:\n  short-description: {title}',
            f'# {title}\n\nRun `python "<path-to-skill>/scripts/run.py"`; write to `$CODEX_HOME/skills`.',
            {'agents/openai.yaml': interface.format(title, name), 'scripts/run.py': 'print("ok")\n'},
        )
    (root / 'README.md').write_text('# Skills\n', encoding='utf-8')
    (root / 'CLA.md').write_text('# Contributor agreement\n', encoding='utf-8')
    return skills


def test_an_openai_shaped_library_says_its_skills_are_in_hidden_folders(tmp_path: Path) -> None:
    skills = openai_like(tmp_path / 'openai')
    library, warned = build(skills)
    assert library.skills == {}
    assert warned == [
        f'skipped {skills}: no skill was found in the directory; its hidden folders .curated, .experimental, .system '
        f'hold skill folders, and hidden folders are not read: list each as a directory (e.g. '
        f'{str(skills / ".curated")!r})'
    ]
    with pytest.raises(SkillError, match='hidden folders'):
        build(skills, strict=True)

    tiers = [skills / '.curated', skills / '.system', skills / '.experimental']
    library, warned = build(*tiers, strict=True)
    assert list(library.skills) == ['gh-fix-ci', 'notion-capture', 'skill-creator', 'skill-installer', 'create-plan']
    assert library.skills['gh-fix-ci'].metadata['short-description'] == 'Gh Fix Ci'
    assert warned == []

    repository = git_repository(tmp_path / 'openai')
    curated = GitSource(str(repository), subdirectory='skills/.curated', cache_dir=tmp_path / 'cache')
    library, _ = build(sources=[curated])
    assert list(library.skills) == ['gh-fix-ci', 'notion-capture']

    script, [loaded] = run(Skills[None](tiers), 'CI is red on my PR', [call('load_skill', name='gh-fix-ci')])
    assert (script.requests[0].instructions or '').startswith('You have 5 skills')
    assert '$CODEX_HOME/skills' in loaded
    assert 'agents/openai.yaml' in loaded


# --- obra/superpowers: skills/<name>/ flat, plugin manifests for many tools, shell examples in fenced blocks --------


def superpowers_like(root: Path) -> Path:
    skill(
        root / 'skills' / 'brainstorming',
        'name: brainstorming\ndescription: "You MUST use this before any creative work: features, components, '
        'behaviour changes."',
        'Ask one question at a time. The visual companion is in skills/brainstorming/visual-companion.md.',
        {'visual-companion.md': 'Open the companion.\n', 'scripts/start-server.sh': '#!/usr/bin/env bash\necho up\n'},
    )
    skill(
        root / 'skills' / 'requesting-code-review',
        'name: requesting-code-review\ndescription: Use when completing tasks or before merging, to check the work '
        'meets requirements.',
        '## Example\n\n```\nBASE_SHA=$(git log --oneline | grep "Task 1" | head -1 | awk \'{print $1}\')\n'
        'HEAD_SHA=$(git rev-parse HEAD)\n```\n\nReview $ARGUMENTS against the plan.',
        {'code-reviewer.md': 'The reviewer prompt.\n'},
    )
    skill(
        root / 'skills' / 'subagent-driven-development',
        'name: subagent-driven-development\ndescription: Use when executing a plan with independent tasks in this '
        'session.',
        'Dispatch a reviewer with [the prompt](../requesting-code-review/code-reviewer.md). Run `scripts/task-brief`.',
        {'scripts/task-brief': '#!/usr/bin/env bash\necho brief\n'},
    )
    for manifest in ('.claude-plugin/plugin.json', '.codex-plugin/plugin.json', '.cursor-plugin/plugin.json'):
        (root / manifest).parent.mkdir(parents=True, exist_ok=True)
        (root / manifest).write_text(json.dumps({'name': 'superpowers', 'skills': './skills/'}), encoding='utf-8')
    (root / 'hooks').mkdir()
    (root / 'hooks' / 'session-start').write_text('#!/usr/bin/env bash\n', encoding='utf-8')
    (root / 'CLAUDE.md').write_text('# Contributing\n', encoding='utf-8')
    (root / 'AGENTS.md').symlink_to('CLAUDE.md')
    (root / 'RELEASE-NOTES.md').write_text('# Releases\n', encoding='utf-8')
    return root


def test_a_superpowers_shaped_library_keeps_its_shell_examples_intact(tmp_path: Path) -> None:
    root = superpowers_like(tmp_path / 'superpowers')
    library, warned = build(root / 'skills', strict=True)
    assert list(library.skills) == ['brainstorming', 'requesting-code-review', 'subagent-driven-development']
    assert warned == []

    repository = git_repository(root)
    library, warned = build(sources=[GitSource(str(repository), cache_dir=tmp_path / 'cache')], strict=True)
    assert len(library.skills) == 3

    # The user invokes it with two words: `$1` in the fenced example is awk's field, not the second word.
    script, [loaded] = run(Skills[None](root / 'skills'), '/requesting-code-review alpha beta')
    assert len(script.requests) == 1
    assert "awk '{print $1}'" in loaded
    assert 'Review alpha beta against the plan.' in loaded


# --- Vercel: names that differ from their folders, metadata.argument-hint, packed copies beside the folders -------


def vercel_like(root: Path) -> Path:
    skills = root / 'skills'
    metadata = "metadata:\n  author: example\n  version: '1.0.0'"
    skill(
        skills / 'composition-patterns',
        'name: vercel-composition-patterns\ndescription:\n  React composition patterns that scale. Use when\n'
        f'  refactoring components with many boolean props.\nlicense: MIT\n{metadata}',
        '# Composition Patterns\n\nPrefer compound components.',
        {'rules/compound.md': '---\ntitle: Compound components\nimpact: HIGH\n---\nUse them.\n'},
    )
    skill(
        skills / 'react-best-practices',
        f'name: vercel-react-best-practices\ndescription: React performance rules. Use when writing React.\n{metadata}',
        'Read AGENTS.md.',
        {'AGENTS.md': 'Compiled rules.\n'},
    )
    skill(
        skills / 'deploy-to-vercel',
        f'name: deploy-to-vercel\ndescription: Deploy the project. Use when asked to deploy it.\n{metadata}',
        'Claude Code: `bash ~/.claude/skills/deploy-to-vercel/resources/deploy.sh`.',
        {'resources/deploy.sh': '#!/bin/bash\necho deploy\n'},
    )
    (skills / 'deploy-to-vercel' / 'Archive.zip').write_bytes(b'PK\x05\x06' + bytes(18))
    skill(
        skills / 'web-design-guidelines',
        'name: web-design-guidelines\ndescription: Review UI code against web interface guidelines. Use when asked '
        f'to review my UI.\n{metadata}\n  argument-hint: <file-or-pattern>',
        'Review $ARGUMENTS.',
    )
    for packed in ('composition-patterns', 'react-best-practices', 'deploy-to-vercel', 'web-design-guidelines'):
        (skills / f'{packed}.zip').write_bytes(b'PK\x05\x06' + bytes(18))
    (root / 'packages' / 'builder').mkdir(parents=True)
    (root / 'AGENTS.md').write_text('# Agents\n', encoding='utf-8')
    (root / 'CLAUDE.md').symlink_to('AGENTS.md')
    return skills


def test_a_vercel_shaped_library_loads_every_skill_under_its_frontmatter_name(tmp_path: Path) -> None:
    skills = vercel_like(tmp_path / 'vercel')
    library, warned = build(skills)
    assert sorted(library.skills) == [
        'deploy-to-vercel',
        'vercel-composition-patterns',
        'vercel-react-best-practices',
        'web-design-guidelines',
    ]
    assert library.skipped == []  # the packed copies beside their folders say nothing
    assert sorted(message.split(': ', 1)[1].split(';')[0] for message in warned) == [
        "the name 'vercel-composition-patterns' does not match its folder 'composition-patterns'",
        "the name 'vercel-react-best-practices' does not match its folder 'react-best-practices'",
    ]
    assert library.skills['vercel-composition-patterns'].description == (
        'React composition patterns that scale. Use when refactoring components with many boolean props.'
    )
    with pytest.raises(SkillError, match='does not match its folder'):
        build(skills, strict=True)

    with pytest.warns(SkillFormatWarning):
        capability = Skills[None](skills, catalog_entry='- {name} {argument-hint}: {description}')
    assert {command.name: command.argument_hint for command in capability.commands()}['web-design-guidelines'] == (
        '<file-or-pattern>'
    )
    script, [loaded] = run(capability, 'my props are a mess', [call('load_skill', name='vercel-composition-patterns')])
    instructions = script.requests[0].instructions or ''
    assert '- web-design-guidelines <file-or-pattern>: Review UI code' in instructions
    assert '- vercel-composition-patterns : React composition patterns' in instructions
    assert 'Prefer compound components.' in loaded
    assert 'rules/compound.md' in loaded
