"""`skillshelf validate` agrees with the reference validator `skills-ref` on every rule of the Agent Skills format.

Both validators run over the same folders and each verdict is reduced to the set of format rules it says are
broken (`skills-ref` messages are mapped to our rule ids below). The sets must be equal, skill by skill, for:

- the sample library in `skills/`;
- hand-written cases for every rule, including the edges (exactly 64/65-character names, 1024/1025-character
  descriptions, NFKC forms, YAML that only a lenient parser accepts);
- names, descriptions and fields drawn by hypothesis;
- the real skills in `../shared/bench/skills_corpus.jsonl`, written as SKILL.md folders twice over: as authors
  write frontmatter by hand (plain `key: value` lines, so YAML quirks show up) and as a YAML dumper writes it.
  Without that file, the same check runs on a generated corpus of the same shape instead.

`skills-ref` stops at the first frontmatter problem, so when it reports one we only require that we do too.
Rules that are skillshelf's own (what the library refuses to load, lint advice) are not compared.
"""

from __future__ import annotations

import json
import random
import re
import string
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillshelf import Skill
from skillshelf.authoring.lint import SPEC_RULES, lint_folder

from repo_paths import REPO, SAMPLE_SKILLS
from skill_files import write_skill

# skills-ref, the reference validator, supports Python 3.11+ only; everywhere else it is installed by `.[dev]`.
reference_validate = pytest.importorskip('skills_ref.validator', reason='skills-ref needs Python 3.11+').validate

CORPUS = REPO.parent / 'shared' / 'bench' / 'skills_corpus.jsonl'

_REFERENCE_RULES = [
    (
        re.compile(r'must start with YAML frontmatter|not properly closed|Invalid YAML|must be a YAML mapping'),
        'frontmatter',
    ),
    (re.compile(r'^Unexpected fields in frontmatter'), 'unknown-field'),
    (re.compile(r"^Directory name '.*' must match skill name"), 'name-folder'),
    (re.compile(r"Missing required field in frontmatter: name|^Field 'name'|^Skill name"), 'name'),
    (re.compile(r"Missing required field in frontmatter: description|^Field 'description'"), 'description'),
    (re.compile(r'^Description exceeds'), 'description-length'),
    (re.compile(r"^Field 'compatibility'|^Compatibility exceeds"), 'compatibility'),
]


def reference_rules(folder: Path) -> set[str]:
    """The format rules `skills-ref` says `folder` breaks."""
    rules: set[str] = set()
    for message in reference_validate(folder):
        rule = next((rule for pattern, rule in _REFERENCE_RULES if pattern.search(message)), None)
        assert rule is not None, f'unmapped skills-ref message: {message!r}'
        rules.add(rule)
    return rules


@dataclass(frozen=True)
class Verdicts:
    folder: Path
    ours: set[str]
    """The format rules `skillshelf validate` says the folder breaks."""
    reference: set[str]
    """The format rules `skills-ref` says it breaks."""
    valid: bool
    """Whether `skillshelf validate` passes the folder (no error of any rule, ours included)."""

    @property
    def agree(self) -> bool:
        if 'frontmatter' in self.reference:
            return 'frontmatter' in self.ours
        return self.ours == self.reference


def compare(folder: Path) -> Verdicts:
    errors = [finding for finding in lint_folder(folder).findings if finding.severity == 'error']
    ours = {finding.rule for finding in errors if finding.spec}
    return Verdicts(folder, ours, reference_rules(folder), valid=not errors)


def assert_all_agree(verdicts: list[Verdicts]) -> None:
    disagreements = [verdict for verdict in verdicts if not verdict.agree]
    shown = '\n'.join(
        f'{verdict.folder}: ours={sorted(verdict.ours)} skills-ref={sorted(verdict.reference)}'
        for verdict in disagreements[:20]
    )
    assert not disagreements, f'{len(disagreements)} of {len(verdicts)} skills disagree:\n{shown}'


# --- the sample library -------------------------------------------------------------------------


