"""Mode ros2_control: targets to a ros2_control impedance controller over topics.

Most tests drive the backend through a recording node (same create_* API as robot_rl.ros
nodes) to control message and timer order exactly; the last one runs it on the real DDS
node layer on loopback against a stand-in controller node.
"""

from __future__ import annotations

import subprocess
import threading
import time

import numpy as np
import pytest
from fake_ros_node import RecordingNode  # tests/support

from robot_rl.config.loader import build
from robot_rl.config.sections import ControllerConfig, RobotConfig, WorkspaceConfig
from robot_rl.control.transforms import orientation_error, rpy_to_quat
from robot_rl.errors import ConfigError, DeviceError
from robot_rl.ros import convert, msgs
from robot_rl_drivers.robots import make_robot
from robot_rl_drivers.robots.faults import RobotFault
from robot_rl_drivers.robots.franka.ros2 import FrankaRos2ControlRobot
from robot_rl_drivers.robots.franka.settings import FrankaHardwareConfig

DOWN = rpy_to_quat(np.array([np.pi, 0.0, 0.0]))
HOME = np.array([0.45, 0.0, 0.30])
JOINTS = [f"fr3_joint{i}" for i in range(1, 8)]


def robot_cfg(ros2: dict | None = None, **controller) -> RobotConfig:
    return RobotConfig(backend="franka", reset_pos=tuple(HOME), workspace=WorkspaceConfig(
        pos_low=(0.3, -0.2, 0.1), pos_high=(0.6, 0.2, 0.5)), controller=ControllerConfig(**controller),
        hardware={"ip": "172.16.0.2", "mode": "ros2_control", "gripper": {"enabled": False},
                  "ros2_control": {"wrench_topic": "/wrench", "state_timeout_s": 0.3,
                                   "recovery_commands": [["ros2", "action", "send_goal",
                                                          "/action_server/error_recovery",
                                                          "franka_msgs/action/ErrorRecovery", "{}"]],
                                   **(ros2 or {})}})


def make(node, run=subprocess.run, ros2: dict | None = None, **controller) -> FrankaRos2ControlRobot:
    cfg = robot_cfg(ros2, **controller)
    hw = build(FrankaHardwareConfig, cfg.hardware, file="rig.yaml", where="robot.hardware")
    return FrankaRos2ControlRobot(cfg, hw, node, run=run)


def send_state(node: RecordingNode, pos=HOME, quat=DOWN, t: float | None = None, names=JOINTS) -> None:
    t = time.time() if t is None else t
    node.deliver("/current_pose", convert.pose_stamped_msg(np.asarray(pos), quat, t, "base"))
    q = np.linspace(0.1, 0.7, len(names))
    node.deliver("/joint_states", convert.joint_state_msg(names, q, q * 0.0, q * 2.0, t))


def targets(node: RecordingNode) -> list[tuple[np.ndarray, np.ndarray]]:
    return [convert.pose_from_msg(m) for m in node.published.get("/target_pose", [])]


def postures(node: RecordingNode) -> list[np.ndarray]:
    return [np.asarray(m.position) for m in node.published.get("/target_joint", [])]


REST = np.array([0.1, -0.7, 0.05, -2.3, 0.02, 1.6, 0.8])  # robot.controller.rest_posture in the posture tests
RESET_Q = np.array([0.2, -0.5, -0.1, -2.0, 0.1, 1.5, 0.6])


def test_nothing_is_published_before_the_first_state_then_the_measured_pose():
    node = RecordingNode()
    robot = make(node)
    node.tick()
    assert targets(node) == []
    with pytest.raises(DeviceError, match="no state yet on /current_pose"):
        robot.state()
    send_state(node, pos=HOME + np.array([0.01, 0.0, 0.0]))
    node.tick()
    (pos, quat), = targets(node)
    np.testing.assert_allclose(pos, HOME + [0.01, 0.0, 0.0])
    assert np.abs(orientation_error(quat, DOWN)).max() < 1e-9
    state = robot.state()
    np.testing.assert_allclose(state.q, np.linspace(0.1, 0.7, 7))
    np.testing.assert_allclose(state.tau, 2 * np.linspace(0.1, 0.7, 7))


def settle(node, seconds: float = 1.0, hz: float = 100.0) -> None:
    """Run the publish timer for ``seconds`` of ticks: the target slews toward a new goal."""
    for _ in range(int(seconds * hz)):
        node.tick()


