"""controller_node over ``robot.backend: ur`` (the UR loop on tests/support/fake_rtde.py), over DDS.

The fake plays a UR e-series behind ur_rtde's API (its arm moves as the twists it is
sent); the driver, its 500 Hz loop process, the node and the topics are the real ones.
Checked: the robot state on the topics with the UR's six joint names, a target moves the
arm there, a joint-reset posture is refused without harm (six joints, no null space),
and a clean exit on SIGINT.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from fake_rtde import SCENARIO_ENV  # tests/support
from robot_session import fake_backend_session, real_cell_config, watch_robot

from robot_rl.arms import UR_JOINT_NAMES
from robot_rl.ros import convert

UR_JOINTS = list(UR_JOINT_NAMES)


def ur_session(tmp_path: Path) -> Path:
    return real_cell_config(
        tmp_path, "ur",
        robot={"backend": "ur", "reset_pos": [0.4, -0.1, 0.3], "reset_rpy": [3.141592653589793, 0, 0],
               "workspace": {"pos_low": [0.25, -0.25, 0.15], "pos_high": [0.55, 0.05, 0.45]},
               "hardware": {"ip": "10.0.0.2", "connect_timeout_s": 60, "state_timeout_s": 1.0,
                            "rtde_watchdog_hz": 2.0, "loop": {"rt_priority": 0}}},
        reset={"perturb_pos": [0.01, 0.01, 0.01], "perturb_yaw": 0.0, "joint_reset_every": 0})


def test_controller_node_drives_a_ur_through_ur_rtde(tmp_path, monkeypatch):
    session, probe = fake_backend_session(tmp_path, monkeypatch, ur_session(tmp_path), lib="fake_rtde",
                                          scenario_env=SCENARIO_ENV, log="ur")
    try:
        poses, joints, statuses, target, posture = watch_robot(probe, "controller_node")
        proc = session.start("controller_node")
        running = {"controller_node": proc}
        assert probe.spin_until(lambda: len(poses) > 10 and joints, 60, running), session.log("controller_node")
        names, q, _, _ = joints[-1][1]
        assert names == [*UR_JOINTS, "gripper"] and len(q) == 7
        pos, quat = poses[-1][1]
        np.testing.assert_allclose(pos, [0.4, -0.1, 0.3], atol=1e-6)  # the fake UR's start pose
        assert probe.spin_until(lambda: target.get_subscription_count() > 0, 10)
        goal = pos + np.array([0.01, 0.0, 0.0])
        for _ in range(40):  # 0.8 s of targets at 50 Hz
            target.publish(convert.pose_stamped_msg(goal, quat, time.time(), "base"))
            probe.spin(0.02)
        posture.publish(convert.posture_msg(UR_JOINTS, np.asarray(q[:6]) + 0.1, 30.0, time.time()))
        probe.spin(0.5)
        assert np.linalg.norm(poses[-1][1][0] - goal) < 0.003, "the fake UR did not follow the target"
        last = statuses[-1]
        assert last["targets"] == 40 and last["fault"] is None
        # the posture went nowhere (dropped as a 7-joint message, or refused by the 6-joint arm) and harmed nothing
        assert last["rejected_postures"] + last["dropped_messages"] == 1 and not last["posture_active"]
    finally:
        probe.close()
        codes = session.stop()
    assert codes["controller_node"] == 0, session.log("controller_node")
    assert "Traceback" not in session.log("controller_node")
