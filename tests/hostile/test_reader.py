"""The one `SKILL.md` reader against hostile input (issue 23): text that cannot be encoded, entries dropped without a
word, amplification and super-linear parsing, and discovery and `skillshelf validate` disagreeing.

Each class is checked with several inputs, through the public paths: discovery (and so `SkillLibrary.skipped` and
its warnings), `Skill(...)`, `load_instructions` and `lint_folder`.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from skillshelf import LibraryOptions, Skill, SkillFormatError, SkillLibrary, SkillWarning
from skillshelf.authoring.lint import Finding, lint_folder
from skillshelf.markdown import guarded_yaml
from skillshelf.markdown.frontmatter import MAX_FRONTMATTER_BYTES, MAX_YAML_EXPANDED_BYTES, MAX_YAML_NODES
from skillshelf.sources.base import SourceSkills
from skillshelf.sources.directory import discover

from hang_detector import finishes
from reliability.ledger import case
from skill_files import write_skill
from warnings_said import said

AREA = 'Skill files'

HANG_SECONDS = 10
"""Not a speed test: every input here is read in milliseconds; a read still running after this long is stuck."""


def quietly_discover(root: Path) -> SourceSkills:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', SkillWarning)
        return discover(root)


def build(root: Path) -> tuple[SkillLibrary, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        library = SkillLibrary.build(options=LibraryOptions(directories=[root]))
    return library, said(caught)


@pytest.fixture(params=['libyaml', 'pure-python'])
def yaml_parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with libyaml and with the pure-Python parser PyYAML falls back to without it."""
    if request.param == 'pure-python':
        monkeypatch.setattr(guarded_yaml, '_BASE_LOADER', yaml.SafeLoader)
        monkeypatch.setattr(guarded_yaml, '_LOADER', guarded_yaml._loader_class(yaml.SafeLoader))  # pyright: ignore[reportPrivateUsage]
    return request.param


# --- class 1: text that cannot be encoded never leaves the library ----------------------------------------------

SURROGATE_FRONTMATTERS = {
    'description': 'name: demo\ndescription: "bad \\ud800 here"',
    'low half': 'name: demo\ndescription: "\\udfff"',
    'long escape': 'name: demo\ndescription: "\\U0000d800"',
    'a UTF-16 pair': 'name: demo\ndescription: "smile \\ud83d\\ude00"',
    'name': 'name: "demo\\udfff"\ndescription: ok',
    'metadata value': 'name: demo\ndescription: ok\nmetadata:\n  author: "\\ud800"',
    'metadata key': 'name: demo\ndescription: ok\nmetadata:\n  "\\ud83d": x',
    'nested list': 'name: demo\ndescription: ok\nmetadata:\n  keywords:\n    - fine\n    - ["\\udfff"]',
    'unknown field': 'name: demo\ndescription: ok\ntags: [a, "b\\ud800"]',
    'top-level key': 'name: demo\ndescription: ok\n"\\ud800": 1',
}


@pytest.mark.parametrize('where', SURROGATE_FRONTMATTERS, ids=SURROGATE_FRONTMATTERS.keys())
def test_a_lone_surrogate_in_the_frontmatter_skips_the_skill_saying_why(
    tmp_path: Path, where: str, yaml_parser: str
) -> None:
    write_skill(tmp_path, 'demo', text=f'---\n{SURROGATE_FRONTMATTERS[where]}\n---\nBody.\n')
    write_skill(tmp_path, 'fine', text='---\nname: fine\ndescription: A neighbour.\n---\nBody.\n')

    library, warned = build(tmp_path)

    assert list(library.skills) == ['fine']
    [skipped] = library.skipped
    assert skipped.path == tmp_path / 'demo' / 'SKILL.md'
    # libyaml refuses the escape itself; the pure-Python parser decodes it and the reader refuses the text.
    assert 'UTF-8' in skipped.problem
    assert warned == [f'skipped {skipped.path}: {skipped.problem}']
    for message in [*warned, skipped.problem]:
        message.encode('utf-8')  # the report itself can be written anywhere
    case(
        AREA,
        f'unencodable text: lone surrogate (YAML escape) in the frontmatter, {where} ({yaml_parser} parser)',
        f'skipped with a warning: {skipped.problem}',
        root=tmp_path,
    )


