"""robot_rl in a ROS 2 workspace, the way the README's recipe builds it: colcon, ``ros2 run``, ``ros2 launch``.

Both ``colcon build`` and ``colcon build --symlink-install`` (which runs ``setup.py develop``
on setuptools < 80) must leave every console script where ``ros2 run`` looks and every
package importable, ``robot_rl_drivers`` included; ``ros2 launch`` loads the launch file in
the ``ros2`` CLI's own Python, which has only what ROS 2 and rosdep installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from jazzy import ROOT, needs_ros2, ros_env
from polling import outliving

pytestmark = [needs_ros2, pytest.mark.skipif(importlib.util.find_spec("colcon_core") is None,
                                             reason="colcon is not importable by this Python")]
NODES = ("actor_node", "camera_node", "controller_node", "intervention_node", "sim_node")


def _copy_sources(dest: Path) -> None:
    """The checkout as git sees it (tracked and new files, nothing ignored) into ``dest``."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, listed):
        source = ROOT / rel
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)


@pytest.fixture(scope="module", params=["copy", "symlink"])
def workspace(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    ws = tmp_path_factory.mktemp(f"ws_{request.param}")
    _copy_sources(ws / "src" / "robot_rl")
    cmd = [sys.executable, "-m", "colcon", "build", "--packages-select", "robot_rl"]
    if request.param == "symlink":
        cmd.append("--symlink-install")
    done = subprocess.run(cmd, cwd=ws, env=ros_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return request.param, ws


def sourced(ws: Path, command: str, env: dict[str, str], timeout: float = 120.0) -> subprocess.CompletedProcess:
    """``command`` in bash after sourcing the workspace's overlay."""
    return subprocess.run(["bash", "-c", f"source {ws}/install/setup.bash && {command}"], env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_every_node_is_a_ros2_run_executable(workspace):
    _, ws = workspace
    done = sourced(ws, "ros2 pkg executables robot_rl", ros_env())
    assert done.returncode == 0, done.stderr
    listed = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("robot_rl ")}
    assert set(NODES) | {"robot-rl"} <= listed, done.stdout
    for node in NODES:
        script = ws / "install" / "robot_rl" / "lib" / "robot_rl" / node
        assert script.read_text().startswith(f"#!{sys.executable}"), f"{node} would not run on robot_rl's Python"


def test_every_package_imports_from_the_overlay(workspace):
    kind, ws = workspace
    probe = ("import json, robot_rl, robot_rl_drivers, robot_rl_drivers.cameras, robot_rl_drivers.input, "
             "robot_rl_drivers.robots; print(json.dumps([robot_rl.__file__, robot_rl_drivers.__file__]))")
    done = sourced(ws, f"cd / && {sys.executable} -c '{probe}'", ros_env())
    assert done.returncode == 0, done.stderr
    files = [Path(f) for f in json.loads(done.stdout.strip().splitlines()[-1])]
    if kind == "symlink":  # edits in src/ take effect without a rebuild
        assert all(f.resolve().is_relative_to((ws / "src" / "robot_rl").resolve()) for f in files), files
    else:
        assert all(f.is_relative_to(ws / "install") for f in files), files


def test_ros2_launch_loads_the_session_in_the_ros2_clis_python(workspace):
    """``--show-args`` imports the launch file and robot_rl's launch front end in ``ros2``'s Python."""
    _, ws = workspace
    done = sourced(ws, "ros2 launch robot_rl sim.launch.py --show-args", ros_env())
    assert done.returncode == 0, done.stdout + done.stderr
    for argument in ("config", "set", "run_dir", "namespace"):
        assert re.search(rf"'{argument}':", done.stdout), done.stdout


def test_ros2_launch_runs_a_sim_session_to_its_end(workspace):
    """The sim graph under ``ros2 launch`` (rclpy nodes), namespaced: two expert episodes, then a clean exit."""
    kind, ws = workspace
    if kind != "symlink":
        pytest.skip("one full session is enough; the symlink workspace runs it")
    env = ros_env()
    done = sourced(ws, "ros2 launch robot_rl sim.launch.py namespace:=r1 "
                       "set:='ros.policy=expert;ros.episodes=2;ros.state_timeout_s=2.0'", env, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = [json.loads(line[line.index("{"):]) for line in done.stdout.splitlines()
               if '"episodes"' in line and "{" in line]
    assert summary and summary[-1]["episodes"] == 2, done.stdout[-3000:]


def _launch(ws: Path, env: dict[str, str]) -> subprocess.Popen:
    """``ros2 launch`` of an endless expert session as its own process (``exec``: its pid is the launcher's)."""
    return subprocess.Popen(["bash", "-c", f"source {ws}/install/setup.bash && exec ros2 launch robot_rl "
                             "sim.launch.py set:='ros.policy=expert;ros.state_timeout_s=2.0'"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL)


def _node_pids(proc: subprocess.Popen, lines: list[str], timeout: float = 180.0) -> dict[str, int]:
    """Read the launcher's output until the actor finished an episode; the nodes' pids by name."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if re.search(r"\[actor_node-\d+\].*episode 0:", line):
            break
    found = {m.group(1): int(m.group(2)) for line in lines
             for m in [re.search(r"\[INFO\] \[(\w+)-\d+\]: process started with pid \[(\d+)\]", line)] if m}
    assert {"sim_node", "actor_node"} <= set(found), "".join(lines[-40:])
    return found


@contextmanager
def _session(ws: Path) -> Iterator[tuple[subprocess.Popen, list[str], dict[str, int]]]:
    """An endless expert session under ``ros2 launch`` once its actor finished an episode: the
    launcher, its output so far and its nodes' pids; afterwards nothing of it is left running."""
    proc, lines, pids = _launch(ws, ros_env()), [], {}
    try:
        pids = _node_pids(proc, lines)
        yield proc, lines, pids
    finally:
        proc.kill()
        outliving(pids)


@pytest.mark.parametrize("victim", ["sim_node", "actor_node"])
def test_a_node_killed_under_ros2_launch_ends_the_session_with_status_1(workspace, victim):
    kind, ws = workspace
    if kind != "symlink":
        pytest.skip("the symlink workspace runs the sessions")
    with _session(ws) as (proc, lines, pids):
        os.kill(pids[victim], signal.SIGKILL)
        out, _ = proc.communicate(timeout=60)
        left = outliving(pids)
    out = "".join(lines) + out
    assert proc.returncode == 1, out[-3000:]
    assert f"node {victim} died (exit code -9: SIGKILL); the session ends with exit status 1" in out, out[-3000:]
    assert not left


def test_sigterm_of_ros2_launch_still_stops_every_node(workspace):
    """Jazzy's launch has no SIGTERM handler: the launcher dies at once, and each node, armed with
    PR_SET_PDEATHSIG, stops as on Ctrl-C instead of running on without it."""
    kind, ws = workspace
    if kind != "symlink":
        pytest.skip("the symlink workspace runs the sessions")
    with _session(ws) as (proc, _, pids):
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
        left = outliving(pids, timeout=30.0)
    assert not left, f"still running after ros2 launch got SIGTERM: {left}"
