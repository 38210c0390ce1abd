"""controller_node over ``robot.backend: ros2_control`` (configs/ur5e_ros2_control.yaml), over DDS.

The probe plays the robot side: ur_robot_driver's joint states (the UR's six joints, in
the broadcaster's alphabetical order) and FZI's cartesian_compliance_controller (its
current_pose in base_link, the F/T reading it reads in tool0, its target_frame input).
The session runs in the namespace ``r1``, the way docs/real-cell.md sets a ros2_control
cell up, so robot_rl's /r1/joint_states never mixes with the driver's /joint_states.
Checked: the node starts the backend, streams the UR's state with its joint names,
turns robot_rl targets into error-clipped target frames, and holds with a fault when
the F/T sensor saturates; a clean exit on SIGINT.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from graph_harness import Probe, Session, private_env  # tests/support

from robot_rl.arms import UR_JOINT_NAMES
from robot_rl.control.transforms import rpy_to_quat
from robot_rl.ros import convert
from robot_rl.ros import messages as m

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "ur5e_ros2_control.yaml"
FZI = "/cartesian_compliance_controller"
UR_JOINTS = list(UR_JOINT_NAMES)
HOME = np.array([0.55, 0.0, 0.17])  # the example's reset_pos, in base_link
DOWN = rpy_to_quat(np.array([np.pi, 0.0, 0.0]))


def test_controller_node_runs_a_ur5e_behind_the_compliance_controller(tmp_path, monkeypatch):
    env = private_env()
    session = Session(tmp_path, ["ros.namespace=r1"], env, config=CONFIG)
    probe = Probe(monkeypatch, env)
    force = {"z": 2.0}
    order = sorted(UR_JOINTS)
    q = np.linspace(-1.0, 1.0, 6)

    def robot_side() -> None:  # the driver and the controller, at 100 Hz
        t = time.time()
        pose_pub.publish(convert.pose_stamped_msg(HOME, DOWN, t, "base_link"))
        joints_pub.publish(convert.joint_state_msg(order, q, q * 0.0, q * 0.0, t))
        ft_pub.publish(convert.wrench_stamped_msg(np.array([0.0, 0.0, force["z"], 0.0, 0.0, 0.0]), t, "tool0"))

    try:
        pose_pub = probe.node.create_publisher(m.PoseStamped, f"{FZI}/current_pose", 10)
        joints_pub = probe.node.create_publisher(m.JointState, "/joint_states", 10)
        ft_pub = probe.node.create_publisher(m.WrenchStamped, f"{FZI}/ft_sensor_wrench", 10)
        probe.node.create_timer(0.01, robot_side)
        frames = probe.collect(m.PoseStamped, f"{FZI}/target_frame", lambda msg: msg, depth=500)
        poses = probe.collect(m.PoseStamped, "/r1/robot/tcp_pose", convert.pose_from_msg, depth=100)
        joints = probe.collect(m.JointState, "/r1/joint_states", convert.joint_state_from_msg, depth=10)
        wrenches = probe.collect(m.WrenchStamped, "/r1/robot/tcp_wrench", convert.wrench_from_msg, depth=10)
        statuses = probe.statuses("r1/controller_node")
        target = probe.node.create_publisher(m.PoseStamped, "/r1/robot/target_pose", 10)
        proc = session.start("controller_node")
        running = {"controller_node": proc}
        assert probe.spin_until(lambda: len(poses) > 5 and frames and joints and wrenches, 60, running), \
            session.log("controller_node")
        names, _, _, _ = joints[-1][1]
        assert names == UR_JOINTS + ["gripper"]  # the configured order, whatever order the driver sends
        np.testing.assert_allclose(poses[-1][1][0], HOME)
        np.testing.assert_allclose(wrenches[-1][1], [0.0, 0.0, -2.0, 0.0, 0.0, 0.0], atol=1e-9)  # tool0 -> base
        first = frames[0][1]
        assert first.header.frame_id == "base_link"
        np.testing.assert_allclose(convert.pose_from_msg(first)[0], HOME)  # starts where the arm is
        assert probe.spin_until(lambda: target.get_subscription_count() > 0, 10)
        for _ in range(25):  # 0.5 s of a target 3 cm away: the frame leads the arm by the 10 mm clip
            target.publish(convert.pose_stamped_msg(HOME + [0.03, 0.0, 0.0], DOWN, time.time(), "base_link"))
            probe.spin(0.02)
        np.testing.assert_allclose(convert.pose_from_msg(frames[-1][1])[0], HOME + [0.01, 0.0, 0.0], atol=1e-9)
        force["z"] = 400.0  # the wrist sensor saturates
        events = lambda: [s["event"] for s in statuses if "event" in s]  # noqa: E731
        assert probe.spin_until(lambda: any(e["event"] == "fault" for e in events()), 10, running)
        fault = next(e for e in events() if e["event"] == "fault")
        assert "saturated" in fault["reason"] and "|Fz| = 400 N > 100 N" in fault["reason"]
        n = len(frames)
        probe.spin(0.3)
        assert len(frames) > n, "the hold is re-sent while the fault lasts"
        np.testing.assert_allclose(convert.pose_from_msg(frames[-1][1])[0], HOME, atol=1e-9)
    finally:
        probe.close()
        codes = session.stop()
    assert codes["controller_node"] == 0, session.log("controller_node")
    assert "Traceback" not in session.log("controller_node")
