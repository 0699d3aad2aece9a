"""Pruning a registry's old revisions (`SkillRegistry.prune`, `skillshelf prune`): the latest revisions, the live
one, a removed skill's removal, pinned revisions and those live at pinned registry versions stay, with every file
they use; the other revisions go, and so do the bytes nothing kept uses. On SQLite and a real PostgreSQL server."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from skillshelf import LibraryOptions, SkillError, SkillLibrary
from skillshelf.authoring.cli.app import app
from skillshelf.lock import LockEntry, Lockfile
from skillshelf.registry import SkillRegistry
from skillshelf.registry.schema import blobs

from skill_files import skill_md

runner = CliRunner(env={'COLUMNS': '200', 'NO_COLOR': '1'})


def publish_revisions(registry: SkillRegistry, name: str, count: int) -> list[int]:
    """Publish `count` revisions of `name`, each with a file of its own bytes and one shared by all; the registry
    version of each."""
    versions: list[int] = []
    for number in range(1, count + 1):
        files = {'own.txt': f'{name} revision {number}', 'shared.txt': 'the same in every revision'}
        registry.publish_markdown(skill_md(name, f'{name} v{number}.'), files)
        versions.append(registry.current_version())
    return versions


def revisions_of(registry: SkillRegistry, name: str) -> list[int]:
    return [entry.revision for entry in registry.history(name)]


def stored_blobs(registry: SkillRegistry) -> int:
    with registry.connect() as connection:
        return connection.execute(sa.select(sa.func.count()).select_from(blobs)).scalar_one()


def test_prune_keeps_the_latest_the_live_and_the_pinned_revisions(registry_url: str) -> None:
    registry = SkillRegistry(registry_url)
    versions = publish_revisions(registry, 'deploy', 6)
    publish_revisions(registry, 'notes', 2)
    registry.rollback('deploy', to=2)  # revision 7, a copy of 2, is live
    version_before = registry.current_version()
    assert stored_blobs(registry) == 6 + 2 + 1  # each revision's own file, and the shared one once

    preview = registry.prune(2, pins={'deploy': 3}, versions=[versions[3]], dry_run=True)
    assert (preview.revisions, preview.blobs) == (3, 2)  # deploy 1, 2 and 5; the own bytes of 1 and 5
    assert revisions_of(registry, 'deploy') == [1, 2, 3, 4, 5, 6, 7]  # a dry run deletes nothing

    done = registry.prune(2, pins={'deploy': 3}, versions=[versions[3]])
    assert done == preview
    assert done.bytes == len('deploy revision 1') + len('deploy revision 5')
    # 6 and 7 are the latest two (7 live), 3 is pinned, 4 was live at the pinned version. Revision 2 goes, but its
    # bytes stay: revision 7, its rollback copy, uses them.
    assert revisions_of(registry, 'deploy') == [3, 4, 6, 7]
    assert revisions_of(registry, 'notes') == [1, 2]
    assert stored_blobs(registry) == 9 - 2
    assert registry.current_version() == version_before  # workers see no change

    library = SkillLibrary.build(options=LibraryOptions(sources=[SkillRegistry(registry_url)]))
    assert library.skills['deploy'].load_instructions() == 'deploy v2.'
    assert library.skills['deploy'].content.read_bytes('own.txt', 100) == b'deploy revision 2'
    pinned = SkillLibrary.build(options=LibraryOptions(sources=[SkillRegistry(registry_url, version=versions[3])]))
    assert pinned.skills['deploy'].content.read_bytes('own.txt', 100) == b'deploy revision 4'


def test_a_removed_skill_keeps_its_removal_and_a_pruned_revision_cannot_be_rolled_back_to(registry_url: str) -> None:
    registry = SkillRegistry(registry_url)
    publish_revisions(registry, 'deploy', 3)
    registry.remove('deploy')  # revision 4, the head
    assert registry.prune(1).revisions == 3
    assert revisions_of(registry, 'deploy') == [4]
    with pytest.raises(SkillError, match="'deploy' has no earlier revision to roll back to"):
        registry.rollback('deploy')
    with pytest.raises(SkillError, match='`keep` must be a number of revisions from 1'):
        registry.prune(0)


def test_the_prune_command_keeps_what_a_lock_file_and_pins_name(registry_url: str, tmp_path: Path) -> None:
    registry = SkillRegistry(registry_url)
    publish_revisions(registry, 'deploy', 5)
    lock = tmp_path / 'skills.lock'
    Lockfile({'deploy': LockEntry('registry', 'sha256:0', {}, revision='2')}).write(lock)

    shown = runner.invoke(
        app, ['prune', '-r', registry_url, '--keep', '1', '--lock', str(lock), '--pin', 'deploy=3', '--dry-run']
    )
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith('would delete 2 revisions and 2 stored file contents (34 bytes) from registry ')
    assert revisions_of(registry, 'deploy') == [1, 2, 3, 4, 5]

    done = runner.invoke(app, ['prune', '-r', registry_url, '--keep', '1', '--lock', str(lock), '--pin', 'deploy=3'])
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith('deleted 2 revisions')
    assert revisions_of(registry, 'deploy') == [2, 3, 5]

    wrong = runner.invoke(app, ['prune', '-r', registry_url, '--keep', '1', '--pin', 'deploy'])
    assert wrong.exit_code == 1
    assert '--pin takes NAME=REVISION, such as deploy=3' in wrong.stderr
