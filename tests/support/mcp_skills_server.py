"""A FastMCP server that serves a folder of skills through the MCP Skills extension, with fastmcp's own providers,
for the tests of `MCPSkillSource`:

    python mcp_skills_server.py SKILLS [--http] [--port N] [--wrong-digest NAME] [--pid FILE]

Over stdio by default. With `--http`, streamable HTTP on 127.0.0.1 (port `N`, or one it picks), on a socket it
listens on before it prints the port (one line on stdout), so a client may connect at once. The folder is read on
every request (`SkillsDirectoryProvider(reload=True)`), so a test can add a skill. With `--wrong-digest NAME`, the
listing gives skill NAME's `SKILL.md` a digest its bytes do not have, through fastmcp's `SkillManifestProvider` (the
API for manifests kept apart from their files). `--pid FILE` writes its process id there, so a test can kill it.
"""

from __future__ import annotations

import argparse
import os
import socket
from collections.abc import Mapping
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.skills import Skill, SkillFile, SkillManifest
from fastmcp.skills.provider import SkillFileResource, SkillManifestProvider, SkillsDirectoryProvider

WRONG_DIGEST = 'sha256:' + '0' * 64


class Misdigested(SkillManifestProvider):
    """The skills of a folder, with one skill's `SKILL.md` listed under a digest that is not its bytes'."""

    def __init__(self, root: Path, wrong: str) -> None:
        super().__init__()
        self._skills = {
            folder.name: Skill.from_directory(folder)
            for folder in sorted(root.iterdir())
            if (folder / 'SKILL.md').is_file()
        }
        self._wrong = wrong

    async def load_manifests(self) -> Mapping[str, SkillManifest]:
        manifests = {name: skill.manifest for name, skill in self._skills.items()}
        listed = manifests[self._wrong]
        size = listed.files['SKILL.md'].size
        files = {**listed.files, 'SKILL.md': SkillFile(digest=WRONG_DIGEST, size=size)}
        manifests[self._wrong] = SkillManifest(frontmatter=listed.frontmatter, files=files)
        return manifests

    async def read_file(self, resource: SkillFileResource) -> bytes:
        return self._skills[resource.skill_path].files[resource.file_path]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('skills', type=Path)
    parser.add_argument('--http', action='store_true')
    parser.add_argument('--port', type=int, default=0)
    parser.add_argument('--wrong-digest')
    parser.add_argument('--pid', type=Path)
    arguments = parser.parse_args()
    if arguments.pid is not None:
        arguments.pid.write_text(str(os.getpid()), encoding='utf-8')
    provider = (
        Misdigested(arguments.skills, arguments.wrong_digest)
        if arguments.wrong_digest
        else SkillsDirectoryProvider(arguments.skills, reload=True)
    )
    server = FastMCP('test-skills', providers=[provider])
    if not arguments.http:
        server.run('stdio', show_banner=False)
        return
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(('127.0.0.1', arguments.port))
    listener.listen(128)
    port = listener.getsockname()[1]
    print(port, flush=True)
    server.run('http', show_banner=False, host='127.0.0.1', port=port, sockets=[listener], log_level='warning')


if __name__ == '__main__':
    main()