def test_sample_skills_pass_both_validators() -> None:
    folders = sorted(path for path in SAMPLE_SKILLS.iterdir() if (path / 'SKILL.md').is_file())
    assert folders
    verdicts = [compare(folder) for folder in folders]
    assert_all_agree(verdicts)
    assert all(not verdict.reference and not verdict.ours for verdict in verdicts)


# --- every rule, by hand ------------------------------------------------------------------------

DESCRIPTION = 'description: Formats code. Use when asked to tidy files.'

CASES: dict[str, tuple[str, str, set[str]]] = {
    # case id: (folder, frontmatter, rules both must report)
    'valid': ('demo', f'name: demo\n{DESCRIPTION}', set()),
    'valid-all-fields': (
        'demo',
        f'name: demo\n{DESCRIPTION}\nlicense: MIT\ncompatibility: Python 3.10+\nallowed-tools: Read Write\n'
        'metadata:\n  author: me\n  version: "1"',
        set(),
    ),
    'valid-unicode-letters': ('café-été', f'name: café-été\n{DESCRIPTION}', set()),
    'valid-64-name': ('a' * 64, f'name: {"a" * 64}\n{DESCRIPTION}', set()),
    'name-65': ('a' * 65, f'name: {"a" * 65}\n{DESCRIPTION}', {'name'}),
    'name-missing': ('demo', DESCRIPTION, {'name'}),
    'name-empty': ('demo', f'name: ""\n{DESCRIPTION}', {'name'}),
    'name-blank': ('demo', f'name:\n{DESCRIPTION}', {'name'}),
    'name-upper': ('Demo', f'name: Demo\n{DESCRIPTION}', {'name'}),
    'name-leading-hyphen': ('-demo', f'name: -demo\n{DESCRIPTION}', {'name'}),
    'name-trailing-hyphen': ('demo-', f'name: demo-\n{DESCRIPTION}', {'name'}),
    'name-double-hyphen': ('de--mo', f'name: de--mo\n{DESCRIPTION}', {'name'}),
    'name-underscore': ('de_mo', f'name: de_mo\n{DESCRIPTION}', {'name'}),
    'name-dot': ('de.mo', f'name: de.mo\n{DESCRIPTION}', {'name'}),
    'name-space': ('de mo', f'name: de mo\n{DESCRIPTION}', {'name'}),
    'name-list': ('demo', f'name:\n  - demo\n{DESCRIPTION}', {'name'}),
    'name-folder': ('other', f'name: demo\n{DESCRIPTION}', {'name-folder'}),
    'name-folder-nfkc': ('ﬁle', f'name: file\n{DESCRIPTION}', set()),
    'name-bad-and-folder': ('x', f'name: Bad_Name\n{DESCRIPTION}', {'name', 'name-folder'}),
    'description-missing': ('demo', 'name: demo', {'description'}),
    'description-empty': ('demo', 'name: demo\ndescription: ""', {'description'}),
    'description-blank': ('demo', 'name: demo\ndescription:', {'description'}),
    'description-mapping': ('demo', 'name: demo\ndescription:\n  a: b', {'description'}),
    'description-1024': ('demo', f'name: demo\ndescription: {"d" * 1024}', set()),
    'description-1025': ('demo', f'name: demo\ndescription: {"d" * 1025}', {'description-length'}),
    'description-block': ('demo', 'name: demo\ndescription: >\n  Formats code.\n  Use when asked.', set()),
    'compatibility-500': ('demo', f'name: demo\n{DESCRIPTION}\ncompatibility: {"c" * 500}', set()),
    'compatibility-501': ('demo', f'name: demo\n{DESCRIPTION}\ncompatibility: {"c" * 501}', {'compatibility'}),
    'compatibility-list': ('demo', f'name: demo\n{DESCRIPTION}\ncompatibility:\n  - linux', {'compatibility'}),
    'unknown-field': ('demo', f'name: demo\n{DESCRIPTION}\nwhen_to_use: always', {'unknown-field'}),
    'unknown-fields': ('demo', f'name: demo\n{DESCRIPTION}\ntags: a\nversion: "2"', {'unknown-field'}),
    'everything-wrong': (
        'x',
        f'name: X--\ndescription: {"d" * 1100}\ncompatibility: {"c" * 600}\nextra: 1',
        {'name', 'name-folder', 'description-length', 'compatibility', 'unknown-field'},
    ),
    'frontmatter-empty': ('demo', '', {'frontmatter'}),
    'frontmatter-list': ('demo', '- name: demo', {'frontmatter'}),
    'frontmatter-scalar': ('demo', 'just text', {'frontmatter'}),
    'frontmatter-bad-yaml': ('demo', 'name: demo\ndescription: "unclosed', {'frontmatter'}),
    'frontmatter-colon': ('demo', 'name: demo\ndescription: Use when: the user asks', {'frontmatter'}),
    'frontmatter-flow-list': ('demo', f'name: demo\n{DESCRIPTION}\nallowed-tools: [Read, Write]', {'frontmatter'}),
    'frontmatter-flow-map': ('demo', f'name: demo\n{DESCRIPTION}\nmetadata: {{a: b}}', {'frontmatter'}),
    'frontmatter-duplicate': ('demo', f'name: demo\nname: demo\n{DESCRIPTION}', {'frontmatter'}),
}


