"""tf and ``/clock`` of a running sim node, over DDS, from another process.

One sim_node runs the pick_cube scene; a probe in the test process listens. Checked:
``/clock`` advances and never goes back, across a reset too; ``/robot/tcp_pose`` and
``tf`` are stamped with that simulated time, and ``base -> tcp`` on ``tf`` is the pose
published on ``/robot/tcp_pose`` at the same stamp; a node with ``use_sim_time`` reports
the sim's time; ``tf_static`` reaches a subscriber that joins a while after the sim
published it, with the cameras' optical frames the scene has.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from graph_harness import PICK, Probe, Session, private_env  # noqa: E402

from robot_rl.errors import DeviceError  # noqa: E402
from robot_rl.nodes.description import build_graph  # noqa: E402
from robot_rl.nodes.robot import TopicRobot  # noqa: E402
from robot_rl.nodes.sim import SimServer  # noqa: E402
from robot_rl.nodes.task import SimTopicTask  # noqa: E402
from robot_rl.nodes.topics import task_state_names  # noqa: E402
from robot_rl.ros import convert  # noqa: E402
from robot_rl.ros import messages as m  # noqa: E402
from robot_rl.tasks import load_config  # noqa: E402

STARTUP_S = 90.0


@pytest.fixture
def graph(tmp_path, monkeypatch):
    env = private_env()
    session = Session(tmp_path, ["ros.policy=expert"], env)
    probe = Probe(monkeypatch, env)
    yield session, probe
    probe.close()
    session.stop()


def test_sim_node_publishes_clock_tf_and_stamps_in_sim_time(graph):
    session, probe = graph
    ros = probe.ros
    assert session.graph.node("sim_node").parameters["use_sim_time"] is True
    assert all(spec.parameters["use_sim_time"] is True for spec in session.graph.nodes)
    best_effort = ros.QoSProfile(depth=1000, reliability=ros.ReliabilityPolicy.BEST_EFFORT)
    clock = probe.collect(m.Clock, "/clock", lambda msg: convert.stamp_from_msg(msg.clock), best_effort)
    poses = probe.collect(m.PoseStamped, "/robot/tcp_pose", lambda msg: (
        convert.stamp_from_msg(msg.header.stamp), msg.header.frame_id, *convert.pose_from_msg(msg)), 1000)
    tf = probe.collect(m.TFMessage, "/tf", lambda msg: [convert.transform_from_msg(t) for t in msg.transforms], 1000)
    done = probe.collect(m.String, "/sim/reset_done", lambda msg: json.loads(msg.data), 10)
    follower = probe.add(ros.Node("follower", parameter_overrides=[ros.Parameter("use_sim_time", value=True)]))
    reset = probe.node.create_publisher(m.String, "/sim/reset", 10)

    proc = {"sim_node": session.start("sim_node")}
    assert probe.spin_until(lambda: len(poses) >= 100 and len(tf) >= 100 and len(clock) >= 100, STARTUP_S, proc), \
        session.log("sim_node")

    # a reset, asked until answered (a request sent before the sim subscribed is lost)
    n_clock = len(clock)
    request = json.dumps({"id": "probe:1", "seed": 5})
    assert probe.spin_until(lambda: done or reset.publish(m.String(data=request)), 30, proc)
    _, answer = done[0]
    assert answer["id"] == "probe:1"
    assert probe.spin_until(lambda: len(clock) > n_clock + 50, 30, proc)
    probe.spin(0.2)

    # /clock: simulated seconds from 0, never back, on across the reset; not the wall clock
    times = [t for _, t in clock]
    assert all(b >= a for a, b in zip(times, times[1:])), "the clock went back"
    assert 0.0 < times[0] < times[-1] < 1e5
    assert times[-1] - times[0] > 0.5
    # Ticks the probe had before it first asked for the reset were published before the sim reset. Not
    # "arrived before the answer": the answer and /clock are separate topics, and a loaded probe may take
    # a /clock published after the answer first.
    before = times[:n_clock]
    assert max(before) < answer["stamp"] <= times[-1]

    # every pose is stamped with a /clock time; base -> tcp on tf is that pose at that stamp
    ticks = set(times)
    stamps = [p[0] for _, p in poses]
    assert all(s in ticks for s in stamps[-50:])
    assert {p[1] for _, p in poses} == {"base"}
    by_stamp = {p[0]: p for _, p in poses}
    matched = 0
    for _, transforms in tf:
        assert [(t[0], t[1]) for t in transforms] == [("base", "tcp")]
        parent, child, pos, quat, stamp = transforms[0]
        assert stamp in ticks or stamp < times[0]
        if stamp in by_stamp:
            _, _, pose_pos, pose_quat = by_stamp[stamp]
            assert np.allclose(pos, pose_pos, atol=1e-12) and np.allclose(quat, pose_quat, atol=1e-12)
            matched += 1
    assert matched >= 50
    after_reset = [s for s in stamps if s >= answer["stamp"] - 1e-6]
    assert after_reset and stamps[-1] >= answer["stamp"] - 1e-6

    # a node with use_sim_time is on the sim's clock (simulated seconds, not the wall clock's ~1.7e9), past
    # the reset. Not `now in ticks`: /clock is best effort, so the probe may miss the very tick the follower got
    now = follower.get_clock().now().nanoseconds * 1e-9
    assert answer["stamp"] <= now <= times[-1] + 1.0

    # tf_static, to a subscriber that joins late (transient-local): the scene's optical frames
    static = probe.collect(m.TFMessage, "/tf_static", lambda msg: [convert.transform_from_msg(t)
                                                                   for t in msg.transforms],
                           ros.QoSProfile(depth=1, reliability=ros.ReliabilityPolicy.RELIABLE,
                                          durability=ros.DurabilityPolicy.TRANSIENT_LOCAL))
    assert probe.spin_until(lambda: bool(static), 20, proc), "no tf_static for a late subscriber"
    got = {t[1]: t for t in static[0][1]}
    server = SimServer(load_config(session.graph.config))
    try:
        expected = {t.child: t for t in server.camera_transforms("base", "tcp")}
    finally:
        server.close()
    assert set(got) == set(expected) == {"front_color_optical_frame", "wrist_color_optical_frame"}
    for child, (parent, _, pos, quat, stamp) in got.items():
        want = expected[child]
        assert parent == want.parent and stamp < times[0] + 1.0
        assert np.allclose(pos, want.translation, atol=1e-9)
        assert np.allclose(quat, want.rotation, atol=1e-9) or np.allclose(quat, -want.rotation, atol=1e-9)



def test_every_node_of_a_sim_session_runs_on_sim_time_and_a_real_one_does_not(tmp_path):
    sim = build_graph(load_config(PICK, ["intervention.device=keyboard"]), PICK)
    assert sim.names == ["sim_node", "intervention_node", "actor_node"]
    assert all(spec.parameters["use_sim_time"] is True for spec in sim.nodes)
    assert "use_sim_time: true" in sim.params_file_text()
    cfg = yaml.safe_load(PICK.read_text())
    cfg["robot"].update(backend="franka", hardware={"ip": "172.16.0.2"})
    cfg["cameras"] = {"front": {"backend": "realsense", "hardware": {"serial": "123"}}}
    cfg["env"].update(obs_mode="pixels", cameras=["front"])
    path = tmp_path / "franka.yaml"
    path.write_text(yaml.safe_dump(cfg))
    real = build_graph(load_config(path), path)
    assert real.names == ["controller_node", "camera_front", "actor_node"]
    assert not any("use_sim_time" in spec.parameters for spec in real.nodes)  # the system clock, ROS's default


def test_the_actor_takes_what_the_sim_stamped_at_the_reset_itself_and_nothing_older():
    """The answer's stamp is a float; a header stamp travels as whole nanoseconds, so the state
    the sim publishes at the reset's own time reads back a hair earlier. It still belongs to the
    new episode; what the sim published one physics step (2 ms) before does not."""
    reset_at = 1234.5678901234567
    at_reset = convert.stamp_from_msg(convert.stamp_to_msg(reset_at))
    assert at_reset < reset_at  # the trip through nanoseconds really loses the tail here
    robot = TopicRobot(lambda p, q: None, lambda g: None, state_timeout_s=1.0, wait_timeout_s=1.0)
    requests: list[str] = []
    task = SimTopicTask(2, robot, requests.append, actor_id="a", reset_timeout_s=0.5)
    names = task_state_names(2)
    quat = np.array([1.0, 0.0, 0.0, 0.0])

    def publish(stamp: float, value: float) -> None:
        task.on_ground_truth(names, np.array([value, value, 0.0]), stamp)
        robot.on_pose(np.array([0.5, 0.0, value]), quat, stamp)
        robot.on_twist(np.zeros(6))
        robot.on_wrench(np.zeros(6))
        robot.on_joints(["gripper"], np.array([1.0]), np.zeros(1), np.zeros(1))

    def answer() -> None:
        task.on_reset_done(json.dumps({"id": "a:1", "seed": 0, "stamp": reset_at, "gripper": 1.0}))

    publish(reset_at - 0.002, 0.25)  # the episode before
    answer()
    with pytest.raises(DeviceError, match="no /sim/task_state after reset"):
        task.reset(np.random.default_rng(0))
    publish(at_reset, 0.5)
    task.on_reset_done(json.dumps({"id": "a:2", "seed": 0, "stamp": reset_at, "gripper": 1.0}))
    task.reset(np.random.default_rng(0))
    assert task.task_state().tolist() == [0.5, 0.5] and robot.state().tcp_pos[2] == 0.5
