"""A hang detector for hostile inputs: a stuck parse fails its test instead of hanging the suite."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

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
