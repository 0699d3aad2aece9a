"""A skill's content is read off the agent's event loop: a store that answers over the network (an MCP server, an
application's own database) must not hold up the other runs on the loop while it answers."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from pydantic_ai import Agent
from pydantic_ai.messages import TextPart

from skillshelf import Skill, Skills
from skillshelf.content import TextContent

from scripted_model import Script, call, tool_returns


def on_the_loop() -> bool:
    """Whether the caller runs on an event loop's thread (an asyncio loop is running there)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@dataclass(frozen=True)
class RemoteContent(TextContent):
    """Content that records, for each read, whether it was made on the event loop."""

    reads: list[tuple[str, bool]] = field(default_factory=list[tuple[str, bool]])

    def instructions(self, max_chars: int | None = None) -> str:
        self.reads.append(('instructions', on_the_loop()))
        return super().instructions(max_chars)

    def list_files(self) -> list[str]:
        self.reads.append(('list_files', on_the_loop()))
        return super().list_files()

    def read_bytes(self, path: str, max_bytes: int) -> bytes:
        self.reads.append(('read_bytes', on_the_loop()))
        return super().read_bytes(path, max_bytes)


async def test_loading_and_reading_a_skill_never_reads_its_content_on_the_event_loop() -> None:
    content = RemoteContent('Check the notes in NOTES.md.', {'NOTES.md': b'Remote notes.'}, origin='store://notes')
    skill = Skill.from_content('remote-notes', 'Reads notes kept in a remote store.', content)
    script = Script(
        [[call('load_skill', name='remote-notes')], [call('read_skill_resource', name='remote-notes', path='NOTES.md')]]
    )
    result = await Agent(script.model(), capabilities=[Skills(skills=[skill])]).run('read the notes')
    [loaded] = tool_returns(result.all_messages(), 'load_skill')
    assert 'Check the notes in NOTES.md.' in loaded
    assert tool_returns(result.all_messages(), 'read_skill_resource') == ['Remote notes.']
    assert {what for what, _ in content.reads} == {'instructions', 'list_files', 'read_bytes'}
    assert [what for what, on_loop in content.reads if on_loop] == []


async def test_a_users_slash_command_reads_the_skill_off_the_event_loop() -> None:
    content = RemoteContent('Summarise the notes.', origin='store://notes')
    skill = Skill.from_content('remote-notes', 'Reads notes kept in a remote store.', content)
    script = Script([[TextPart('summarised')]])
    await Agent(script.model(), capabilities=[Skills(skills=[skill])]).run('/remote-notes weekly')
    assert 'Summarise the notes.' in str(script.requests[0].messages)
    assert 'instructions' in {what for what, _ in content.reads}
    assert [what for what, on_loop in content.reads if on_loop] == []
