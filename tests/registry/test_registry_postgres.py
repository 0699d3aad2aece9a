"""A fleet on one PostgreSQL registry (a real server, see `postgres_server.py`): two worker processes, each with its
own agent; a skill one publishes is loaded by the other's next run, without a restart.

Run as a script, this module is a worker: it reads commands on stdin and answers each with one JSON line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from repo_paths import python_path_with_support
from sandbox_support import needs_bwrap
from warnings_said import said


class Worker:
    """A worker process: `run NAME` loads a skill in a real agent run, `publish FOLDER` publishes one."""

    def __init__(self, url: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).parent,
            env=python_path_with_support(),  # the worker imports `scripted_model`
        )

    def ask(self, command: str) -> dict[str, Any]:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(command + '\n')
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, f'the worker ended (exit code {self.process.wait()})'
        return json.loads(line)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(timeout=60) == 0


def test_a_skill_published_by_one_worker_is_loaded_by_the_others_next_run(
    postgres_url: str,
    tmp_path: Path,
) -> None:
    from skillshelf.registry.skill_registry import SkillRegistry

    SkillRegistry(postgres_url).publish_markdown(
        '---\nname: deploy\ndescription: Deploy the service.\n---\nRun deploy.sh.\n'
    )
    folder = tmp_path / 'rollback'
    folder.mkdir()
    (folder / 'SKILL.md').write_text(
        '---\nname: rollback\ndescription: Roll a deploy back.\n---\nRun rollback.sh with the release id.\n',
        encoding='utf-8',
    )
    (folder / 'checklist.md').write_text('1. Tell the channel.', encoding='utf-8')
    first, second = Worker(postgres_url), Worker(postgres_url)
    try:
        before = second.ask('run deploy')
        assert before['catalog'] == ['deploy']
        assert 'Run deploy.sh.' in before['loaded']

        assert first.ask(f'publish {folder}') == {'published': 'rollback'}

        after = second.ask('run rollback checklist.md')
        assert after['catalog'] == ['deploy', 'rollback']
        assert 'Run rollback.sh with the release id.' in after['loaded']
        assert after['read'] == '1. Tell the channel.'
        assert first.ask('run rollback')['catalog'] == ['deploy', 'rollback']
    finally:
        first.close()
        second.close()


@needs_bwrap
def test_a_skill_published_to_postgresql_runs_its_script_with_every_byte(
    postgres_database: str, tmp_path: Path
) -> None:
    from pydantic_ai import Agent

    from skillshelf import Skills, SkillSandbox
    from skillshelf.registry.skill_registry import SkillRegistry

    from binary_skills import BINARY, CANVAS, expected_report, write_canvas
    from scripted_model import Script, call, tool_returns

    SkillRegistry(postgres_database).publish(write_canvas(tmp_path / 'lib'))
    script = Script(
        [
            [call('load_skill', name=CANVAS)],
            [call('run_skill_script', name=CANVAS, script='scripts/inspect.py', args=list(BINARY))],
        ]
    )
    capabilities: list[Any] = [
        SkillSandbox(tmp_path / 'workspaces'),
        Skills[None](sources=[SkillRegistry(postgres_database)], scripts=True),
    ]
    agent = Agent(script.model(), capabilities=capabilities)
    ran = str(tool_returns(agent.run_sync('make a poster').all_messages(), 'run_skill_script')[0])
    assert ran.startswith('scripts/inspect.py exited with code 0.'), ran
    assert ran.split('Output:\n', 1)[1].splitlines() == expected_report()


def test_a_password_in_the_url_is_never_shown(postgres_database: str, tmp_path: Path) -> None:
    """The server trusts local connections, so a URL with a password connects; the password must still never reach
    a repr, a label, a skill's origin, a warning or an error."""
    import warnings

    import sqlalchemy as sa

    from skillshelf import SkillError, Skills
    from skillshelf.registry.skill_registry import SkillRegistry

    secret = 'hunter2-' + tmp_path.name[-6:]
    url = sa.make_url(postgres_database).set(password=secret).render_as_string(hide_password=False)
    registry = SkillRegistry(url)
    registry.publish_markdown('---\nname: notes\ndescription: Notes.\n---\nBody.\n')
    shown = [repr(registry), registry.label, repr(SkillRegistry(url, pins={'notes': 1}))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        capability = Skills[None](sources=[registry])
        shown += [skill.origin or '' for skill in capability.library.skills.values()]
        with registry.engine.begin() as connection:
            connection.execute(sa.text('DROP TABLE skillshelf_catalog CASCADE'))
            connection.execute(sa.text('UPDATE skillshelf_registry SET version = version + 1'))
        capability.library.refresh()  # the catalog is gone: a warning, and the skills read last are kept
        with pytest.raises(SkillError) as raised:
            registry.publish_markdown('---\nname: more\ndescription: More.\n---\nBody.\n')
    shown += [*said(caught, Warning), str(raised.value)]
    for broken in (url.replace('/test_', '/missing_'), url.replace('host=', 'host=/nonexistent'), url + '&port=x'):
        with pytest.raises(SkillError) as refused:
            SkillRegistry(broken)
        shown.append(str(refused.value))
    assert any('skillshelf_catalog' in text for text in shown)  # the failures were reported...
    assert not [text for text in shown if secret in text]  # ...and the password never with them


def _serve(url: str) -> None:
    """The worker: one agent for the process's life, as a service keeps it."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import TextPart

    from skillshelf import Skills
    from skillshelf.registry.skill_registry import SkillRegistry

    from scripted_model import Script, call, tool_returns

    registry = SkillRegistry(url)
    capability = Skills[Any](sources=[registry])
    for line in sys.stdin:
        command, *arguments = line.split()
        if command == 'publish':
            answer: dict[str, Any] = {'published': registry.publish(arguments[0]).name}
        else:
            name = arguments[0]
            steps = [[call('load_skill', name=name)]]
            steps += [[call('read_skill_resource', name=name, path=path)] for path in arguments[1:]]
            script = Script([*steps, [TextPart('done')]])
            messages = Agent(script.model(), capabilities=[capability]).run_sync('go').all_messages()
            reads = tool_returns(messages, 'read_skill_resource')
            answer = {
                'catalog': list(capability.library.skills),
                'loaded': str(tool_returns(messages, 'load_skill')[0]),
                'read': str(reads[0]) if reads else None,
            }
        print(json.dumps(answer), flush=True)


if __name__ == '__main__':
    _serve(sys.argv[1])
