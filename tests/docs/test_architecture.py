"""docs/architecture.md maps the code as it is, the code keeps its floors, and each option is declared once."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from dataclasses import MISSING, Field, fields
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.capabilities import AbstractCapability

from skillshelf import Skills
from skillshelf.capability.options import OPTION_GROUPS

from repo_paths import REPO
from skill_files import write_skill

_spec = importlib.util.spec_from_file_location('architecture', REPO / 'docs' / 'architecture.py')
assert _spec is not None
assert _spec.loader is not None
architecture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(architecture)

MAX_MODULE_LINES = 400
"""No module of the package is longer (a longer one is split by what its parts do)."""


def test_the_module_map_is_what_the_code_says_now() -> None:
    assert (REPO / 'docs' / 'architecture.md').read_text(encoding='utf-8') == architecture.rendered(), (
        'run `python docs/architecture.py`'
    )


def test_every_module_says_what_it_is_and_is_in_the_map() -> None:
    text = (REPO / 'docs' / 'architecture.md').read_text(encoding='utf-8')
    for module in architecture.modules():
        assert architecture.summary(module), f'{module} has no docstring to describe it'
        assert f'| `{module}` |' in text


def test_no_module_is_over_400_lines() -> None:
    long = {
        module: lines
        for module in architecture.modules()
        if (lines := len((architecture.PACKAGE / module).read_text(encoding='utf-8').splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_imports_have_floors_between_modules_and_between_packages() -> None:
    modules, packages = (
        architecture.floors(architecture.import_graph()),
        architecture.floors(architecture.package_graph()),
    )
    assert packages['capability/'] > packages['library/'] > packages['sources/'] > packages['skill.py']
    assert packages['capability/'] > packages['scripts/'] > packages['content/'] > packages['markdown/']
    assert packages['authoring/'] > packages['capability/']
    assert packages['sandbox/'] > packages['scripts/']
    assert packages['registry/'] > packages['sources/']
    assert modules['capability/skills.py'] > modules['capability/dispatch.py'] > modules['capability/meta_tools.py']


def test_the_core_imports_no_annex_but_through_its_lazy_edges() -> None:
    known = set(architecture.modules())
    at_import_time, lazy = set[tuple[str, str]](), set[tuple[str, str]]()
    for module in known:
        if architecture.wing(module) != 'core':
            continue
        eager = architecture.imports(module, known, at_import_time=True)
        for target in architecture.imports(module, known):
            if (annex := architecture.wing(target)) != 'core':
                (at_import_time if target in eager else lazy).add((module, annex))
    assert at_import_time == set()
    assert lazy == architecture.EDGES | {('__init__.py', 'sandbox/'), ('__init__.py', 'mcp/')}  # public names


def test_an_import_inside_a_function_or_for_type_checkers_is_not_at_import_time() -> None:
    source = (
        'from typing import TYPE_CHECKING\n'
        'from .a import x\n'
        'if TYPE_CHECKING:\n    from .b import y\n'
        'try:\n    from .c import z\nexcept ImportError:\n    pass\n'
        'def f():\n    from .d import w\n'
    )
    run = architecture._run_at_import(ast.parse(source).body)
    assert [node.module for node in run if isinstance(node, ast.ImportFrom)] == ['typing', 'a', 'c']


def test_an_agent_without_scripts_loads_no_annex(tmp_path: Path) -> None:
    """Measured, not read off the imports: a real run of an agent on folder skills imports no annex module."""
    write_skill(tmp_path / 'skills', 'deploy', 'Run the deploy.', description='Deploy the service.')
    program = (
        'import sys\n'
        'from pydantic_ai import Agent\n'
        'from pydantic_ai.models.test import TestModel\n'
        'from skillshelf import Skills\n'
        f'agent = Agent(TestModel(), capabilities=[Skills(directories=[{str(tmp_path / "skills")!r}])])\n'
        'agent.run_sync("deploy it")\n'
        'print(sorted(m for m in sys.modules if m.split(".")[1:2] in (["sandbox"], ["registry"], ["authoring"], ["mcp"])))\n'
    )
    done = subprocess.run([sys.executable, '-c', program], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == '[]', done.stderr


def test_a_cycle_has_no_floors() -> None:
    with pytest.raises(ValueError, match='import cycle: a → b → a'):
        architecture.floors({'a': {'b'}, 'b': {'a'}, 'c': set()})


def _options(kind: type[Any]) -> dict[str, Field[Any]]:
    return {option.name: option for option in fields(kind) if option.init}


def test_each_option_of_skills_is_one_field_of_one_value_object() -> None:
    inherited = set(_options(AbstractCapability))  # pydantic-ai's own fields of every capability
    own = set(_options(Skills)) - inherited
    declared = [name for group in OPTION_GROUPS for name in _options(group)]
    assert len(declared) == len(set(declared)), 'an option is declared by two value objects'
    assert own == {*declared, 'skills'}  # Python skills are the capability's own, not an option of a part


@pytest.mark.parametrize('group', OPTION_GROUPS, ids=lambda group: group.__name__)
def test_the_flat_fields_of_skills_default_to_what_their_value_object_declares(group: type[Any]) -> None:
    flat = _options(Skills)
    for name, option in _options(group).items():
        ours, theirs = _default(flat[name]), _default(option)
        assert ours == theirs, f'Skills.{name} defaults to {ours!r}, {group.__name__}.{name} to {theirs!r}'


def _default(option: Field[Any]) -> object:
    if option.default_factory is not MISSING:
        return option.default_factory()
    return option.default


@pytest.mark.parametrize(
    ('old', 'name', 'new'),
    [
        ('skillshelf.workspace', 'SandboxWorkspace', 'skillshelf.sandbox'),
        ('skillshelf.workspace', 'ScriptLimits', 'skillshelf.scripts'),
        ('skillshelf.cli', 'main', 'skillshelf.authoring.cli'),
        ('skillshelf.lint', 'lint_folder', 'skillshelf.authoring.lint'),
        ('skillshelf.needs', 'scan_skill', 'skillshelf.authoring.needs'),
    ],
)
def test_a_moved_module_still_imports_with_a_warning_naming_the_new_one(old: str, name: str, new: str) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=f'import {name} from {new}'):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)
    with pytest.raises(AttributeError, match='no attribute'):
        module.nothing_of_that_name  # noqa: B018
