"""The commands that show what the model receives: `show` a loaded skill, the `catalog`, `search` results.

Each replays a real agent run (see `probe`), so what they print is what the model is sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..._text import one_line
from .options import (
    DEFAULT_CATALOG_BUDGET,
    SEARCH_LIMIT_MAX,
    AsJson,
    Directories,
    Hybrid,
    ImportPaths,
    build_capability,
    require_skills,
)
from .render import emit_json, fail, note_skipped, out, score_bar, size_json, size_text

if TYPE_CHECKING:
    from ...skill import Skill

__all__ = ('catalog', 'search', 'show')


def show(
    name: Annotated[str, typer.Argument(help='The skill to show.', show_default=False, metavar='NAME')],
    directories: Directories = None,
    skill: ImportPaths = None,
    resource: Annotated[
        str | None,
        typer.Option('--resource', '-r', help='Also print this file of the skill, as read_skill_resource returns it.'),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Show what load_skill returns to the model for a skill, its files and the tools it unlocks."""
    from .probe import replay, size_of, skill_tools, tool_json

    capability = build_capability(directories, skill)
    found = capability.library.get(name)
    if found is None:
        skipped = [item for item in capability.library.skipped if name in item.path.parts]
        if not skipped:
            require_skills(capability.library, directories)
        reason = ''.join(f'\n{item.path} was skipped: {item.problem}' for item in skipped)
        close = capability.library.closest_names(name)
        hint = f' Did you mean {" or ".join(repr(other) for other in close)}?' if close else ''
        fail(f'There is no skill named {name!r}.{hint} `skillshelf list` shows them all.{reason}')
    capture = replay(capability, [('load_skill', {'name': name})])
    loaded = str(capture.returns[0].content) if capture.returns else ''
    tools = skill_tools(capture.requests[-1].function_tools)
    resources = [(path, _resource_bytes(found, path)) for path in found.list_resources()]
    content = _read_resource(found, resource) if resource is not None else None
    if as_json:
        data: dict[str, Any] = {
            'name': name,
            'load_skill': loaded,
            'size': size_json(size_of(loaded)),
            'resources': [{'path': path, 'bytes': size} for path, size in resources],
            'tools': [tool_json(tool) for tool in tools],
        }
        if resource is not None:
            data['resource'] = {'path': resource, 'content': content}
        emit_json(data)
        return
    console = out()
    console.print(
        Panel(
            Text(loaded),
            title=f'[bold]load_skill({name!r})[/] returns',
            subtitle=size_text(size_of(loaded)),
            border_style='cyan',
        )
    )
    if resources:
        table = Table(title='Files', title_justify='left', show_edge=False)
        table.add_column('Path', style='cyan', overflow='fold')
        table.add_column('Bytes', justify='right')
        for path, size in resources:
            table.add_row(path, f'{size:,}' if size is not None else '?')
        console.print(table)
    if tools:
        table = Table(title='Tools unlocked', title_justify='left', show_edge=False)
        table.add_column('Tool', style='cyan', overflow='fold')
        table.add_column('Description', overflow='fold')
        for tool in tools:
            table.add_row(tool.name, one_line(tool.description or '', 100))
        console.print(table)
    if content is not None:
        console.print(Panel(Text(content), title=f'[bold]{escape(resource or "")}[/]', border_style='dim'))


def _resource_bytes(found: Skill[Any], path: str) -> int | None:
    from ...content import MAX_RESOURCE_BYTES
    from ...errors import ResourceError

    if found.folder is not None and (found.folder / path).is_file():
        return (found.folder / path).stat().st_size
    try:
        return len(found.content.read_bytes(path, MAX_RESOURCE_BYTES))
    except ResourceError:
        return None


def _read_resource(found: Skill[Any], path: str) -> str:
    from ...errors import ResourceError

    try:
        return found.read_resource(path)
    except ResourceError as error:
        fail(f'cannot read {path!r} from {found.name!r}: {error}')


