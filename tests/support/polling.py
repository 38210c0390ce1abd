"""Waiting in tests for something another thread or process does."""

from __future__ import annotations

import time
from typing import Any, Callable


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0) -> None:
    """Poll ``predicate`` until it holds; an assertion error after ``timeout`` seconds (generous:
    the machine may be loaded, and only a failing test waits that long)."""
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, "timed out"
        time.sleep(0.01)
