"""Helpers for the multi-process node tests: a private DDS domain, node processes, a probe node.

Every test gets its own random ``ROS_DOMAIN_ID`` and ``ROBOT_RL_DDS_LOCALHOST=1``, so
test runs side by side on one machine never hear each other and nothing leaves the
loopback interface. Nodes run on the DDS backend (``ROBOT_RL_ROS_BACKEND=dds``), each a
``python -m robot_rl.nodes.<node>`` process with the params file the session's graph
description writes, exactly as ``robot-rl launch`` starts them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import yaml
from domains import private_domain

from robot_rl.config import to_dict
from robot_rl.nodes.description import GraphDescription, build_graph
from robot_rl.tasks import load_config

ROOT = Path(__file__).resolve().parents[2]
PICK = ROOT / "configs" / "pick_cube.yaml"


def private_env(domain: int | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(ROS_DOMAIN_ID=str(domain if domain is not None else private_domain(101, 230)),
               ROBOT_RL_DDS_LOCALHOST="1", ROBOT_RL_ROS_BACKEND="dds", MUJOCO_GL="egl", PYTHONUNBUFFERED="1")
    return env


class Session:
    """A session's graph (from a config + overrides) whose nodes the test starts one by one."""

    def __init__(self, tmp_path: Path, overrides: list[str], env: dict[str, str], config: Path = PICK) -> None:
        self.dir = tmp_path
        self.env = env
        cfg = load_config(config, overrides)
        session = tmp_path / "session.yaml"
        session.write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False))
        self.graph: GraphDescription = build_graph(cfg, session)
        self.params = self.graph.write_params_file(tmp_path)
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self, name: str) -> subprocess.Popen:
        cmd = self.graph.command(self.graph.node(name), self.params)
        log = open(self.dir / f"{name}.log", "w")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env)
        self.procs[name] = proc
        return proc

    def log(self, name: str) -> str:
        return (self.dir / f"{name}.log").read_text()

    def stop(self, timeout: float = 15.0) -> dict[str, int]:
        """SIGINT every node still running; their exit codes."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        codes = {}
        for name, proc in self.procs.items():
            try:
                codes[name] = proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                codes[name] = proc.wait()
        return codes


class Probe:
    """A DDS node inside the test process, in the same private domain as the nodes."""

    def __init__(self, monkeypatch: Any, env: dict[str, str], name: str = "probe",
                 ros_args: list[str] | None = None) -> None:
        for key in ("ROS_DOMAIN_ID", "ROBOT_RL_DDS_LOCALHOST"):
            monkeypatch.setenv(key, env[key])
        from robot_rl.ros.dds import api as ros

        self.ros = ros
        ros.init(args=["prog", "--ros-args", *ros_args] if ros_args else [])  # parameters for in-process nodes
        self.node = ros.Node(name)
        self.executor = ros.SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.others: list[Any] = []

    def add(self, node: Any) -> Any:
        """Spin another in-process node (e.g. a node under test) together with the probe."""
        self.executor.add_node(node)
        self.others.append(node)
        return node

    def collect(self, msg_type: type, topic: str, convert: Callable[[Any], Any] = lambda m: m,
                depth: Any = 100) -> list[tuple[float, Any]]:
        """Every message on ``topic`` as (arrival wall time, convert(msg)); ``depth``: a depth or a QoS profile."""
        got: list[tuple[float, Any]] = []
        self.node.create_subscription(msg_type, topic, lambda m: got.append((time.time(), convert(m))), depth)
        return got

    def statuses(self, node_name: str) -> list[dict[str, Any]]:
        from robot_rl.ros import messages as m

        got: list[dict[str, Any]] = []
        self.node.create_subscription(m.String, f"/{node_name}/status", lambda msg: got.append(json.loads(msg.data)),
                                      100)
        return got

    def spin(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def spin_until(self, predicate: Callable[[], bool], timeout: float, procs: dict | None = None) -> bool:
        end = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > end:
                return False
            for name, proc in (procs or {}).items():
                if proc.poll() is not None:
                    raise AssertionError(f"{name} exited with {proc.returncode} while waiting")
            self.executor.spin_once(timeout_sec=0.02)
        return True

    def close(self) -> None:
        self.executor.shutdown()
        for node in [*self.others, self.node]:
            node.destroy_node()
        self.ros.try_shutdown()


class StallWatch:
    """Notices when this machine stops running processes for a while (a shared, loaded VM).

    Timing assertions are meaningless across such a stall; a test that sees one repeats
    its measurement instead of failing on the machine.
    """

    def __init__(self, limit_s: float = 0.1) -> None:
        self.limit_s = limit_s
        self.worst = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(0.005):
            now = time.monotonic()
            self.worst = max(self.worst, now - last)
            last = now

    def reset(self) -> None:
        self.worst = 0.0

    @property
    def stalled(self) -> bool:
        return self.worst > self.limit_s

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def run_cli(args: list[str], env: dict[str, str], timeout: float = 60.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=timeout)


def message_rate(probe: Probe, received: list, seconds: float = 1.5, tries: int = 3) -> float:
    """Messages per second arriving in ``received`` over ``seconds``, measured again (up to
    ``tries`` times) when the machine stalled during the window (see :class:`StallWatch`)."""
    watch = StallWatch(limit_s=0.1)
    try:
        for _ in range(tries):
            watch.reset()
            n0, t0 = len(received), time.monotonic()
            probe.spin(seconds)
            rate = (len(received) - n0) / (time.monotonic() - t0)
            if not watch.stalled:
                break
        return rate
    finally:
        watch.close()