def catalog(
    directories: Directories = None,
    skill: ImportPaths = None,
    budget: Annotated[
        int, typer.Option('--budget', '-b', min=0, help='Characters the catalog may use in the instructions.')
    ] = DEFAULT_CATALOG_BUDGET,
    as_json: AsJson = False,
) -> None:
    """Show exactly the instructions and tool definitions the model receives on the first request.

    Also shows their size, and the size had every skill's instructions and tools been put in context at once.
    """
    from .probe import Size, replay, size_of, skill_tools, tool_json, tools_size

    capability = build_capability(directories, skill, budget)
    require_skills(capability.library, directories)
    note_skipped(capability.library.skipped, as_json)
    names = list(capability.library.skills)
    capture = replay(capability, [('load_skill', {'name': name}) for name in names])
    first = capture.requests[0]
    instructions = first.instructions or ''
    tools = first.function_tools
    first_size = size_of(instructions) + tools_size(tools)
    loaded_size = sum((size_of(str(part.content)) for part in capture.returns), Size(0))
    every_tool = skill_tools(capture.requests[-1].function_tools) if names else []
    everything = loaded_size + tools_size(every_tool)
    if as_json:
        emit_json(
            {
                'instructions': instructions,
                'tools': [tool_json(tool) for tool in tools],
                'first_request': {
                    **size_json(first_size),
                    'instructions': size_json(size_of(instructions)),
                    'tools': size_json(tools_size(tools)),
                },
                'every_skill_in_context': {
                    **size_json(everything),
                    'skills': len(names),
                    'instructions': size_json(loaded_size),
                    'tools': size_json(tools_size(every_tool)),
                },
            }
        )
        return
    console = out()
    console.print(
        Panel(
            Text(instructions),
            title='[bold]Instructions[/] on the first request',
            subtitle=size_text(size_of(instructions)),
            border_style='cyan',
        )
    )
    table = Table(title='Tool definitions on the first request', title_justify='left', show_edge=False)
    table.add_column('Tool', style='cyan', overflow='fold')
    table.add_column('Chars', justify='right')
    table.add_column('Description', overflow='fold')
    for tool in tools:
        table.add_row(tool.name, f'{tools_size([tool]).characters:,}', one_line(tool.description or '', 90))
    console.print(table)
    sizes = Table(show_header=False, show_edge=False, box=None, padding=(0, 2))
    sizes.add_column(style='bold', overflow='fold')
    sizes.add_column(justify='right', overflow='fold')
    sizes.add_row('First request (catalog + tools)', size_text(first_size))
    sizes.add_row(
        f'Every skill in context ({len(names)} skills, {len(every_tool)} tools)',
        size_text(everything),
    )
    if everything.characters:
        sizes.add_row('Kept off the first request', f'{max(0, 1 - first_size.characters / everything.characters):.1%}')
    console.print()
    console.print(sizes)


def search(
    query: Annotated[
        str, typer.Argument(help='What a user would ask for, in a few words.', show_default=False, metavar='QUERY')
    ],
    directories: Directories = None,
    skill: ImportPaths = None,
    limit: Annotated[
        int, typer.Option('--limit', '-n', min=1, max=SEARCH_LIMIT_MAX, help='How many results, like search_skills.')
    ] = 5,
    hybrid: Hybrid = False,
    as_json: AsJson = False,
) -> None:
    """Show what search_skills returns to the model for a query, with scores."""
    from ...capability.meta_tools import SkillMatch
    from .probe import replay

    # With no catalog, `search_skills` is offered whatever the library's size (a small library lists every skill
    # whole and leaves it out): this command shows what it would return.
    capability = build_capability(directories, skill, 0, hybrid=hybrid)
    require_skills(capability.library, directories)
    note_skipped(capability.library.skipped, as_json)
    capture = replay(capability, [('search_skills', {'query': query, 'limit': limit})])
    result: Any = capture.returns[0].content if capture.returns else []
    matches = (
        [match for match in cast('list[Any]', result) if isinstance(match, SkillMatch)]
        if isinstance(result, list)
        else []
    )
    message = result if isinstance(result, str) else None
    if as_json:
        emit_json(
            {
                'query': query,
                'results': [
                    {'name': match.name, 'score': match.score, 'description': match.description} for match in matches
                ],
                'message': message,
            }
        )
        return
    console = out()
    if message is not None:
        console.print(message, style='yellow')
        return
    table = Table(show_edge=False)
    table.add_column('#', justify='right', style='dim')
    table.add_column('Skill', style='bold cyan', overflow='fold')
    table.add_column('Score', no_wrap=True)
    table.add_column('Description', overflow='fold')
    for rank, match in enumerate(matches, 1):
        table.add_row(
            str(rank),
            match.name,
            Text.assemble(f'{match.score:.3f} ', (score_bar(match.score), 'green')),
            match.description,
        )
    console.print(table)
