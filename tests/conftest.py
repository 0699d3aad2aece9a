"""Shared helpers: a scripted `FunctionModel` that records what the model received on every request, a hang
detector, and the ways the attack tests swap a skill folder."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponsePart, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from postgres_server import postgres_url  # noqa: F401  (one throwaway PostgreSQL server for the session)
from skill_fixtures import forecast_calls

pytest_plugins = ('reliability.plugin',)  # writes docs/reliability.md after a full green run

REPO = Path(__file__).resolve().parent.parent
SAMPLE_SKILLS = REPO / 'skills'
META = ['load_skill', 'read_skill_resource', 'search_skills', 'unload_skill']
"""The meta-tools' names, sorted, as the model sees them."""


@dataclass
class Request:
    """What the model received on one request."""

    tools: list[str]
    """Tool names on the wire, sorted."""
    instructions: str | None
    messages: list[ModelMessage]


@dataclass
class Script:
    """A model that plays back one response per request and records every request."""

    steps: Sequence[Sequence[ModelResponsePart]]
    requests: list[Request] = field(default_factory=list[Request])

    def model(self) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.requests.append(
                Request(sorted(tool.name for tool in info.function_tools), info.instructions, list(messages))
            )
            step = len(self.requests) - 1
            return ModelResponse(parts=list(self.steps[step]) if step < len(self.steps) else [TextPart('done')])

        return FunctionModel(respond)


def call(tool: str, **args: Any) -> ToolCallPart:
    """A tool call part, for scripts."""
    return ToolCallPart(tool, args)


def tool_returns(messages: Sequence[ModelMessage], tool: str) -> list[Any]:
    """The contents of every return of `tool` in `messages`, in order."""
    from pydantic_ai.messages import ModelRequest, ToolReturnPart

    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == tool
    ]


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


T = TypeVar('T')


def finishes(function: Callable[[], T], seconds: float) -> T:
    """`function()` run in a thread, asserting it ends within `seconds`: a hang detector for hostile inputs, not a
    speed test (the bound is generous), so a stuck parse fails the test instead of hanging the suite."""
    results: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            results.append(function())
        except BaseException as error:  # re-raised below, in the test's thread
            errors.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f'still running after {seconds} s'
    if errors:
        raise errors[0]
    return results[0]


def swap_for_outside_link(folder: Path, outside: Path) -> None:
    """Replace the skill `folder` by a symlink to `outside`."""
    shutil.rmtree(folder)
    folder.symlink_to(outside, target_is_directory=True)


def swap_for_relative_outside_link(folder: Path, outside: Path) -> None:
    """Replace the skill `folder` by a relative symlink (`../...`) to `outside`."""
    shutil.rmtree(folder)
    folder.symlink_to(os.path.relpath(outside, folder.parent), target_is_directory=True)
