"""Waiting in tests for something another thread or process does."""

from __future__ import annotations

import signal
import subprocess
import time
from typing import Any, Callable


def eventually(predicate: Callable[[], Any], timeout: float = 10.0, period: float = 0.02) -> bool:
    """Poll ``predicate`` every ``period`` s for up to ``timeout`` s; whether it came to hold.

    Returns a bool, so a test can assert on it with a message of its own (what it waited for,
    the figures it saw); the predicate is checked once more at the deadline.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(period)
    return bool(predicate())


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0) -> None:
    """Poll ``predicate`` until it holds; an assertion error after ``timeout`` seconds (generous:
    the machine may be loaded, and only a failing test waits that long)."""
    assert eventually(predicate, timeout, period=0.01), "timed out"


def interrupt(proc: subprocess.Popen, timeout: float = 60.0) -> float:
    """Send ``proc`` SIGINT (Ctrl-C), wait up to ``timeout`` s for it to exit, and return how
    many seconds that took (kills it and raises ``subprocess.TimeoutExpired`` if it does not)."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=timeout)
    finally:
        proc.kill()
    return time.monotonic() - sent
