"""The command topics of a running sim node under attack, over the DDS backend.

The same rules as on the ``Robot`` interface (tests/control/test_command_attacks.py), seen
from outside the process: far targets alternating as fast as a publisher can send them,
finite but absurd values, postures past the joint limits with huge stiffness and gripper
floods. The TCP the node publishes stays inside the box, the node keeps serving, counts
what it refused and clipped, and a good target still moves the arm.
"""

from __future__ import annotations

import math
import time

import numpy as np
from graph_harness import PICK, Probe, Session, private_env  # noqa: E402

from robot_rl.ros import convert  # noqa: E402
from robot_rl.ros import messages as m  # noqa: E402
from robot_rl.tasks import load_config  # noqa: E402

BOX_TOLERANCE_MM = 3.0
DOWN = np.array([0.0, 1.0, 0.0, 0.0])
JOINTS = [f"joint{i}" for i in range(1, 8)]


def pose(pos, quat=DOWN):
    return convert.pose_stamped_msg(np.asarray(pos, float), np.asarray(quat, float), time.time(), "base")


def posture(q, stiffness):
    return m.JointState(header=convert.header(time.time(), ""), name=JOINTS,
                        position=convert._array("d", np.asarray(q, float)),
                        effort=convert._array("d", np.full(7, float(stiffness))))


def test_a_flood_of_hostile_commands_on_the_topics_keeps_the_arm_in_the_box(tmp_path, monkeypatch):
    ws = load_config(PICK).robot.workspace
    low, high = np.asarray(ws.pos_low), np.asarray(ws.pos_high)
    env = private_env()
    session = Session(tmp_path, [], env)
    probe = Probe(monkeypatch, env)
    try:
        poses = probe.collect(m.PoseStamped, "/robot/tcp_pose", lambda msg: convert.pose_from_msg(msg)[0])
        statuses = probe.statuses("sim_node")
        target = probe.node.create_publisher(m.PoseStamped, "/robot/target_pose", 10)
        gripper = probe.node.create_publisher(m.Float64, "/robot/gripper/command", 10)
        postures = probe.node.create_publisher(m.JointState, "/robot/posture", 10)
        sim = session.start("sim_node")
        ready = lambda: len(poses) > 5 and target.get_subscription_count() > 0 and postures.get_subscription_count() > 0  # noqa: E731
        assert probe.spin_until(ready, 60, {"sim_node": sim}), session.log("sim_node")
        home = poses[-1][1]
        far_a, far_b = low - 1.0, high + 1.0
        for i in range(1500):  # as fast as the publisher goes, with hostile values mixed in
            kind = i % 10
            if kind < 6:
                target.publish(pose(far_a if i % 2 else far_b))
            elif kind == 6:
                target.publish(pose([1e300, -1e300, 1e300], DOWN * 1e200))
            elif kind == 7:
                postures.publish(posture(np.full(7, 1e200 if i % 20 < 10 else -3.0), 1e6))
            elif kind == 8:
                gripper.publish(m.Float64(data=1e300 if i % 20 < 10 else -math.inf))
            else:
                target.publish(pose([math.nan, 0.0, 0.2]))
            if i % 20 == 0:
                probe.spin(0.002)
        probe.spin(1.0)
        postures.publish(m.JointState(header=convert.header(time.time(), "")))  # the configured posture back
        for _ in range(30):  # then a good target stream at 20 Hz, like an actor's
            target.publish(pose(home + np.array([0.0, 0.02, 0.0])))
            probe.spin(0.05)
        tcp = np.array([p for _, p in poses])
        outside = np.maximum(np.maximum(low - tcp, tcp - high), 0.0).max() * 1000.0
        assert outside <= BOX_TOLERANCE_MM, f"the TCP went {outside:.1f} mm outside the box"
        assert np.all(np.isfinite(tcp))
        moved = np.linalg.norm(tcp[-1] - (home + np.array([0.0, 0.02, 0.0])))
        assert moved < 0.005, f"a good target after the flood was {moved * 1000:.1f} mm away"
        last = statuses[-1]
        core, law = last["controller"], last["law"]
        assert core["postures"] > 0 and law["clipped_postures"] > 0, last
        assert law["box_clipped_targets"] > 0 and law["nonfinite_torques"] == 0, last
        assert last["dropped"].get("/robot/target_pose", 0) > 0, last  # the NaN poses
        assert last["dropped"].get("/robot/gripper/command", 0) > 0, last  # -inf
        log = session.log("sim_node")
        assert "Traceback" not in log and sim.poll() is None
    finally:
        probe.close()
        codes = session.stop()
    assert codes["sim_node"] == 0
