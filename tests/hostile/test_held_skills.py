"""A skill stays the skill discovery accepted: its folder cannot be swapped, nor its name impersonated.

- Every read of a skill's files, its `SKILL.md` included, happens beneath the folder discovery accepted, so
  `load_skill` after a swap is refused with a message that says the library changed (issue 23, class 2).
- A `SKILL.md` with other hard links is skipped unless `allow_hard_links` (class 7).
- Names that look alike (Unicode TS #39 skeletons) are a conflict, like duplicates (class 5).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skillshelf import LibraryOptions, Skill, SkillConflictError, SkillLibrary, Skills

from folder_swaps import delete, swap_for_another_folder, swap_for_outside_link, swap_for_relative_outside_link
from reliability.ledger import case
from scripted_model import tool_returns
from skill_files import write_skill
from warnings_said import said

SECRET = 'TOP-SECRET-9911'


def load_once(capability: Skills[Any], name: str) -> str:
    """The `load_skill` reply of a run whose model loads `name`, without the library being read again first."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('load_skill', {'name': name})])
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(FunctionModel(respond), capabilities=[capability])
    [reply] = tool_returns(agent.run_sync('go').all_messages(), 'load_skill')
    return reply


@pytest.mark.parametrize(
    ('swap', 'change'),
    [
        (swap_for_outside_link, 'it now points outside its library directory'),
        (swap_for_relative_outside_link, 'it now points outside its library directory'),
        (swap_for_another_folder, 'it was replaced by another folder'),
        (delete, 'it was deleted or moved'),
    ],
)
def test_load_skill_after_the_folder_was_swapped_never_reads_through_it(
    tmp_path: Path, swap: object, change: str
) -> None:
    library = tmp_path / 'lib'
    folder = write_skill(library, 'demo', 'Inside instructions.')
    outside = write_skill(tmp_path / 'elsewhere', 'demo', SECRET)
    capability = Skills(library, auto_reload=False)

    swap(folder, outside)  # type: ignore[operator]
    reply = load_once(capability, 'demo')

    assert SECRET not in reply
    assert reply == (
        f"The skill 'demo' can no longer be read (the skill folder changed after the library was read ({change}); "
        'the library must be read again). Use another skill or carry on without it.'
    )
    case(
        'Resource reads',
        f'`load_skill` after the skill folder was swapped ({swap.__name__.replace("_", " ")})',  # type: ignore[attr-defined]
        f'refused, nothing read through it: {reply}',
        root=tmp_path,
    )


def test_the_next_run_reads_the_changed_library_again(tmp_path: Path) -> None:
    library = tmp_path / 'lib'
    folder = write_skill(library, 'demo', 'Inside instructions.')
    capability = Skills(library)
    swap_for_another_folder(folder, write_skill(tmp_path / 'elsewhere', 'demo', 'Replaced instructions.'))

    assert 'Replaced instructions.' in load_once(capability, 'demo')


def test_a_hard_linked_skill_md_is_skipped_unless_hard_links_are_allowed(tmp_path: Path) -> None:
    library = tmp_path / 'lib'
    folder = write_skill(library, 'demo', 'Inside instructions.')
    os.link(folder / 'SKILL.md', tmp_path / 'other-name.md')

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        refused = Skills(library)
    allowed = Skills(library, allow_hard_links=True)

    assert 'demo' not in refused.library.skills
    [skipped] = refused.library.skipped
    assert 'other hard links' in skipped.problem
    assert '`allow_hard_links`' in skipped.problem
    assert said(caught)
    assert 'Inside instructions.' in load_once(allowed, 'demo')
    case('Skill files', 'a SKILL.md with a second hard link', f'skipped unless allowed: {skipped.problem}')


LOOK_ALIKES = [
    ('deploy', 'dеplоy'),  # Cyrillic е and о
    ('pdf', 'рdf'),  # Cyrillic р
    ('skill', 'ѕkill'),  # Cyrillic ѕ
    ('scope', 'ѕсоре'),  # all Cyrillic
    ('alpha', 'αlpha'),  # Greek α
]


@pytest.mark.parametrize(('trusted', 'impostor'), LOOK_ALIKES)
def test_a_folder_whose_name_looks_like_another_skill_is_skipped(tmp_path: Path, trusted: str, impostor: str) -> None:
    first, second = tmp_path / 'first', tmp_path / 'second'
    write_skill(first, trusted)
    write_skill(second, impostor)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        library = SkillLibrary.build(options=LibraryOptions(directories=[first, second]))

    assert list(library.skills) == [trusted]
    [skipped] = library.skipped
    assert skipped.path == second / impostor
    assert f'its name {impostor!r} looks like {trusted!r}' in skipped.problem
    assert len(said(caught)) == 1
    case('Skill files', f'a folder named {impostor!r} beside {trusted!r}', f'skipped: {skipped.problem}', root=tmp_path)


def test_look_alike_names_in_one_directory_keep_the_first_in_name_order(tmp_path: Path) -> None:
    write_skill(tmp_path, 'deploy')
    write_skill(tmp_path, 'dеplоy')

    with warnings.catch_warnings(record=True):
        warnings.simplefilter('always')
        library = SkillLibrary.build(options=LibraryOptions(directories=[tmp_path]))

    assert list(library.skills) == ['deploy']  # 'd' + ASCII 'e' sorts before 'd' + Cyrillic 'е'


def test_python_skills_with_look_alike_names_are_refused() -> None:
    with pytest.raises(SkillConflictError, match="two Python skills are named 'deploy' and 'dеplоy', which look alike"):
        SkillLibrary.build([Skill('deploy', 'Deploys.'), Skill('dеplоy', 'Impersonates.')])


def test_a_folder_that_looks_like_a_python_skill_is_refused(tmp_path: Path) -> None:
    write_skill(tmp_path, 'dеplоy')
    with pytest.raises(
        SkillConflictError, match=r"the Python skill 'deploy' and the folder .* have names that look alike"
    ):
        SkillLibrary.build([Skill('deploy', 'Deploys.')], LibraryOptions(directories=[tmp_path]))


@pytest.mark.parametrize('names', [('deploy', 'deploy-v2'), ('café', 'cafe'), ('日本語', '日本'), ('pdf', 'pdfs')])
def test_names_that_only_differ_are_not_confused(tmp_path: Path, names: tuple[str, str]) -> None:
    for name in names:
        write_skill(tmp_path, name)
    library = SkillLibrary.build(options=LibraryOptions(directories=[tmp_path]))

    assert sorted(library.skills) == sorted(names)