def test_the_pure_python_parser_names_where_the_surrogate_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guarded_yaml, '_BASE_LOADER', yaml.SafeLoader)
    monkeypatch.setattr(guarded_yaml, '_LOADER', guarded_yaml._loader_class(yaml.SafeLoader))  # pyright: ignore[reportPrivateUsage]
    write_skill(tmp_path, 'demo', text=f'---\n{SURROGATE_FRONTMATTERS["nested list"]}\n---\n')

    [skipped] = quietly_discover(tmp_path).skipped

    assert skipped.problem == (
        'the frontmatter has text that cannot be encoded as UTF-8 in metadata.keywords[1][0] '
        '(a lone surrogate, such as the escape "\\ud800"); write the character itself'
    )
    case(
        AREA,
        'unencodable text: lone surrogate (YAML escape) in metadata.keywords, nested (pure-python parser names where)',
        f'skipped: {skipped.problem}',
        root=tmp_path,
    )


def test_a_body_is_decoded_strictly_so_it_cannot_hold_a_surrogate(tmp_path: Path) -> None:
    # b'\xed\xa0\x80' is U+D800 encoded as if it were a character; Python's strict UTF-8 decoder refuses it.
    folder = write_skill(tmp_path, 'demo', text=b'---\nname: demo\ndescription: ok\n---\nBody \xed\xa0\x80 here.\n')
    write_skill(tmp_path, 'escaped', text='---\nname: escaped\ndescription: ok\n---\nThe text \\ud800 is only text.\n')

    skills = {skill.name: skill for skill in quietly_discover(tmp_path).skills}

    with pytest.raises(SkillFormatError, match=r'not valid UTF-8 \(byte \d+\)') as refused:
        skills['demo'].load_instructions()
    assert refused.value.path == folder / 'SKILL.md'
    assert skills['escaped'].load_instructions() == 'The text \\ud800 is only text.'
    case(
        AREA,
        'unencodable text: a surrogate encoded as UTF-8 bytes (ED A0 80) in the body',
        f'discovered; load refused: {refused.value.problem}',
        root=tmp_path,
    )
    case(
        AREA,
        'unencodable text: the characters `\\ud800` in the body (not YAML, so no escape)',
        f'loaded; body read as written: {skills["escaped"].load_instructions()!r}',
    )


@pytest.mark.parametrize(
    ('arguments', 'where'),
    [
        ({'name': 'demo\ud800', 'description': 'ok'}, 'the name'),
        ({'name': 'demo', 'description': 'bad \udfff'}, 'the description'),
        ({'name': 'demo', 'description': 'ok', 'instructions': 'Step \ud83d.'}, 'the instructions'),
        (
            {'name': 'demo', 'description': 'ok', 'metadata': {'keywords': ['a', '\ud800']}},
            'the metadata (keywords[1])',
        ),
        ({'name': 'demo', 'description': 'ok', 'metadata': {'\udfff': 1}}, 'the metadata (a key)'),
        ({'name': 'demo', 'description': 'ok', 'resources': {'notes.md': '\ud800'}}, 'a resource (notes.md)'),
    ],
)
def test_a_python_skill_with_a_lone_surrogate_is_refused(arguments: dict[str, Any], where: str) -> None:
    with pytest.raises(SkillFormatError) as refused:
        Skill(**arguments)
    assert f'{where} cannot be encoded as UTF-8' in refused.value.problem
    str(refused.value).encode('utf-8')
    case(
        AREA,
        f'unencodable text: lone surrogate in a Python skill, {where}',
        f'Skill(...) refused: {refused.value.problem}',
    )