@pytest.mark.parametrize('case', CASES)
def test_each_rule_agrees_with_skills_ref(tmp_path: Path, case: str) -> None:
    folder, frontmatter, expected = CASES[case]
    verdicts = compare(write_skill(tmp_path, folder, frontmatter=frontmatter))
    assert verdicts.reference == expected, 'the case no longer tests what it says'
    assert verdicts.agree, f'ours={sorted(verdicts.ours)} skills-ref={sorted(verdicts.reference)}'


@pytest.mark.parametrize(
    ('content', 'case'), [('no frontmatter at all\n', 'missing'), ('---\nname: demo\ndescription: x\n', 'unclosed')]
)
def test_frontmatter_structure_agrees_with_skills_ref(tmp_path: Path, content: str, case: str) -> None:
    folder = tmp_path / 'demo'
    folder.mkdir()
    (folder / 'SKILL.md').write_text(content, encoding='utf-8')
    verdicts = compare(folder)
    assert verdicts.reference == {'frontmatter'}, case
    assert verdicts.ours == {'frontmatter'}, case


def test_every_spec_rule_is_exercised() -> None:
    assert set().union(*(expected for _, _, expected in CASES.values())) == SPEC_RULES


# --- random names, descriptions and fields --------------------------------------------------------

_NAME_ALPHABET = string.ascii_lowercase + string.digits + '--' + 'AZ_. é' + 'ﬁ'


@settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    # skills-ref splits the file on any '---' substring (`content.split('---', 2)`), so a value holding '---'
    # breaks its frontmatter; the format (and skillshelf) only treat whole `---` lines as delimiters.
    name=st.text(_NAME_ALPHABET, min_size=1, max_size=70).filter(lambda name: '---' not in name),
    folder_matches=st.booleans(),
    description_length=st.sampled_from([1, 30, 1023, 1024, 1025, 1500]),
    compatibility_length=st.sampled_from([None, 10, 500, 501]),
    extra_field=st.sampled_from([None, 'tags', 'version', 'metadata', 'license']),
)
def test_generated_skills_agree_with_skills_ref(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    folder_matches: bool,
    description_length: int,
    compatibility_length: int | None,
    extra_field: str | None,
) -> None:
    fields: dict[str, object] = {'name': name, 'description': ('Use when asked. ' * 100)[:description_length]}
    if compatibility_length is not None:
        fields['compatibility'] = 'c' * compatibility_length
    if extra_field is not None:
        fields[extra_field] = {'k': 'v'} if extra_field == 'metadata' else 'value'
    folder = name if folder_matches and name.strip(' .') == name and name else 'folder'
    root = tmp_path_factory.mktemp('generated')
    path = write_skill(root, folder, frontmatter=yaml.safe_dump(fields, allow_unicode=True, sort_keys=False).strip())
    verdicts = compare(path)
    assert verdicts.agree, f'ours={sorted(verdicts.ours)} skills-ref={sorted(verdicts.reference)}'


