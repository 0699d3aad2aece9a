"""A lock file holds an MCP server's skills to the digests that were reviewed: written by `skillshelf lock` from the
server's listing (nothing fetched), checked by `Skills(lock=...)` against what the server lists now."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillshelf import MCPSkillSource, Skills, SkillWarning
from skillshelf.authoring.cli.app import app

from mcp_servers import http_server, write_served_skills

runner = CliRunner(env={'COLUMNS': '200', 'NO_COLOR': '1'})


def test_a_changed_byte_on_the_server_refuses_that_skill_and_the_others_load(tmp_path: Path) -> None:
    served = write_served_skills(tmp_path / 'served')
    lock = tmp_path / 'skills.lock'
    with http_server(served) as running:
        written = runner.invoke(app, ['lock', '--source', json.dumps({'mcp': running.url}), '-o', str(lock)])
        assert written.exit_code == 0, written.output
        with_lock = Skills(sources=[MCPSkillSource(running.url)], lock=lock)
        assert sorted(with_lock.library.skills) == ['deploy', 'greet', 'review']
    held = json.loads(lock.read_text(encoding='utf-8'))['skills']['greet']['files']
    script = (served / 'greet' / 'scripts' / 'hello.py').read_bytes()
    assert held['scripts/hello.py'] == hashlib.sha256(script).hexdigest()  # the server's digest, as the file's

    changed = tmp_path / 'changed'
    shutil.copytree(served, changed)
    (changed / 'greet' / 'scripts' / 'hello.py').write_bytes(script.replace(b'hello from', b'HELLO FROM'))
    with http_server(changed) as running:
        with pytest.warns(SkillWarning, match=r'greet.*scripts/hello\.py'):
            refused = Skills(sources=[MCPSkillSource(running.url)], lock=lock)
        assert sorted(refused.library.skills) == ['deploy', 'review']
        assert 'greet' in refused.library.refused
        checked = runner.invoke(app, ['lock', '--source', json.dumps({'mcp': running.url}), '-o', str(lock), '--check'])
    assert checked.exit_code == 1
    assert 'changed scripts/hello.py' in checked.stdout
