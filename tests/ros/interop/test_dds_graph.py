"""The DDS backend's graph, seen by real ROS 2 tools: late joiners, ``ros2 node list/info``, diagnostics, tf.

robot_rl's sim session runs on the DDS backend (``robot-rl launch``); the ``ros2`` CLI
(rclpy on rmw_cyclonedds_cpp) joins it more than 30 s later, after Cyclone's
``InitialLocatorPruneDelay``, which is when a late peer used to find nothing.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from jazzy import dds_env, needs_ros2, ros2, ros_env, until

pytestmark = needs_ros2
LATE_S = 40.0  # past Cyclone's default InitialLocatorPruneDelay (30 s)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory):
    """A sim session (scripted expert, episodes until stopped) on the DDS backend, and the ROS 2 side's env."""
    run_dir = tmp_path_factory.mktemp("dds_session")
    ros = ros_env()
    log = open(run_dir / "launch.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "robot_rl.cli", "launch", "pick_cube", "--set", "ros.policy=expert",
                             "--set", "ros.state_timeout_s=2.0", "--run-dir", str(run_dir), "--stop-timeout", "10"],
                            env=dds_env(ros), stdout=log, stderr=subprocess.STDOUT)
    started = time.monotonic()
    yield ros, started, run_dir
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def _late(started: float) -> None:
    time.sleep(max(0.0, LATE_S - (time.monotonic() - started)))


def test_a_late_ros2_echo_receives_the_robot_state(session):
    ros, started, run_dir = session
    _late(started)
    done = ros2(["topic", "echo", "--once", "/robot/tcp_pose"], ros, timeout=60)
    assert done.returncode == 0 and "position:" in done.stdout, (done.stdout, done.stderr,
                                                                 (run_dir / "launch.log").read_text()[-2000:])


def test_a_late_ros2_publisher_finds_the_dds_subscriber(session):
    ros, started, _ = session
    _late(started)
    # -w 1: publish only once a subscriber (the sim node's) was discovered
    done = ros2(["topic", "pub", "--once", "-w", "1", "/robot/gripper/command", "std_msgs/msg/Float64",
                 "{data: 1.0}"], ros, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ros2_node_list_and_info_show_the_dds_nodes(session):
    ros, started, _ = session
    _late(started)
    listed = until(lambda: {n for n in ros2(["node", "list", "--no-daemon", "--spin-time", "5"], ros).stdout.split()
                            if n.startswith("/")} >= {"/sim_node", "/actor_node"} and
                   ros2(["node", "list", "--no-daemon", "--spin-time", "5"], ros).stdout, timeout=60)
    assert "/sim_node" in listed and "/actor_node" in listed
    info = ros2(["node", "info", "/actor_node", "--no-daemon", "--spin-time", "5"], ros).stdout
    subscribers = info.split("Subscribers:")[1].split("Publishers:")[0]
    publishers = info.split("Publishers:")[1].split("Service Servers:")[0]
    assert "/robot/tcp_pose: geometry_msgs/msg/PoseStamped" in subscribers, info
    assert "/robot/target_pose: geometry_msgs/msg/PoseStamped" in publishers, info


def test_diagnostics_and_tf_reach_ros2(session):
    ros, _, _ = session
    diagnostics = ros2(["topic", "echo", "--once", "/diagnostics", "diagnostic_msgs/msg/DiagnosticArray"], ros,
                       timeout=60)
    assert diagnostics.returncode == 0 and "name: /" in diagnostics.stdout, diagnostics.stdout + diagnostics.stderr
    tf = ros2(["topic", "echo", "--once", "/tf", "tf2_msgs/msg/TFMessage"], ros, timeout=60)
    assert tf.returncode == 0 and "child_frame_id:" in tf.stdout, tf.stdout + tf.stderr
    clock = ros2(["topic", "echo", "--once", "/clock", "rosgraph_msgs/msg/Clock"], ros, timeout=60)
    assert clock.returncode == 0 and "sec:" in clock.stdout, clock.stdout + clock.stderr
