"""What the attack tests do to a skill folder after the library read it: `swap(folder, outside)` replaces `folder`
by a link to `outside`, by a copy of it, or deletes it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def swap_for_outside_link(folder: Path, outside: Path) -> None:
    """Replace the skill `folder` by a symlink to `outside`."""
    shutil.rmtree(folder)
    folder.symlink_to(outside, target_is_directory=True)


def swap_for_relative_outside_link(folder: Path, outside: Path) -> None:
    """Replace the skill `folder` by a relative symlink (`../...`) to `outside`."""
    shutil.rmtree(folder)
    folder.symlink_to(os.path.relpath(outside, folder.parent), target_is_directory=True)


def swap_for_another_folder(folder: Path, outside: Path) -> None:
    """Replace the skill `folder` by a real folder, a copy of `outside`."""
    # Copied before the old folder is deleted, so the new one cannot reuse its inode number (a folder deleted and
    # made again may: then it is read as the library's new content, which is still inside the library).
    staging = folder.with_name('staging')
    shutil.copytree(outside, staging)
    shutil.rmtree(folder)
    staging.rename(folder)


def delete(folder: Path, outside: Path) -> None:
    """Delete the skill `folder` (`outside` is not used: every swap takes the same arguments)."""
    shutil.rmtree(folder)
