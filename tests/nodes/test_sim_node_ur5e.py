"""sim_node on the 6-DoF UR5e (``sim.arm: ur5e``), over DDS: the arm's own joint names on
``/joint_states`` (as ur_description names them, then the gripper), targets taken through
the admittance law, and the law's counters in the node's status."""

from __future__ import annotations

import time

import numpy as np
from graph_harness import Probe, Session, private_env
from robot_session import watch_robot

from robot_rl.ros import convert
from robot_rl.sim.ur5e import JOINT_NAMES


def test_sim_node_publishes_the_ur5e_joints_and_follows_targets(tmp_path, monkeypatch):
    env = private_env()
    session = Session(tmp_path, ["sim.arm=ur5e", "cameras={}", "env.cameras=[]"], env)
    probe = Probe(monkeypatch, env)
    try:
        poses, joints, statuses, target, _ = watch_robot(probe, "sim_node")
        running = {"sim_node": session.start("sim_node")}
        assert probe.spin_until(lambda: len(poses) > 5 and len(joints) > 0, 90, running), session.log("sim_node")
        names, q, _, tau = joints[-1][1]
        assert list(names) == [*JOINT_NAMES, "gripper"]
        assert len(q) == len(tau) == 7 and np.all(np.isfinite(q))
        pos, quat = poses[-1][1]
        goal = pos + np.array([0.0, 0.02, 0.0])
        assert probe.spin_until(lambda: target.get_subscription_count() > 0, 10)
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline and np.linalg.norm(poses[-1][1][0] - goal) > 0.002:
            target.publish(convert.pose_stamped_msg(goal, quat, time.time(), "base"))
            probe.spin(0.02)
        assert np.linalg.norm(poses[-1][1][0] - goal) <= 0.002, f"the arm is at {poses[-1][1][0]}, goal {goal}"
        assert probe.spin_until(lambda: any("law" in s for s in statuses), 10)
        law = [s for s in statuses if "law" in s][-1]["law"]
        assert law["cycles"] > 0 and law["ft_faults"] == 0 and law["rejected_targets"] == 0
    finally:
        probe.close()
        session.stop()
