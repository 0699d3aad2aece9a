"""A skill that is not a folder on this machine runs its scripts like a folder skill: a registry's (SQLite here,
PostgreSQL in `tests/registry/test_registry_postgres.py`), a zipped package's and a git repository's. Each is an
Anthropic-shaped skill with binary files (fonts, a PNG, a zip archive, one font over the 256 KiB read limit); a real
agent run loads it and runs its script in skillshelf's bubblewrap sandbox, and the script reports every file's size
and SHA-256 as the fixture wrote them: byte for byte, nothing dropped or cut."""

from __future__ import annotations

import importlib
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent

from skillshelf import GitSource, PackageSource, Skills, SkillSandbox
from skillshelf.registry.skill_registry import SkillRegistry
from skillshelf.sources.base import SkillSource

from binary_skills import BINARY, CANVAS, canvas_files, canvas_markdown, expected_report, write_canvas
from sandbox_support import needs_bwrap
from scripted_model import Script, call, tool_returns


def registry_source(tmp_path: Path) -> SkillSource:
    url = f'sqlite:///{tmp_path / "skills.db"}'
    SkillRegistry(url).publish(write_canvas(tmp_path / 'lib'))
    return SkillRegistry(url)  # a worker's own handle


def zipped_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SkillSource:
    archive = tmp_path / 'canvas_pkg.zip'
    with zipfile.ZipFile(archive, 'w') as bundle:
        bundle.writestr('canvas_pkg/__init__.py', '')
        bundle.writestr(f'canvas_pkg/skills/{CANVAS}/SKILL.md', canvas_markdown())
        for relative, data in canvas_files().items():
            bundle.writestr(f'canvas_pkg/skills/{CANVAS}/{relative}', data)
    monkeypatch.syspath_prepend(str(archive))
    importlib.invalidate_caches()
    monkeypatch.delitem(sys.modules, 'canvas_pkg', raising=False)
    return PackageSource('canvas_pkg')


def git_repository(tmp_path: Path) -> SkillSource:
    repository = tmp_path / 'repo'
    write_canvas(repository / 'skills')
    for command in (['init', '-q'], ['add', '-A'], ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'x']):
        subprocess.run(['git', '-C', str(repository), *command], check=True)
    return GitSource(str(repository), cache_dir=tmp_path / 'cache')


@needs_bwrap
@pytest.mark.parametrize('kind', ['registry', 'zipped package', 'git'])
def test_a_skill_from_a_source_runs_its_script_with_every_byte(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kind == 'registry':
        source = registry_source(tmp_path)
    elif kind == 'zipped package':
        source = zipped_package(tmp_path, monkeypatch)
    else:
        source = git_repository(tmp_path)
    loaded, ran = run_canvas(source, tmp_path)
    assert 'Python' not in loaded  # never "defined in Python": it came from a source
    assert 'scripts/inspect.py' in loaded
    assert 'canvas-fonts/Mono-Regular.ttf' in loaded
    assert ran.startswith('scripts/inspect.py exited with code 0.'), ran
    assert ran.split('Output:\n', 1)[1].splitlines() == expected_report()


def run_canvas(source: SkillSource, tmp_path: Path) -> tuple[str, str]:
    """Load the canvas skill from `source` in a real agent run and run its script in the sandbox."""
    script = Script(
        [
            [call('load_skill', name=CANVAS)],
            [call('run_skill_script', name=CANVAS, script='scripts/inspect.py', args=list(BINARY))],
        ]
    )
    capabilities: list[Any] = [SkillSandbox(tmp_path / 'workspaces'), Skills(sources=[source], scripts=True)]
    messages = Agent(script.model(), capabilities=capabilities).run_sync('make a poster').all_messages()
    return str(tool_returns(messages, 'load_skill')[0]), str(tool_returns(messages, 'run_skill_script')[0])


def test_a_zipped_package_serves_a_large_file_whole_to_a_copy_and_a_page_to_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillshelf.content import MAX_RESOURCE_BYTES
    from skillshelf.content.base import MAX_FILE_BYTES

    [skill] = zipped_package(tmp_path, monkeypatch).read_skills().skills
    font = canvas_files()['canvas-fonts/Mono-Regular.ttf']
    assert len(font) > MAX_RESOURCE_BYTES
    assert skill.content.read_bytes('canvas-fonts/Mono-Regular.ttf', MAX_FILE_BYTES) == font
    with pytest.raises(Exception, match='over the 262,144-byte limit'):
        skill.content.read_bytes('canvas-fonts/Mono-Regular.ttf', MAX_RESOURCE_BYTES)
    assert skill.list_resources() == sorted(canvas_files())