def test_targets_are_box_clipped_and_the_error_clipped_per_axis():
    node = RecordingNode()
    robot = make(node, error_clip_mm=(10.0, 5.0, 10.0))
    send_state(node)
    robot.command(HOME + np.array([0.004, 0.003, -0.002]), DOWN)  # within the clip: sent as is
    settle(node)
    np.testing.assert_allclose(targets(node)[-1][0], HOME + [0.004, 0.003, -0.002])
    robot.command(np.array([2.0, -0.01, 0.30]), DOWN)  # far outside the box in x
    settle(node)
    pos, _ = targets(node)[-1]
    np.testing.assert_allclose(pos, HOME + [0.010, -0.005, 0.0])  # 10 mm and 5 mm from the measured pose
    assert robot.box_clipped_targets == 1
    # As the arm follows, the target keeps leading it toward the (box-clipped) goal.
    send_state(node, pos=HOME + np.array([0.1, 0.0, 0.0]))
    settle(node)
    np.testing.assert_allclose(targets(node)[-1][0], HOME + [0.11, -0.005, 0.0])
    send_state(node, pos=np.array([0.595, -0.01, 0.30]))
    settle(node)
    np.testing.assert_allclose(targets(node)[-1][0], [0.6, -0.01, 0.30])  # pos_high x = 0.6


def test_a_new_goal_is_approached_at_the_target_speed():
    """Alternating far goals cannot make the published target jump (robot_rl.control.slew)."""
    node = RecordingNode()
    robot = make(node, error_clip_mm=(50.0, 50.0, 50.0))
    send_state(node)
    hz = robot.s.publish_hz
    for i in range(50):
        robot.command(HOME + np.array([0.1 if i % 2 else -0.1, 0.0, 0.0]), DOWN)
        node.tick()
    published = np.array([p for p, _ in targets(node)])
    steps = np.linalg.norm(np.diff(published, axis=0), axis=1)
    assert steps.max() <= robot.cfg.controller.max_target_speed / hz + 1e-9
    assert np.abs(published - HOME).max() <= robot.cfg.controller.max_target_speed / hz + 1e-9


def test_bad_targets_are_rejected_and_bad_messages_dropped():
    node = RecordingNode()
    robot = make(node)
    send_state(node, names=[f"panda_joint{i}" for i in range(1, 8)])
    assert node.dropped and "fr3_joint1" in node.dropped[-1] and "joint_prefix" in node.dropped[-1]
    send_state(node)
    robot.command(np.array([np.nan, 0.0, 0.3]), DOWN)
    robot.command(HOME, np.zeros(4))
    assert robot.rejected_targets == 2
    node.tick()
    np.testing.assert_allclose(targets(node)[-1][0], HOME)


def test_the_watchdog_holds_the_measured_pose_when_commands_stop():
    node = RecordingNode()
    robot = make(node, watchdog_s=0.05)
    send_state(node)
    robot.command(HOME + np.array([0.0, 0.008, 0.0]), DOWN)
    for _ in range(5):  # 8 mm at max_target_speed (1 m/s): under one 10 ms tick of the five
        node.tick()
    np.testing.assert_allclose(targets(node)[-1][0], HOME + [0.0, 0.008, 0.0])
    time.sleep(0.1)
    send_state(node, pos=HOME + np.array([0.0, 0.003, 0.0]))
    node.tick()
    np.testing.assert_allclose(targets(node)[-1][0], HOME + [0.0, 0.003, 0.0])
    assert robot.watchdog_holds == 1


def test_stale_state_is_a_fault_and_recover_runs_the_recovery_command():
    node = RecordingNode()
    calls = []

    def run(cmd, **kw):
        calls.append(cmd)
        threading.Timer(0.05, send_state, args=(node,), kwargs={"pos": HOME + np.array([0.0, 0.0, 0.02])}).start()
        return subprocess.CompletedProcess(cmd, 0, "Goal accepted", "")

    robot = make(node, run=run)
    send_state(node)
    robot.command(HOME + np.array([0.0, 0.0, -0.009]), DOWN)
    time.sleep(0.4)  # state_timeout_s = 0.3
    with pytest.raises(RobotFault, match="no state on /current_pose / /joint_states for") as err:
        robot.state()
    assert err.value.recoverable
    n = len(targets(node))
    node.tick()
    assert len(targets(node)) == n, "no targets while the state is stale"
    robot.hold()  # never raises
    robot.recover()
    assert calls == [["ros2", "action", "send_goal", "/action_server/error_recovery",
                      "franka_msgs/action/ErrorRecovery", "{}"]]
    node.tick()
    np.testing.assert_allclose(targets(node)[-1][0], HOME + [0.0, 0.0, 0.02])  # holds where it is now


@pytest.mark.parametrize("outcome, message", [
    (FileNotFoundError(), "cannot run 'ros2' here; recover by hand: ros2 action send_goal"),
    (subprocess.CompletedProcess([], 1, "", "Action server not available\n"),
     "exited with 1: Action server not available"),
])
def test_a_failed_recovery_is_a_fault_that_says_what_to_do(outcome, message):
    node = RecordingNode()

    def run(cmd, **kw):
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    robot = make(node, run=run)
    send_state(node)
    time.sleep(0.4)
    node.tick()
    assert robot.fault is not None
    with pytest.raises(RobotFault, match=message):
        robot.recover()


