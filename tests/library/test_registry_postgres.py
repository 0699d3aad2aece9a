"""A fleet on one PostgreSQL registry (a real server, see `postgres_server.py`): two worker processes, each with its
own agent; a skill one publishes is loaded by the other's next run, without a restart.

Run as a script, this module is a worker: it reads commands on stdin and answers each with one JSON line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from repo_paths import python_path_with_support


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
    from skillshelf.sources.registry import SkillRegistry

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


def _serve(url: str) -> None:
    """The worker: one agent for the process's life, as a service keeps it."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import TextPart

    from skillshelf import Skills
    from skillshelf.sources.registry import SkillRegistry

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
