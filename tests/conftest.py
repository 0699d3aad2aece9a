"""Pytest fixtures and plugins for the whole suite; the helpers themselves live in `support/` (on `sys.path`
through `pythonpath` in `pyproject.toml`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelResponsePart

from postgres_server import (  # noqa: F401  (one throwaway server for the session)
    postgres_database,
    postgres_url,
    registry_url,
)
from sandbox_support import intruder  # noqa: F401  (a second Unix user, for the hostile tests)
from scripted_model import Script
from skill_fixtures import forecast_calls

pytest_plugins = ('reliability.plugin',)  # writes docs/reliability.md after a full green run


@pytest.fixture
def make_script() -> Callable[..., Script]:
    def make(*steps: Sequence[ModelResponsePart]) -> Script:
        return Script(steps)

    return make


@pytest.fixture(autouse=True)
def clear_forecast_calls() -> Iterator[None]:
    """Every test starts and ends with no recorded `get_forecast` calls."""
    forecast_calls.clear()
    yield
    forecast_calls.clear()


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty `$SKILLSHELF_CACHE_DIR` for this test (index, vector and frontmatter caches)."""
    directory = tmp_path / 'cache'
    monkeypatch.setenv('SKILLSHELF_CACHE_DIR', str(directory))
    return directory
