"""docs/architecture.md maps the code as it is, the code keeps its floors, and each option is declared once."""

from __future__ import annotations

import importlib.util
from dataclasses import MISSING, Field, fields
from typing import Any

import pytest
from pydantic_ai.capabilities import AbstractCapability

from skillshelf import Skills
from skillshelf.capability.options import OPTION_GROUPS

from repo_paths import REPO

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
    assert packages['capability/'] > packages['workspace/'] > packages['content/'] > packages['markdown/']
    assert packages['cli/'] > packages['capability/']
    assert modules['capability/skills.py'] > modules['capability/dispatch.py'] > modules['capability/meta_tools.py']


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