def test_python_skill_metadata_that_holds_itself_is_walked_once() -> None:
    metadata: dict[str, Any] = {'keywords': ['ok']}
    metadata['self'] = metadata
    keywords = Skill('demo', 'ok', metadata=metadata).metadata['keywords']
    assert keywords == ['ok']
    case(
        AREA,
        'unencodable text: the check on Python skill metadata that contains itself',
        f'accepted, walked once: metadata.keywords == {keywords!r}',
    )


# --- class 3: no entry is dropped without a word --------------------------------------------------------------------


def _fifo(entry: Path, base: Path) -> None:
    os.mkfifo(entry)


SILENT_DROPS: dict[str, tuple[Callable[[Path, Path], object], str]] = {
    'symlink to /': (lambda entry, base: entry.symlink_to('/'), 'a symlink to /, outside the library directory'),
    'symlink to /etc': (
        lambda entry, base: entry.symlink_to('/etc'),
        f'a symlink to {os.path.realpath("/etc")}, outside the library directory',
    ),
    'symlink to a folder outside': (
        lambda entry, base: entry.symlink_to(write_skill(base / 'elsewhere', 'entry', text='---\n---\n')),
        'outside the library directory; skills are only read from inside a library',
    ),
    'symlink to the library itself': (
        lambda entry, base: entry.symlink_to('.'),
        'the skill folder is a symlink to the library directory itself',
    ),
    'symlink loop': (lambda entry, base: entry.symlink_to('entry'), 'it is a symlink loop'),
    'two-link loop': (
        lambda entry, base: (entry.symlink_to('other'), (entry.parent / 'other').symlink_to('entry')),
        'it is a symlink loop',
    ),
    'dangling symlink': (lambda entry, base: entry.symlink_to(base / 'gone'), 'which does not exist'),
    'packed skill': (lambda entry, base: entry.with_suffix('.skill').write_bytes(b'PK'), 'it is a file, not a skill'),
    'markdown file': (
        lambda entry, base: entry.with_suffix('.md').write_text('---\nname: entry\n---\n'),
        'it is a file, not a skill folder',
    ),
    'symlink to a markdown file': (
        lambda entry, base: entry.with_suffix('.md').symlink_to(
            write_skill(base / 'elsewhere', 'x', text='text') / 'SKILL.md'
        ),
        'it is a symlink to a file, not a skill folder',
    ),
    'FIFO': (_fifo, 'a special file (a FIFO, socket or device)'),
    'folder without SKILL.md': (
        lambda entry, base: (entry.mkdir(), (entry / 'README.md').write_text('hello')),
        'the folder has no SKILL.md',
    ),
    'folder of skill folders': (
        lambda entry, base: write_skill(entry, 'nested', text='---\nname: nested\ndescription: Deeper.\n---\n'),
        'skills in its sub-folders are not read',
    ),
}


@pytest.mark.parametrize('entry', SILENT_DROPS, ids=SILENT_DROPS.keys())
def test_every_entry_that_is_not_a_skill_is_reported_with_its_path_and_reason(tmp_path: Path, entry: str) -> None:
    make, problem = SILENT_DROPS[entry]
    library_dir = tmp_path / 'lib'
    write_skill(library_dir, 'fine', text='---\nname: fine\ndescription: A neighbour.\n---\nBody.\n')
    make(library_dir / 'entry', tmp_path)

    library, warned = finishes(lambda: build(library_dir), HANG_SECONDS)

    assert list(library.skills) == ['fine']
    reported = [skipped for skipped in library.skipped if skipped.path.name != 'other']
    [skipped] = reported
    assert skipped.path.parent == library_dir
    assert skipped.path.stem == 'entry'
    assert problem in skipped.problem
    assert f'skipped {skipped.path}: {skipped.problem}' in warned
    case(
        AREA,
        f'silent drop: an entry in a library that is not a skill, {entry}',
        f'skipped with a warning: {skipped.problem}',
        root=library_dir,
    )


