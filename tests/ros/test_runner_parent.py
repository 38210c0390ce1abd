"""``stop_with_parent``: a node whose launcher dies (SIGTERM with no handler, kill -9) gets SIGINT,
the signal it already stops cleanly on; an orphan at the moment it arms gets it at once."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest
from polling import alive, eventually, outliving

from robot_rl.ros.runner import stop_with_parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

CHILD = textwrap.dedent("""
    import signal, sys, time
    from pathlib import Path
    from robot_rl.ros.runner import stop_with_parent
    flag = Path(sys.argv[1])
    def on_int(signum, frame):
        flag.write_text("SIGINT")
        sys.exit(0)
    signal.signal(signal.SIGINT, on_int)
    flag.write_text("armed" if stop_with_parent() else "not armed")
    time.sleep(120)
""")

PARENT = textwrap.dedent("""
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]])
    print(child.pid, flush=True)
    time.sleep(120)
""")


@pytest.mark.parametrize("kill", [signal.SIGKILL, signal.SIGTERM])
def test_the_child_gets_sigint_when_its_parent_dies(tmp_path, kill):
    flag = tmp_path / "flag"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, CHILD, str(flag)], stdout=subprocess.PIPE, text=True)
    child = 0
    try:
        child = int(parent.stdout.readline())
        assert eventually(lambda: flag.exists() and flag.read_text() == "armed", 60), "the child never armed"
        parent.send_signal(kill)
        parent.wait(timeout=10)
        assert eventually(lambda: flag.read_text() == "SIGINT", 20), flag.read_text()
        assert eventually(lambda: not alive(child), 20)
    finally:
        parent.kill()
        if child:
            outliving({"child": child})


def test_arming_returns_true_here_and_keeps_a_living_parent():
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        assert stop_with_parent() is True
        time.sleep(0.1)
        assert received == []  # the parent (pytest's) is alive: nothing is sent
    finally:
        import ctypes

        ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # disarm again for the rest of the test session
        signal.signal(signal.SIGINT, previous)