def test_set_posture_publishes_a_joint_state_once_and_none_the_rest_posture():
    node = RecordingNode()
    robot = make(node, rest_posture=tuple(REST))
    with pytest.raises(DeviceError, match="no state yet"):
        robot.set_posture(RESET_Q)
    assert postures(node) == []
    send_state(node)
    before = time.time()
    robot.set_posture(RESET_Q)
    msg, = node.published["/target_joint"]
    assert list(msg.name) == JOINTS  # CRISP reads positions in its joints order: fr3_joint1..7
    np.testing.assert_array_equal(msg.position, RESET_Q)
    assert len(msg.velocity) == 0 and len(msg.effort) == 0  # CRISP would take velocities as dq_ref
    assert before - 1e-3 <= convert.stamp_from_msg(msg.header.stamp) <= time.time() + 1e-3
    for _ in range(3):
        node.tick()
    assert len(postures(node)) == 1, "the posture is sent on change, not with every target"
    assert len(targets(node)) == 3
    robot.set_posture(None)
    np.testing.assert_array_equal(postures(node)[-1], REST)
    assert len(postures(node)) == 2


@pytest.mark.parametrize("q, stiffness, message", [
    (RESET_Q[:6], None, "posture must be 7 numbers"),
    (np.append(RESET_Q, 0.0), None, "posture must be 7 numbers"),
    (np.where(np.arange(7) == 3, np.nan, RESET_Q), None, "posture must be finite"),
    (np.where(np.arange(7) == 0, np.inf, RESET_Q), None, "posture must be finite"),
    (RESET_Q.reshape(7, 1), None, "posture must be 7 numbers"),
    ([0.1, "elbow", 0.0, -2.0, 0.0, 1.5, 0.7], None, "posture must be 7 numbers"),
    (RESET_Q, -5.0, "stiffness must be >= 0"),
    (RESET_Q, float("nan"), "stiffness must be finite"),
])
def test_a_malformed_posture_is_refused_counted_and_publishes_nothing(q, stiffness, message, caplog):
    node = RecordingNode()
    robot = make(node)
    send_state(node)
    assert robot.set_posture(q, stiffness) is False
    assert robot.rejected_postures == 1
    assert message in caplog.text
    assert postures(node) == []


def test_a_posture_past_the_joint_limits_is_clipped_before_it_is_published():
    node = RecordingNode()
    robot = make(node)
    send_state(node)
    assert robot.set_posture(np.full(7, 1e200), 1e6) is True
    np.testing.assert_allclose(postures(node)[-1], robot.cfg.controller.joint_high)


def test_without_a_posture_topic_set_posture_is_not_implemented():
    node = RecordingNode()
    robot = make(node, ros2={"posture_topic": None})
    send_state(node)
    with pytest.raises(NotImplementedError, match="ros2_control.posture_topic is null"):
        robot.set_posture(RESET_Q)
    with pytest.raises(NotImplementedError):
        robot.set_posture(None)
    assert list(node.published) == ["/target_pose"]  # no posture publisher at all


def test_a_stiffness_cannot_be_applied_and_warns_once(caplog):
    node = RecordingNode()
    robot = make(node)
    send_state(node)
    with caplog.at_level("WARNING", logger="robot_rl_drivers.robots.franka.ros2"):
        robot.set_posture(RESET_Q, stiffness=80.0)
        robot.set_posture(RESET_Q * 0.5, stiffness=80.0)
        robot.set_posture(RESET_Q, stiffness=40.0)
    warnings = [r.getMessage() for r in caplog.records if "not applied" in r.getMessage()]
    assert len(warnings) == 1 and "nullspace.stiffness" in warnings[0] and "80" in warnings[0]
    assert len(postures(node)) == 3  # the postures still go out


def test_the_watchdog_hold_restores_the_rest_posture_after_an_override():
    node = RecordingNode()
    robot = make(node, watchdog_s=0.05, rest_posture=tuple(REST))
    send_state(node)
    robot.command(HOME, DOWN)
    node.tick()
    time.sleep(0.1)  # a watchdog hold with no posture override publishes no posture
    send_state(node)
    node.tick()
    assert robot.watchdog_holds == 1 and postures(node) == []
    robot.command(HOME, DOWN)
    robot.set_posture(RESET_Q, stiffness=None)
    node.tick()
    assert len(postures(node)) == 1
    time.sleep(0.1)
    send_state(node)
    node.tick()
    assert robot.watchdog_holds == 2
    assert len(postures(node)) == 2
    np.testing.assert_array_equal(postures(node)[-1], REST)
    assert list(node.published["/target_joint"][-1].name) == JOINTS
    time.sleep(0.1)
    send_state(node)
    node.tick()  # still holding: the rest posture went out once
    assert len(postures(node)) == 2
    robot.set_posture(RESET_Q)
    robot.set_posture(None)  # restored by the caller: nothing left for the watchdog
    robot.command(HOME, DOWN)
    time.sleep(0.1)
    send_state(node)
    node.tick()
    assert robot.watchdog_holds == 3 and len(postures(node)) == 4