@pytest.mark.parametrize(
    'name',
    [
        'README.md',
        'readme',
        'README-zh.md',
        'LICENSE',
        'License.md',
        'CHANGELOG.md',
        'AGENTS.md',
        'Thumbs.db',
        'Makefile',
        '__init__.py',
        'skills.json',
    ],
)
def test_documents_and_other_files_beside_the_skills_are_not_reported(tmp_path: Path, name: str) -> None:
    write_skill(tmp_path, 'fine', text='---\nname: fine\ndescription: A neighbour.\n---\nBody.\n')
    (tmp_path / name).write_text('# About these skills', encoding='utf-8')
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        library = SkillLibrary.build(options=LibraryOptions(directories=[tmp_path]))
    assert (list(library.skills), library.skipped) == (['fine'], [])
    case(
        AREA,
        f'silent drop: a document beside the skills, `{name}`',
        f'not reported, no warning (not a skill folder); skills read: {", ".join(library.skills)}',
    )


def test_a_folder_the_process_cannot_read_is_reported() -> None:
    base = Path(tempfile.mkdtemp(dir='/tmp'))  # outside pytest's root-only temp folder
    try:
        base.chmod(0o755)
        write_skill(base / 'lib', 'fine', text='---\nname: fine\ndescription: A neighbour.\n---\nBody.\n')
        write_skill(base / 'lib', 'locked', text='---\nname: locked\ndescription: Unreadable.\n---\nBody.\n').chmod(0)
        script = (
            'import sys, warnings; from pathlib import Path; from skillshelf.sources.directory import discover\n'
            'warnings.simplefilter("ignore")\n'
            'found = discover(Path(sys.argv[1]))\n'
            'print([skill.name for skill in found.skills]); print([(s.path.name, s.problem) for s in found.skipped])'
        )
        command = [sys.executable, '-c', script, str(base / 'lib')]
        if os.geteuid() == 0:
            # Root reads any folder; without the capabilities that let it, it is refused like anyone else.
            setpriv = shutil.which('setpriv')
            if setpriv is None:
                pytest.skip('running as root without setpriv: root may read any folder')
            drop = '-dac_override,-dac_read_search'
            command = [setpriv, '--bounding-set', drop, '--inh-caps', drop, *command]
        result = subprocess.run(command, capture_output=True, text=True, check=True)
    finally:
        (base / 'lib' / 'locked').chmod(0o755)
        shutil.rmtree(base)
    skills, skipped = result.stdout.splitlines()
    assert skills == "['fine']"
    assert skipped == "[('locked', 'cannot read the folder (Permission denied)')]"
    [(folder, problem)] = ast.literal_eval(skipped)
    case(
        AREA,
        'silent drop: a skill folder the process cannot read (chmod 000)',
        f'skipped: {folder}: {problem}; skills read: {", ".join(ast.literal_eval(skills))}',
    )


# --- class 4: amplification and parse time ---------------------------------------------------------------------------

LONG = 'w ' * 4000  # 8 KB
ALIAS_AMPLIFIERS = {
    'a list of aliases': f'metadata:\n  keywords: [&a "{LONG}"' + ', *a' * 40 + ']',
    'block list of aliases': f'a: &a "{LONG}"\nmetadata:\n  keywords:\n' + '    - *a\n' * 40,
    'aliases of a list of aliases': f'a: &a ["{LONG}", "{LONG}"]\nb: &b [*a, *a, *a, *a]\nc: [' + '*b, ' * 5 + '*b]',
    'aliased keys': f'a: &a "{LONG}"\nm:\n' + ''.join(f'  ? [*a, {index}]\n  : x\n' for index in range(40)),
    'merge keys': f'base: &b {{text: "{LONG}"}}\n' + ''.join(f'm{index}: {{<<: *b}}\n' for index in range(40)),
}


