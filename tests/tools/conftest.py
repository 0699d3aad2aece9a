"""Fixtures of the workspace tool tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace

from skillshelf import SkillSandbox

from sandbox_support import BWRAP_PROBLEM


@pytest.fixture(params=['local', 'sandbox'])
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> AbstractCapability[Any]:
    """The run's workspace: pydantic-ai's `LocalWorkspace`, or skillshelf's bubblewrap `SkillSandbox`."""
    if request.param == 'local':
        (tmp_path / 'work').mkdir()
        return LocalWorkspace(tmp_path / 'work')
    if BWRAP_PROBLEM is not None:
        pytest.skip(BWRAP_PROBLEM)
    return SkillSandbox(tmp_path / 'workspaces')