def test_after_recover_no_posture_counts_as_set_and_close_restores_one():
    node = RecordingNode()

    def run(cmd, **kw):
        threading.Timer(0.05, send_state, args=(node,)).start()
        return subprocess.CompletedProcess(cmd, 0, "Goal accepted", "")

    robot = make(node, run=run, watchdog_s=0.05, rest_posture=tuple(REST))
    send_state(node)
    robot.command(HOME, DOWN)
    robot.set_posture(RESET_Q)
    time.sleep(0.4)  # state_timeout_s = 0.3
    with pytest.raises(RobotFault):
        robot.set_posture(RESET_Q)
    robot.recover()  # the restarted controller starts from its own reference
    robot.command(HOME, DOWN)
    time.sleep(0.1)
    send_state(node)
    node.tick()
    assert robot.watchdog_holds == 1 and len(postures(node)) == 1, "nothing to restore after recover()"
    robot.set_posture(RESET_Q)
    robot.close()  # the caller is gone: the configured posture comes back, once
    assert len(postures(node)) == 3
    np.testing.assert_array_equal(postures(node)[-1], REST)


def test_make_robot_needs_a_node_for_ros2_control():
    with pytest.raises(ConfigError, match="talks over ROS topics; build it with a node"):
        make_robot(robot_cfg(), file="rig.yaml")


def test_on_the_dds_node_layer_against_a_stand_in_controller(monkeypatch):
    from robot_rl import ros

    monkeypatch.setenv("ROBOT_RL_ROS_BACKEND", "dds")
    if ros.backend_name() != "dds":
        pytest.skip("the rclpy backend is active here")
    ros.init()
    executor = ros.SingleThreadedExecutor()
    try:
        controller = ros.Node("stand_in_controller")
        received, posture_received = [], []
        controller.create_subscription(msgs.PoseStamped, "/target_pose", received.append, 10)
        posture_sub = controller.create_subscription(msgs.JointState, "/target_joint", posture_received.append, 1)
        pose_pub = controller.create_publisher(msgs.PoseStamped, "/current_pose", 10)
        joint_pub = controller.create_publisher(msgs.JointState, "/joint_states", 10)

        def publish_state() -> None:
            t = time.time()
            pose_pub.publish(convert.pose_stamped_msg(HOME, DOWN, t, "base"))
            joint_pub.publish(convert.joint_state_msg(JOINTS, np.zeros(7), np.zeros(7), np.zeros(7), t))

        controller.create_timer(0.02, publish_state)
        node = ros.Node("robot_rl_franka")
        robot = make(node)
        executor.add_node(controller)
        executor.add_node(node)
        spinning = threading.Event()
        spinning.set()

        def spin() -> None:  # the node owner's executor; it stops before robot.close()
            while spinning.is_set():
                executor.spin_once(timeout_sec=0.02)

        spinner = threading.Thread(target=spin, daemon=True)
        spinner.start()
        robot.wait_until_ready(timeout=10.0)
        deadline = time.time() + 5.0
        while not received and time.time() < deadline:
            time.sleep(0.01)
        first, _ = convert.pose_from_msg(received[0])
        np.testing.assert_allclose(first, HOME, atol=1e-12)  # starts at the measured pose
        robot.command(HOME + np.array([0.03, 0.0, 0.0]), DOWN)
        time.sleep(0.3)
        last, _ = convert.pose_from_msg(received[-1])
        np.testing.assert_allclose(last, HOME + [0.01, 0.0, 0.0], atol=1e-9)  # 10 mm error clip
        assert robot.state().tcp_pos == pytest.approx(HOME)
        # The posture goes out once: wait until both ends are matched (CRISP also wants exactly one publisher).
        while not (posture_sub.get_publisher_count() == 1 and robot._posture_pub.get_subscription_count() >= 1):
            assert time.time() < deadline + 5.0, "no match on /target_joint"
            time.sleep(0.01)
        robot.set_posture(RESET_Q)
        while not posture_received and time.time() < deadline + 5.0:
            time.sleep(0.01)
        (names, q, dq, _), = [convert.joint_state_from_msg(m) for m in posture_received]
        assert names == JOINTS
        np.testing.assert_array_equal(q, RESET_Q)
        assert len(posture_received[0].velocity) == 0
        spinning.clear()
        spinner.join(timeout=5.0)
        robot.close()
    finally:
        executor.shutdown()
        ros.shutdown()