@pytest.mark.parametrize('amplifier', ALIAS_AMPLIFIERS, ids=ALIAS_AMPLIFIERS.keys())
def test_aliases_that_expand_a_frontmatter_past_the_byte_limit_are_refused(
    tmp_path: Path, amplifier: str, yaml_parser: str
) -> None:
    text = f'---\nname: demo\ndescription: ok\n{ALIAS_AMPLIFIERS[amplifier]}\n---\nBody.\n'
    assert len(text.encode()) < MAX_FRONTMATTER_BYTES  # small on disk, under the value count too
    write_skill(tmp_path, 'demo', text=text)

    [skipped] = quietly_discover(tmp_path).skipped

    assert skipped.problem == (
        f'the frontmatter is refused: aliases expand the text to more than {MAX_YAML_EXPANDED_BYTES:,} bytes '
        '(a YAML bomb?); write the values out'
    )
    case(
        AREA,
        f'amplification: {amplifier} of an 8 KB string, {len(text.encode()):,} bytes on disk ({yaml_parser} parser)',
        f'skipped: {skipped.problem}',
        root=tmp_path,
    )


def test_aliases_within_the_limits_are_read(tmp_path: Path) -> None:
    write_skill(
        tmp_path, 'demo', text=f'---\nname: demo\ndescription: ok\nkeywords: [&a "{LONG}"' + ', *a' * 20 + ']\n---\n'
    )
    [skill] = quietly_discover(tmp_path).skills
    assert len(skill.metadata['keywords']) == 21
    case(
        AREA,
        'amplification: 20 aliases of an 8 KB string, within the limits',
        f'loaded: metadata.keywords has {len(skill.metadata["keywords"])} values',
    )


def test_many_small_aliases_still_hit_the_value_limit(tmp_path: Path) -> None:
    extra = 'a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [' + ', '.join(['*a'] * 100) + ']\nc: [' + '*b, ' * 60 + '*b]'
    write_skill(tmp_path, 'demo', text=f'---\nname: demo\ndescription: ok\n{extra}\n---\n')
    [skipped] = quietly_discover(tmp_path).skipped
    assert f'more than {MAX_YAML_NODES:,} values' in skipped.problem
    case(
        AREA,
        'amplification: 61 aliases of 100 aliases of a 10-item list (61,000 small values)',
        f'skipped: {skipped.problem}',
        root=tmp_path,
    )


RUN = 60_000
LINEAR_INPUTS = {
    'spaces then a colon in a value': f'---\nname: demo\ndescription: a{" " * RUN}b:\n---\nBody.\n',
    'spaces in a value': f'---\nname: demo\ndescription: a{" " * RUN}b\n---\nBody.\n',
    'spaces after `Use when:`': f'---\nname: demo\ndescription: Use when: {" " * RUN}x\n---\nBody.\n',
    'a run of `a: `': f'---\nname: demo\ndescription: {"a: " * (RUN // 3)}\n---\nBody.\n',
    'tabs before a colon': f'---\nname: demo\ndescription: x\nk{chr(9) * RUN}: v\n---\nBody.\n',
    'spaces after the opening `---`': f'---{" " * RUN}x\nname: demo\n---\n',
    'spaces after body `---` lines': '---\nname: demo\ndescription: x\n---\n' + ('---' + ' ' * 100 + 'x\n') * 600,
    'a line of dashes': '-' * RUN + '\n',
    'brackets in the body': f'---\nname: demo\ndescription: Use when asked.\n---\n{"[" * RUN}\n',
    'unclosed links in the body': f'---\nname: demo\ndescription: Use when asked.\n---\n{"[a](" * (RUN // 4)}\n',
    'a link target then spaces': f'---\nname: demo\ndescription: Use when asked.\n---\n[a](x{" " * RUN}\n',
    'backticks in the body': f'---\nname: demo\ndescription: Use when asked.\n---\n{"`scripts/" * (RUN // 9)}\n',
    'nested brackets up to the size limit': '---\nname: demo\ndescription: x\nm: ' + '[' * RUN + '\n---\n',
}


