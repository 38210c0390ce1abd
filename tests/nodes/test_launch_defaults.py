"""Issue 26, item 2: one default policy for both launchers, an actor waiting for a learner says
once what to start, and Ctrl-C ends a launch within seconds.

``robot-rl launch pick_cube`` and ``ros2 launch robot_rl sim.launch.py`` run the scripted
expert unless told otherwise (a newcomer with no learner running sees the task done). A
session told ``ros.policy=learner`` with no learner running logs one notice naming the
command to start (with the session's own config file), not a warning every few seconds,
and its Ctrl-C does not wait on a flush to a learner it never reached.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from graph_harness import PICK, private_env
from polling import interrupt

from robot_rl.config.ros import RosConfig
from robot_rl.tasks import load_config

ROOT = Path(__file__).resolve().parents[2]


def test_the_default_policy_is_the_expert_for_both_launchers():
    assert RosConfig().policy == "expert"
    assert load_config(PICK).ros.policy == "expert"
    # sim.launch.py overrides nothing, so `set:=` replaces no policy either: both launchers
    # run the config as it is
    text = (ROOT / "launch" / "sim.launch.py").read_text()
    assert re.search(r"session\(config=\"pick_cube\"\)", text), text
    # the real cells name the learner themselves
    for name in ("franka_peg_insert", "ur5e_peg_insert", "ur5e_ros2_control", "connector_insert"):
        assert load_config(ROOT / "configs" / f"{name}.yaml").ros.policy == "learner", name


class Reader:
    """The launcher's merged output, read in a thread, each line with its arrival time."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.lines: list[tuple[float, str]] = []
        self.thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self.thread.start()

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            self.lines.append((time.monotonic(), line))

    def wait_for(self, pattern: str, timeout: float) -> float:
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while time.monotonic() < deadline:
            for at, line in list(self.lines):
                if regex.search(line):
                    return at
            time.sleep(0.1)
        raise AssertionError(f"no line matching {pattern!r} in {timeout} s:\n{self.text()[-4000:]}")

    def text(self) -> str:
        return "".join(line for _, line in self.lines)


def test_an_actor_waiting_for_a_learner_says_once_what_to_start_and_ctrl_c_ends_it_within_seconds(tmp_path):
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**private_env(), "ROBOT_RL_TOKEN": "launch-defaults-token"}
    run_dir = tmp_path / "graph"
    proc = subprocess.Popen([sys.executable, "-m", "robot_rl.cli", "launch", "pick_cube", "--run-dir", str(run_dir),
                             "--set", "ros.policy=learner", "--set", f"learning.port={port}",
                             "--set", "ros.state_timeout_s=2.0", "--set", "learning.log_every_s=600"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    reader = Reader(proc)
    try:
        noticed = reader.wait_for(r"\[actor_node\] .*no learner answers at", 150)
        time.sleep(12.0)  # the client retries all along: the old code warned every ~5-8 s
        sent = time.monotonic()
        ended = interrupt(proc)
    finally:
        proc.kill()
    reader.thread.join(timeout=5)
    out = reader.text()
    print(f"\nno-learner notice after the launch's start; SIGINT to exit: {ended:.1f} s")
    assert proc.returncode == 0, out[-4000:]
    notices = [ln for ln in out.splitlines() if "no learner answers at" in ln]
    assert len(notices) == 1, out[-4000:]
    assert (f"no learner answers at 127.0.0.1:{port} yet (connection refused): start one with robot-rl learner "
            f"--config {run_dir / 'session.yaml'} (same token)") in notices[0]
    assert "unreachable" not in out, out[-4000:]  # the client's per-retry warning stays quiet
    assert sent - noticed >= 10.0
    assert ended < 12.0, out[-4000:]  # was 13 s and a SIGTERM: a flush to a learner it never reached
    assert "still running: sending SIGTERM" not in out and "Traceback" not in out