# --- real skills ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusSkill:
    name: str
    description: str
    body: str
    license: str | None


def corpus() -> tuple[str, list[CorpusSkill]]:
    """The real skills from the shared benchmark data, or a generated corpus of the same shape without it."""
    if CORPUS.is_file():
        records = [json.loads(line) for line in CORPUS.read_text(encoding='utf-8').splitlines() if line.strip()]
        return 'real', [
            CorpusSkill(record['name'], record['description'], record['body'], record.get('frontmatter_license'))
            for record in records
        ]
    return 'generated', list(_generated_corpus())


def _generated_corpus() -> Iterator[CorpusSkill]:
    rng = random.Random(20261122)
    words = 'review format convert analyse deploy test write sql csv pdf api git chart data code'.split()
    for index in range(300):
        name = '-'.join(rng.sample(words, rng.randint(1, 3)))
        mutation = index % 6
        if mutation == 1:
            name = name.title()
        elif mutation == 2:
            name = f'{name}_{index}'
        description = ' '.join(rng.choices(words, k=rng.randint(3, 40))) + '. Use when asked.'
        if mutation == 3:
            description = description.replace('. Use', ': use')  # an unquoted ": " that only lenient YAML accepts
        elif mutation == 4:
            description *= 40  # over the 1024-character limit
        yield CorpusSkill(name, description, 'Steps.', 'MIT' if mutation == 5 else None)


def _folder_for(skill: CorpusSkill, index: int) -> str:
    if index % 10 == 9 or not skill.name or '/' in skill.name or skill.name.strip(' .') != skill.name:
        return f'skill-{index}'  # a mismatched folder, on purpose or because the name cannot be one
    return skill.name


def _handwritten(skill: CorpusSkill) -> str:
    """Frontmatter as people type it: plain `key: value` lines (multi-line values as a literal block)."""

    def field(key: str, value: str) -> str:
        if '\n' in value:
            return f'{key}: |\n' + '\n'.join(f'  {line}' for line in value.splitlines())
        return f'{key}: {value}'

    lines = [field('name', skill.name), field('description', skill.description)]
    if skill.license:
        lines.append(field('license', skill.license))
    return '\n'.join(lines)


def _dumped(skill: CorpusSkill) -> str:
    fields = {'name': skill.name, 'description': skill.description}
    if skill.license:
        fields['license'] = skill.license
    return yaml.safe_dump(fields, allow_unicode=True, sort_keys=False, width=10_000).strip()


@pytest.mark.parametrize('style', ['handwritten', 'dumped'])
def test_real_skills_agree_with_skills_ref(tmp_path: Path, style: str) -> None:
    source, skills = corpus()
    render = _handwritten if style == 'handwritten' else _dumped
    verdicts = [
        compare(write_skill(tmp_path / str(index), _folder_for(skill, index), skill.body, frontmatter=render(skill)))
        for index, skill in enumerate(skills)
    ]
    assert len(verdicts) == len(skills) >= 100, source
    assert_all_agree(verdicts)
    # A skill validate passes is one the library loads, without repairs or warnings.
    for verdict in verdicts:
        if verdict.valid:
            with warnings.catch_warnings():
                warnings.simplefilter('error')
                Skill.from_folder(verdict.folder).load_instructions()
    # The comparison is only worth something if both valid and broken skills were compared.
    broken = sum(1 for verdict in verdicts if verdict.reference)
    assert 0 < broken < len(verdicts), f'{source} corpus: {broken} of {len(verdicts)} broken'
    assert any(verdict.reference == {'name-folder'} for verdict in verdicts)


@pytest.mark.parametrize('style', ['handwritten', 'dumped'])
def test_generated_corpus_agrees_with_skills_ref(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, style: str) -> None:
    """The fallback used without the benchmark data runs here on every machine, so it can never rot."""
    monkeypatch.setattr(sys.modules[__name__], 'CORPUS', tmp_path / 'absent.jsonl')
    source, skills = corpus()
    assert (source, len(skills)) == ('generated', 300)
    test_real_skills_agree_with_skills_ref(tmp_path / 'skills', style)