@pytest.mark.parametrize('run', LINEAR_INPUTS, ids=LINEAR_INPUTS.keys())
def test_long_runs_on_one_line_are_read_without_stalling(tmp_path: Path, run: str) -> None:
    folder = write_skill(tmp_path, 'demo', text=LINEAR_INPUTS[run])

    found, warned = finishes(lambda: discover_recording_warnings(tmp_path), HANG_SECONDS)
    report = finishes(lambda: lint_folder(folder), HANG_SECONDS)

    assert len(found.skills) + len(found.skipped) == 1
    assert report.findings or found.skills
    bodies = [finishes(skill.load_instructions, HANG_SECONDS) for skill in found.skills]
    assert None not in bodies
    case(
        AREA,
        f'super-linear parsing: {run} ({len(LINEAR_INPUTS[run]):,}-character file)',
        f'finished; {_read_outcome(found, warned, bodies)}; validate: {_findings(report.findings)}',
        root=tmp_path,
    )


def discover_recording_warnings(root: Path) -> tuple[SourceSkills, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        found = discover(root)
    return found, said(caught)


def _read_outcome(found: SourceSkills, warned: list[str], bodies: list[str]) -> str:
    if found.skipped:
        return f'skipped: {found.skipped[0].problem}'
    loaded = f'loaded with a {len(bodies[0]):,}-character body'
    return f'{loaded}, warning: {warned[0].split(": ", 1)[-1]}' if warned else loaded  # without the path


def _findings(findings: list[Finding]) -> str:
    errors = [f'error: {finding.message}' for finding in findings if finding.severity == 'error']
    warned = sorted({finding.rule for finding in findings if finding.severity == 'warning'})
    return '; '.join([*errors, *(['warnings: ' + ', '.join(warned)] if warned else [])]) or 'no findings'


# --- class 6: one reader, one outcome --------------------------------------------------------------------------------

READER_EDGES = {
    # case: (frontmatter, what both say when they refuse it)
    'a tab before a colon': ('name\t: demo\ndescription: Shows the demo. Use when asked for one.', "'\\t'"),
    'a tab after a value': ('name: demo\t\ndescription: Shows the demo. Use when asked for one.', "'\\t'"),
    'a surrogate escape': ('name: demo\ndescription: "Shows \\ud800. Use when asked for one."', 'UTF-8'),
    'a surrogate escape in a key': (
        'name: demo\ndescription: Shows the demo. Use when asked for one.\n"\\udfff": 1',
        'UTF-8',
    ),
    'a repeated key': ('name: demo\nname: demo\ndescription: Shows the demo. Use when asked for one.', "key 'name'"),
    'deep nesting': (
        'name: demo\ndescription: Shows the demo. Use when asked for one.\nx: ' + '[' * 40 + ']' * 40,
        'nested more than 32 levels deep',
    ),
    'an escape both parsers read': ('name: demo\ndescription: "Shows the demo.\\tUse when asked for one."', ''),
}


def _library_outcome(root: Path) -> str | None:
    found = quietly_discover(root)
    return None if found.skills else found.skipped[0].problem


@pytest.mark.parametrize('edge', READER_EDGES, ids=READER_EDGES.keys())
def test_discovery_and_validate_read_a_frontmatter_the_same_way(tmp_path: Path, edge: str, yaml_parser: str) -> None:
    frontmatter, reason = READER_EDGES[edge]
    folder = write_skill(tmp_path, 'demo', text=f'---\n{frontmatter}\n---\nDo the thing.\n')

    skipped_because = _library_outcome(tmp_path)
    errors = [f'{finding.rule}: {finding.message}' for finding in lint_folder(folder).errors]

    if skipped_because is None:
        assert errors == []
        handling = 'both accept: discovery loads it, validate reports no errors'
    else:
        assert reason, f'skipped: {skipped_because}'
        assert reason in skipped_because
        assert any(reason in error for error in errors), errors
        handling = f'both refuse; discovery skips: {skipped_because}; validate: {errors[0]}'
    case(AREA, f'one reader: discovery and validate on {edge} ({yaml_parser} parser)', handling, root=tmp_path)
