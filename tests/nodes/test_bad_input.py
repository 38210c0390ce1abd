"""Bad input to the nodes: malformed messages are dropped, warned about and counted; bad setup is one line."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from graph_harness import PICK, Probe, Session, message_rate, private_env, run_cli  # noqa: E402

from robot_rl.ros import convert  # noqa: E402
from robot_rl.ros import messages as m  # noqa: E402
from robot_rl.ros.messages import serialize  # noqa: E402


def test_malformed_messages_are_dropped_counted_and_the_sim_keeps_going(tmp_path, monkeypatch):
    env = private_env()
    session = Session(tmp_path, [], env)
    probe = Probe(monkeypatch, env)
    try:
        poses = probe.collect(m.PoseStamped, "/robot/tcp_pose", lambda msg: convert.pose_from_msg(msg)[0])
        statuses = probe.statuses("sim_node")
        target = probe.node.create_publisher(m.PoseStamped, "/robot/target_pose", 10)
        gripper = probe.node.create_publisher(m.Float64, "/robot/gripper/command", 10)
        reset = probe.node.create_publisher(m.String, "/sim/reset", 10)
        sim = session.start("sim_node")
        assert probe.spin_until(lambda: len(poses) > 5 and target.get_subscription_count() > 0
                                and reset.get_subscription_count() > 0, 60, {"sim_node": sim}), session.log("sim_node")
        rate = message_rate(probe, poses)
        assert rate >= 100.0, f"sim_node publishes the robot state at {rate:.0f} Hz"
        start = poses[-1][1]
        bad_pose = convert.pose_stamped_msg(np.array([math.nan, 0.0, 0.2]), np.array([0.0, 1.0, 0.0, 0.0]), 0.0, "base")
        target.publish(bad_pose)  # NaN: decodes, but convert refuses it
        good = serialize(convert.pose_stamped_msg(np.zeros(3), np.array([1.0, 0, 0, 0]), 0.0, "base"))
        target.publish(good.replace(b"base", b"\xff\xfe\xfd\xfc"))  # a frame_id that is not UTF-8: no decode
        gripper.publish(m.Float64(data=math.inf))
        reset.publish(m.String(data="reset please"))  # not the JSON the sim expects
        probe.spin(1.5)
        last = statuses[-1]
        assert last["dropped"].get("/robot/target_pose") == 2, last
        assert last["dropped"].get("/robot/gripper/command") == 1 and last["dropped"].get("/sim/reset") == 1
        assert last["dropped_messages"] == 4 and "not JSON" in last["last_drop_reason"]["/sim/reset"]
        assert "UTF-8" in last["last_drop_reason"]["/robot/target_pose"] or \
            "utf" in last["last_drop_reason"]["/robot/target_pose"].lower()
        # the node kept running, holding still, and a good target still moves the arm
        assert np.linalg.norm(poses[-1][1] - start) < 1e-3
        goal = start + np.array([0.0, 0.02, 0.0])
        for _ in range(40):  # a target stream at 20 Hz, like an actor's
            target.publish(convert.pose_stamped_msg(goal, np.array([0.0, 1.0, 0.0, 0.0]), time.time(), "base"))
            probe.spin(0.05)
        moved = np.linalg.norm(poses[-1][1] - start)
        assert 0.015 < moved < 0.025, f"moved {moved * 1000:.1f} mm toward a target 20 mm away"
        log = session.log("sim_node")
        assert "dropped a message on /robot/target_pose" in log and "Traceback" not in log
        assert sim.poll() is None
    finally:
        probe.close()
        codes = session.stop()
    assert codes["sim_node"] == 0


def node_cli(node: str, *ros_args: str, env: dict | None = None):
    return run_cli(["-m", f"robot_rl.nodes.{node}", "--ros-args", *ros_args], env or private_env(), timeout=90)


def one_line_error(out) -> str:
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    lines = [line for line in out.stderr.splitlines() if line.startswith("robot-rl: ")]
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr[-2000:]
    return lines[0]


def test_a_missing_topic_parameter_is_one_clear_error():
    line = one_line_error(node_cli("sim_node", "-p", f"config:={PICK}"))
    assert "'topics.joint_states'" in line and "is not set" in line


def test_a_missing_config_parameter_is_one_clear_error():
    line = one_line_error(node_cli("actor_node"))
    assert "required parameter 'config'" in line


def test_an_unknown_backend_name_is_one_clear_error():
    env = {**private_env(), "ROBOT_RL_ROS_BACKEND": "zenoh"}
    line = one_line_error(node_cli("camera_node", "-p", f"config:={PICK}", env=env))
    assert "ROBOT_RL_ROS_BACKEND='zenoh' is not a backend" in line


@pytest.mark.parametrize("node, args, message", [
    ("controller_node", [], "controller_node runs real arms"),
    ("camera_node", ["-p", "camera:=side", "-p", "topics.image:=/i", "-p", "topics.info:=/c"],
     "camera 'side' is not in cameras (front, wrist)"),
    ("intervention_node", ["-p", "config:=CFG_SIMULATED"], "the simulated intervener runs inside the actor"),
])
def test_a_node_given_the_wrong_session_says_so_in_one_line(tmp_path, node, args, message):
    simulated = tmp_path / "simulated.yaml"
    simulated.write_text(PICK.read_text() + "intervention:\n  device: simulated\n")
    topics = [a for k, v in [("joint_states", "/js"), ("tcp_pose", "/p"), ("tcp_twist", "/t"), ("tcp_wrench", "/w"),
                             ("target_pose", "/tp"), ("gripper_command", "/g"), ("posture", "/pp"),
                             ("spacenav_twist", "/st"), ("spacenav_joy", "/sj")] for a in ("-p", f"topics.{k}:={v}")]
    args = [a.replace("CFG_SIMULATED", str(simulated)) for a in args]
    config = [] if any(a.startswith("config:=") for a in args) else ["-p", f"config:={PICK}"]
    line = one_line_error(node_cli(node, *config, *args, *topics))
    assert message in line
