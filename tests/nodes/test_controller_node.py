"""controller_node over a Franka backend (the torque loop on tests/drivers' fake pylibfranka), over DDS.

The fake plays a synthetic arm behind pylibfranka's API; the driver, its 1 kHz loop
process, the node and the topics are the real ones. Checked: the robot-state topics at
>= 100 Hz with the arm's joints and the gripper, targets accepted, the watchdog's hold
after the targets stop, a clean exit on SIGINT.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from fake_pylibfranka import SCENARIO_ENV  # tests/support
from graph_harness import message_rate
from robot_session import fake_backend_session, real_cell_config, watch_robot

from robot_rl.ros import convert
from robot_rl.ros import messages as m


def franka_session(tmp_path: Path) -> Path:
    return real_cell_config(
        tmp_path, "franka",
        robot={"backend": "franka", "reset_pos": [0.35, 0.0, 0.45], "reset_rpy": [3.141592653589793, 0, 0],
               "workspace": {"pos_low": [0.2, -0.2, 0.3], "pos_high": [0.6, 0.2, 0.6]},
               "hardware": {"ip": "172.16.0.2", "loop": {"realtime": "ignore", "rt_priority": 0}}},
        reset={"perturb_pos": [0.01, 0.01, 0.01], "perturb_yaw": 0.0})


def test_controller_node_streams_state_takes_targets_and_holds_when_they_stop(tmp_path, monkeypatch):
    session, probe = fake_backend_session(tmp_path, monkeypatch, franka_session(tmp_path), lib="fake_pylibfranka",
                                          scenario_env=SCENARIO_ENV, log="session")
    try:
        poses, joints, statuses, target, posture = watch_robot(probe, "controller_node")
        gripper = probe.node.create_publisher(m.Float64, "/robot/gripper/command", 10)
        proc = session.start("controller_node")
        running = {"controller_node": proc}
        assert probe.spin_until(lambda: len(poses) > 10, 60, running), session.log("controller_node")
        rate = message_rate(probe, poses, 2.0)
        names, q, _, _ = joints[-1][1]
        print(f"\ncontroller_node over the fake Franka: robot state at {rate:.0f} Hz (ros.state_hz 125)")
        assert rate >= 100.0
        assert names == [f"fr3_joint{i}" for i in range(1, 8)] + ["gripper"] and 0.0 <= q[-1] <= 1.0
        pos, quat = poses[-1][1]
        assert np.allclose(pos, [0.35, 0.02, 0.45], atol=0.1)  # the fake arm's pose, from its kinematics
        assert probe.spin_until(lambda: target.get_subscription_count() > 0, 10)
        goal = pos + np.array([0.005, 0.0, 0.0])
        names = [f"fr3_joint{i}" for i in range(1, 8)]
        for i in range(25):  # 0.5 s of targets at 50 Hz (and a joint reset's postures), then silence
            target.publish(convert.pose_stamped_msg(goal, quat, time.time(), "base"))
            gripper.publish(convert.gripper_command_msg(0.0))
            if i % 5 == 4:
                posture.publish(convert.posture_msg(names, q[:7] + 0.01 * i, 30.0, time.time()))
            probe.spin(0.02)
        probe.spin(1.0)
        events = [s["event"] for s in statuses if "event" in s]
        postures = [e["active"] for e in events if e["event"] == "posture"]
        events = [e for e in events if e["event"] != "posture"]
        kinds = [(e["event"], e.get("reason")) for e in events]
        assert kinds[:3] == [("hold", "start"), ("targets", None), ("hold", "watchdog")], kinds
        hold = events[2]
        silence_ms = (hold["stamp"] - hold["last_target_wall"]) * 1000
        assert 100 <= silence_ms <= 250, silence_ms  # watchdog_s + a state period (+ a loaded machine)
        last = statuses[-1]
        assert last["targets"] == 25 and last["gripper_commands"] == 25 and last["dropped_messages"] == 0
        assert last["holding"] and last["fault"] is None
        # the postures reached the torque loop, and the watchdog's hold gave the configured one back
        assert last["postures"] == 5 and last["rejected_postures"] == 0 and not last["posture_active"]
        assert postures == [True, False], postures
    finally:
        probe.close()
        codes = session.stop()
    assert codes["controller_node"] == 0, session.log("controller_node")
    assert "Traceback" not in session.log("controller_node")
