"""Waiting in tests for something another thread or process does."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Mapping


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


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs; a zombie (exited, not yet reaped by its parent) counts as gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def outliving(pids: Mapping[str, int], timeout: float = 0.0) -> dict[str, int]:
    """The processes of ``pids`` (by name) still running after up to ``timeout`` s for all to end.

    Those are then SIGKILLed, so a failing test leaves nothing running; the caller asserts on
    what is returned."""
    eventually(lambda: not any(alive(pid) for pid in pids.values()), timeout, period=0.2)
    left = {name: pid for name, pid in pids.items() if alive(pid)}
    for pid in left.values():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return left


def listening_port(run_dir: Path, running: Callable[[], Any], timeout: float = 300.0) -> int | None:
    """The port a learner (a ``robot-rl learner`` process, or a ``LearnerProcess`` in a thread) that
    bound port 0 listens on, read from the ``learner/port`` file it writes into ``run_dir`` once it
    does; None when ``running()`` turns false first.

    A port found free before the start (bind, read, release) can be taken by another test's
    server, or an outgoing connection, before a learner slowed by a loaded machine binds it:
    binding 0 lets the kernel choose one nothing else holds. The caller removes a port file an
    earlier learner left there."""
    port_file = Path(run_dir) / "learner" / "port"
    wait_for(lambda: port_file.exists() or not running(), timeout)
    return int(port_file.read_text()) if port_file.exists() else None


def learner_port(learner: subprocess.Popen, run_dir: Path, timeout: float = 300.0, log: Path | None = None) -> int:
    """:func:`listening_port` of a ``robot-rl learner`` process; one that exits first fails the
    test with its output (the tail of ``log`` where its output goes to a file)."""
    port = listening_port(run_dir, lambda: learner.poll() is None, timeout)
    if learner.poll() is not None:
        output = (Path(log).read_text() if log is not None else
                  "".join(part or "" for part in learner.communicate()) or "(its output went to its log)")
        raise AssertionError(f"the learner exited ({learner.returncode}) before it listened: {output[-3000:]}")
    assert port is not None
    return port
