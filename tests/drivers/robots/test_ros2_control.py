"""``robot.backend: ros2_control``: any arm behind a ros2_control Cartesian controller, over topics.

Most tests drive the FZI cartesian_controllers contract (a 6-joint UR5e behind the
cartesian_compliance_controller) on a recording node (tests/support/fake_ros_node.py),
which fixes message and timer order exactly; the CRISP contract on a Franka is
tests/drivers/robots/test_franka_ros2.py. The config is the example
configs/ur5e_ros2_control.yaml, with overrides.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from fake_ros_node import RecordingNode  # tests/support

from robot_rl.arms import UR_JOINT_NAMES
from robot_rl.config.loader import build
from robot_rl.config.sections import ControllerConfig, RobotConfig, WorkspaceConfig
from robot_rl.control.transforms import orientation_error, quat_to_mat, rpy_to_quat
from robot_rl.errors import ConfigError, DeviceError
from robot_rl.ros import convert
from robot_rl.tasks import load_config
from robot_rl_drivers.robots import arm_joint_names, make_robot, robot_hardware
from robot_rl_drivers.robots.faults import RobotFault
from robot_rl_drivers.robots.ros2_control.robot import Ros2ControlRobot
from robot_rl_drivers.robots.ros2_control.settings import ROS2_CONTROL_CONTRACTS, Ros2ControlSettings

EXAMPLE = Path(__file__).resolve().parents[3] / "configs" / "ur5e_ros2_control.yaml"
UR_JOINTS = list(UR_JOINT_NAMES)
PREFIX = "/cartesian_compliance_controller"
TARGET, POSE, FT = f"{PREFIX}/target_frame", f"{PREFIX}/current_pose", f"{PREFIX}/ft_sensor_wrench"
DOWN = rpy_to_quat(np.array([np.pi, 0.0, 0.0]))  # tool z down: tool0's axes are base x, -y, -z
HOME = np.array([0.45, 0.0, 0.30])
Q = np.array([0.1, -1.2, 1.5, -1.9, -1.6, 0.3])  # in UR_JOINTS order
TIMEOUT = 0.3


class TimedNode(RecordingNode):
    """A recording node that also keeps each timer's period."""

    def __init__(self) -> None:
        super().__init__()
        self.periods: list[float] = []
        self.types: dict[str, str] = {}

    def create_timer(self, period, callback):
        self.periods.append(period)
        return super().create_timer(period, callback)

    def create_publisher(self, msg_type, topic, qos):
        self.types[topic] = msg_type.__name__
        return super().create_publisher(msg_type, topic, qos)

    def create_subscription(self, msg_type, topic, callback, qos):
        self.types[topic] = msg_type.__name__
        return super().create_subscription(msg_type, topic, callback, qos)


def settings(**overrides) -> Ros2ControlSettings:
    data = {"contract": "cartesian_controllers", "joint_names": UR_JOINTS, "state_timeout_s": TIMEOUT, **overrides}
    return build(Ros2ControlSettings, data, file="cell.yaml", where="robot.hardware")


def robot_cfg(**controller) -> RobotConfig:
    return RobotConfig(backend="ros2_control", reset_pos=tuple(HOME), workspace=WorkspaceConfig(
        pos_low=(0.3, -0.2, 0.1), pos_high=(0.6, 0.2, 0.5)), controller=ControllerConfig(**controller))


def make(node=None, run=subprocess.run, hw: dict | None = None, clock=time.monotonic,
         **controller) -> Ros2ControlRobot:
    node = node if node is not None else TimedNode()
    return Ros2ControlRobot(robot_cfg(**controller), settings(**(hw or {})), node, run=run, clock=clock)


class ClockedNode(TimedNode):
    """A TimedNode with a clock that advances one publish period per ``tick``, as under an executor
    that keeps time: state ages and the watchdog then count ticks, which a loaded host cannot
    stretch (a test process starved for a second between two ticks is not a stopped controller)."""

    def __init__(self, hz: float = 100.0) -> None:
        super().__init__()
        self.now, self.period = 1000.0, 1.0 / hz

    def clock(self) -> float:
        return self.now

    def tick(self) -> None:
        self.now += self.period
        super().tick()


def joint_msg(names=UR_JOINTS, q=Q, t=None):
    q = np.asarray(q, dtype=np.float64)
    return convert.joint_state_msg(list(names), q, q * 0.1, q * 2.0, time.time() if t is None else t)


def wrench_msg(wrench, frame="tool0", t=None):
    return convert.wrench_stamped_msg(np.asarray(wrench, dtype=np.float64), time.time() if t is None else t, frame)


def send_state(node, pos=HOME, quat=DOWN, wrench=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0), frame="base_link", t=None,
               wrench_frame="tool0") -> None:
    t = time.time() if t is None else t
    node.deliver(POSE, convert.pose_stamped_msg(np.asarray(pos, dtype=np.float64), quat, t, frame))
    node.deliver("/joint_states", joint_msg(t=t))
    if wrench is not None:
        node.deliver(FT, wrench_msg(wrench, wrench_frame, t))


def targets(node) -> list[tuple[np.ndarray, np.ndarray]]:
    return [convert.pose_from_msg(m) for m in node.published.get(TARGET, [])]


def settle(node, seconds: float = 1.0, hz: float = 100.0, **state) -> None:
    """Ticks of the publish timer, with a fresh state before each (the arm stands where ``state`` says)."""
    for _ in range(int(seconds * hz)):
        send_state(node, **state)
        node.tick()


# --------------------------------------------------------------------------- config


def test_the_contract_picks_every_default_and_each_can_be_overridden():
    fzi = settings()
    assert (fzi.target_topic, fzi.pose_topic, fzi.wrench_topic) == (TARGET, POSE, FT)
    assert fzi.posture_topic is None and fzi.joint_states_topic == "/joint_states"
    assert (fzi.frame_id, fzi.tcp_frame_id, fzi.wrench_required) == ("base_link", "tool0", True)
    assert fzi.joints == UR_JOINTS and fzi.recovery_commands == []
    crisp = build(Ros2ControlSettings, {}, file="cell.yaml", where="robot.hardware")
    assert (crisp.target_topic, crisp.posture_topic, crisp.pose_topic) == ("/target_pose", "/target_joint",
                                                                          "/current_pose")
    assert crisp.wrench_topic is None and crisp.wrench_required is False and crisp.frame_id == "base"
    assert crisp.joints == [f"fr3_joint{i}" for i in range(1, 8)]
    own = settings(target_topic="/arm/compliance/target_frame", frame_id="world", tcp_frame_id="flange",
                   wrench_topic=None)
    assert own.target_topic == "/arm/compliance/target_frame" and own.frame_id == "world"
    assert own.tcp_frame_id == "flange" and own.pose_topic == POSE
    assert own.wrench_topic is None and own.wrench_required is False  # no sensor, nothing to require
    for name, contract in ROS2_CONTROL_CONTRACTS.items():  # every contract is complete and valid on its own
        assert contract.target_topic.startswith("/") and contract.pose_topic.startswith("/"), name


def test_the_example_config_is_a_ur5e_behind_the_compliance_controller():
    cfg = load_config(EXAMPLE)
    hw = cfg.robot.hardware
    assert cfg.robot.backend == "ros2_control" and isinstance(hw, Ros2ControlSettings)
    assert hw.contract == "cartesian_controllers" and hw.joints == UR_JOINTS
    assert (hw.target_topic, hw.pose_topic, hw.wrench_topic, hw.frame_id) == (TARGET, POSE, FT, "base_link")
    assert hw.wrench_required and hw.posture_topic is None
    assert cfg.reset.joint_reset_every == 0  # no null space to reset
    assert arm_joint_names(cfg.robot) == UR_JOINTS  # what the controller node publishes
    from robot_rl.nodes.description import build_graph

    assert "controller_node" in build_graph(cfg, EXAMPLE).names  # the controller node runs this backend


@pytest.mark.parametrize("override, fragments", [
    ("robot.hardware.force_limit=.nan", ["'robot.hardware.force_limit' must be a finite number"]),
    ("robot.hardware.force_limit=.inf", ["'robot.hardware.force_limit' must be a finite number"]),
    ("robot.hardware.torque_limit=1.0e+300", ["'robot.hardware.torque_limit' = 1e+300 is out of range"]),
    ("robot.hardware.force_limit=-5", ["'robot.hardware.force_limit' = -5.0 is out of range"]),
    ("robot.hardware.force_limit=heavy", ["'robot.hardware.force_limit' must be a number"]),
    ("robot.hardware.contract=kuka", ["'robot.hardware.contract' must be one of 'crisp', 'cartesian_controllers'"]),
    ("robot.hardware.joint_names=null", ["joint_names is required with contract 'cartesian_controllers'"]),
    ("robot.hardware.joint_names=[]", ["joint_names must name 1 to 32 joints, got 0"]),
    ("robot.hardware.joint_names=[a, 7]", ["'robot.hardware.joint_names[1]' must be a string"]),
    ("robot.hardware.joint_names=elbow", ["'robot.hardware.joint_names' must be a list"]),
    ("robot.hardware.joint_names=[a, b, a]", ["joint_names names 'a' twice"]),
    ("robot.hardware.joint_names=['', b]", ["joint_names has an empty or overlong name"]),
    ("robot.hardware.joint_names=[" + ", ".join(f"j{i}" for i in range(40)) + "]",
     ["joint_names must name 1 to 32 joints, got 40"]),
    ("robot.hardware.wrench_required=maybe", ["'robot.hardware.wrench_required' must be true or false"]),
    ("robot.hardware.frame_id='base link'", ["frame_id 'base link' is not a tf frame name"]),
    ("robot.hardware.tcp_frame_id=''", ["tcp_frame_id '' is not a tf frame name"]),
    ("robot.hardware.target_topic='not a topic!'", ["target_topic 'not a topic!' is not a ROS topic name"]),
    ("robot.hardware.wrench_topic=null", ["wrench_required needs a wrench_topic"]),
    ("robot.hardware.posture_topic=/target_joint", ["posture_topic needs a 7-joint arm", "this one has 6"]),
    ("robot.hardware.publish_hz=.nan", ["'robot.hardware.publish_hz' must be a finite number"]),
    ("robot.hardware.state_timeout_s=1.0e+300", ["'robot.hardware.state_timeout_s' = 1e+300 is out of range"]),
])
def test_a_bad_value_is_one_line_naming_the_file_and_key(override, fragments):
    with pytest.raises(ConfigError) as err:
        load_config(EXAMPLE, [override])
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message, message
    for fragment in fragments:
        assert fragment in message, message
    key = override.split("=", 1)[0]
    assert str(EXAMPLE) in message or f"--set {key}" in message, message


def test_a_bad_value_in_the_file_names_the_file(tmp_path):
    data = yaml.safe_load(EXAMPLE.read_text())
    data["robot"]["hardware"]["torque_limit"] = float("nan")
    path = tmp_path / "cell.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"cell.yaml: 'robot.hardware.torque_limit' must be a finite number"):
        load_config(path)


def test_make_robot_builds_it_with_a_node_and_refuses_without_one():
    cfg = robot_cfg()
    cfg.hardware = {"contract": "cartesian_controllers", "joint_names": UR_JOINTS}
    with pytest.raises(ConfigError, match="robot.backend 'ros2_control' talks over ROS topics; build it with a node"):
        make_robot(cfg, file="cell.yaml")
    node = TimedNode()
    robot = make_robot(cfg, file="cell.yaml", node=node)
    assert isinstance(robot, Ros2ControlRobot) and robot.joint_names == UR_JOINTS
    assert isinstance(robot_hardware(cfg), Ros2ControlSettings)
    robot.close()


# --------------------------------------------------------------------------- what goes where


def test_it_speaks_the_fzi_topics_with_their_types_and_rate():
    node = TimedNode()
    robot = make(node, hw={"publish_hz": 250.0})
    assert set(node.callbacks) == {POSE, "/joint_states", FT}
    assert node.types == {TARGET: "PoseStamped", POSE: "PoseStamped", "/joint_states": "JointState",
                          FT: "WrenchStamped"}
    assert node.periods == [pytest.approx(1 / 250.0)]  # the target is re-sent at publish_hz
    for _ in range(3):
        node.tick()
    assert node.published.get(TARGET, []) == [], "nothing before the first state"
    robot.close()


def test_nothing_is_sent_before_pose_joints_and_wrench_then_the_measured_pose_in_the_base_frame():
    node = TimedNode()
    robot = make(node)
    start = HOME + np.array([0.01, -0.02, 0.0])
    send_state(node, pos=start, wrench=None)  # no F/T reading yet: the compliance controller would act blind
    node.tick()
    assert targets(node) == []
    with pytest.raises(DeviceError, match=rf"no state yet on {POSE} / /joint_states / {FT}"):
        robot.state()
    with pytest.raises(DeviceError, match=rf"no state on {POSE} and /joint_states and {FT} within 0.05 s "
                                          r"\(got a pose and joint states; is the cartesian_compliance_controller"):
        robot.wait_until_ready(0.05)
    node.deliver(FT, wrench_msg(np.zeros(6)))
    before = time.time()
    node.tick()
    (msg,) = node.published[TARGET]
    assert msg.header.frame_id == "base_link"  # FZI ignores a target in any frame but robot_base_link
    assert before - 1e-3 <= convert.stamp_from_msg(msg.header.stamp) <= time.time() + 1e-3
    pos, quat = convert.pose_from_msg(msg)
    np.testing.assert_allclose(pos, start)
    assert np.abs(orientation_error(quat, DOWN)).max() < 1e-9
    robot.close()


def test_joint_states_map_by_name_to_the_configured_order():
    """ur_robot_driver's joint_state_broadcaster publishes the joints in its own (alphabetical) order."""
    node = TimedNode()
    robot = make(node)
    order = sorted(UR_JOINTS) + ["finger_joint"]
    by_name = dict(zip(UR_JOINTS, Q))
    q = np.array([by_name.get(n, 0.7) for n in order])
    node.deliver(POSE, convert.pose_stamped_msg(HOME, DOWN, time.time(), "base_link"))
    node.deliver("/joint_states", joint_msg(order, q))
    node.deliver(FT, wrench_msg(np.zeros(6)))
    state = robot.state()
    assert state.q.shape == state.dq.shape == state.tau.shape == (6,)
    np.testing.assert_allclose(state.q, Q)
    np.testing.assert_allclose(state.dq, Q * 0.1)
    np.testing.assert_allclose(state.tau, Q * 2.0)
    node.deliver("/joint_states", joint_msg(UR_JOINTS[:5], Q[:5]))  # wrist_3 missing: dropped, state unchanged
    assert "lacks ['wrist_3_joint']" in node.dropped[-1] and "robot.hardware.joint_names" in node.dropped[-1]
    np.testing.assert_allclose(robot.state().q, Q)
    assert robot.dropped["joints"] == 1
    with pytest.raises(NotImplementedError, match="posture_topic is null.*cartesian_controllers contract has none"):
        robot.set_posture(None)
    robot.close()


def test_targets_are_box_clipped_error_clipped_and_slewed():
    node = ClockedNode()
    robot = make(node, clock=node.clock, error_clip_mm=(10.0, 5.0, 10.0), error_clip_rad=(0.05, 0.05, 0.05))
    settle(node, 0.05)
    # Settles of 0.2 s on the node's clock: long enough for the slew (1 m/s, 3 rad/s at 100 Hz), and
    # two of them stay inside the 0.5 s watchdog that would otherwise hold the measured pose.
    robot.command(HOME + np.array([0.004, 0.003, -0.002]), DOWN)  # within the clip: sent as is
    settle(node, 0.2)
    np.testing.assert_allclose(targets(node)[-1][0], HOME + [0.004, 0.003, -0.002])
    robot.command(np.array([2.0, -0.01, 0.30]), rpy_to_quat(np.array([np.pi, 0.0, 0.5])))  # out of the box in x
    settle(node, 0.2)
    pos, quat = targets(node)[-1]
    np.testing.assert_allclose(pos, HOME + [0.010, -0.005, 0.0])  # 10 mm and 5 mm from the measured pose
    assert np.abs(orientation_error(quat, DOWN)).max() == pytest.approx(0.05)  # the rotation error clipped too
    assert robot.box_clipped_targets == 1
    settle(node, 0.2, pos=np.array([0.595, -0.01, 0.30]))  # the arm followed: the target leads it to the box wall
    np.testing.assert_allclose(targets(node)[-1][0], [0.6, -0.01, 0.30])
    hz = robot.s.publish_hz
    n = len(targets(node))
    for i in range(40):  # alternating far goals: the published target moves at most max_target_speed
        robot.command(HOME + np.array([0.1 if i % 2 else -0.1, 0.0, 0.0]), DOWN)
        send_state(node, pos=HOME)
        node.tick()
    published = np.array([p for p, _ in targets(node)[n:]])
    assert np.abs(published - HOME).max() <= robot.cfg.controller.max_target_speed / hz + 1e-9
    robot.close()


# --------------------------------------------------------------------------- the wrench


def test_a_wrench_in_the_tcp_frame_is_rotated_into_the_base_frame():
    node = TimedNode()
    robot = make(node)
    tilted = rpy_to_quat(np.array([np.pi, 0.3, 0.7]))
    reading = np.array([1.0, -2.0, 10.0, 0.1, 0.2, -0.3])
    send_state(node, quat=tilted, wrench=reading, wrench_frame="tool0")
    wrench = robot.state().tcp_wrench
    rot = quat_to_mat(tilted)
    np.testing.assert_allclose(wrench[:3], rot @ reading[:3])
    np.testing.assert_allclose(wrench[3:], rot @ reading[3:])
    send_state(node, quat=DOWN, wrench=[0.0, 0.0, 10.0, 0.0, 0.0, 1.0])  # tool z down: +Fz in tool0 is -z in base
    np.testing.assert_allclose(robot.state().tcp_wrench, [0.0, 0.0, -10.0, 0.0, 0.0, -1.0], atol=1e-12)
    send_state(node, quat=tilted, wrench=reading, wrench_frame="base_link")  # already in the base frame
    np.testing.assert_allclose(robot.state().tcp_wrench, reading)
    before = robot.state().tcp_wrench.copy()
    node.deliver(FT, wrench_msg([50.0, 0, 0, 0, 0, 0], frame="sensor_link"))  # a frame robot_rl cannot place
    assert robot.dropped["wrench"] == 1
    assert "in frame 'sensor_link'; robot_rl reads wrenches in 'base_link' or 'tool0'" in node.dropped[-1]
    np.testing.assert_allclose(robot.state().tcp_wrench, before)
    assert robot.fault is None
    robot.close()


def test_a_silent_force_torque_sensor_holds_the_arm_until_recover():
    node = TimedNode()
    robot = make(node)
    settle(node, 0.05)
    robot.command(HOME + np.array([0.0, 0.0, -0.009]), DOWN)
    for _ in range(3):
        send_state(node)
        node.tick()
    last = robot.state()
    deadline = time.monotonic() + TIMEOUT + 0.1
    fault_pose = HOME + np.array([0.0, 0.002, 0.0])
    while time.monotonic() < deadline:  # pose and joints keep coming, the F/T stream has stopped
        send_state(node, pos=fault_pose, wrench=None)
        time.sleep(0.01)
    node.tick()
    assert robot.fault is not None and robot.ft_faults == 1
    with pytest.raises(RobotFault, match=rf"no force-torque reading on {FT} for 0\.\d\d s .*the arm holds; "
                                         rf"check `ros2 topic hz {FT}`, then recover") as err:
        robot.state()
    assert err.value.recoverable and err.value.state is not None
    np.testing.assert_allclose(err.value.state.tcp_pos, last.tcp_pos)  # what was recorded last is kept
    with pytest.raises(RobotFault):
        robot.command(HOME, DOWN)
    # The hold: the pose measured when the fault began, re-sent (clipped toward the arm) while it lasts.
    for pos in (fault_pose, fault_pose + [0.02, 0.0, 0.0]):  # even as a stale force pushes the arm away
        send_state(node, pos=pos, wrench=None)
        node.tick()
    np.testing.assert_allclose(targets(node)[-2][0], fault_pose)
    np.testing.assert_allclose(targets(node)[-1][0], fault_pose + [0.01, 0.0, 0.0])  # 10 mm clip back to it
    robot.hold()  # never raises
    threading.Timer(0.05, send_state, args=(node,), kwargs={"pos": HOME}).start()
    robot.recover()  # no recovery commands configured: it waits for fresh state and a fresh reading
    assert robot.fault is None
    node.tick()
    np.testing.assert_allclose(targets(node)[-1][0], HOME)  # holds where the arm is now
    assert robot.command(HOME + [0.0, 0.0, 0.005], DOWN) is True
    robot.close()


@pytest.mark.parametrize("reading, message", [
    ([0.0, 0.0, 312.0, 0.0, 0.0, 0.0], r"saturated on .*ft_sensor_wrench: \|Fz\| = 312 N > 150 N: the arm holds"),
    ([0.0, -160.0, 0.0, 0.0, 16.0, 0.0], r"\|Fy\| = 160 N > 150 N, \|Ty\| = 16 Nm > 15 Nm"),
    ([np.nan, 0.0, 0.0, 0.0, 0.0, 0.0], r"the force-torque reading on .*ft_sensor_wrench is not finite"),
    ([0.0, 0.0, 0.0, np.inf, 0.0, 0.0], r"the force-torque reading on .*ft_sensor_wrench is not finite"),
    ([0.0, 0.0, 1e300, 0.0, 0.0, 0.0], r"\|Fz\| = 1e\+300 N > 150 N"),
])
def test_a_saturated_or_non_finite_reading_is_a_fault_and_the_arm_holds(reading, message):
    node = TimedNode()
    calls = []
    robot = make(node, run=lambda cmd, **kw: (calls.append(cmd), subprocess.CompletedProcess(cmd, 0, "", ""))[1],
                 hw={"recovery_commands": [["ros2", "control", "switch_controllers", "--activate",
                                            "cartesian_compliance_controller"]]})
    settle(node, 0.05, wrench=[0.0, 0.0, 3.0, 0.0, 0.0, 0.0], wrench_frame="base_link")
    robot.command(HOME + np.array([0.0, 0.008, 0.0]), DOWN)
    send_state(node, pos=HOME + [0.001, 0.0, 0.0], wrench=[0.0, 0.0, 4.0, 0.0, 0.0, 0.0], wrench_frame="base_link")
    last = robot.state()
    node.deliver(FT, wrench_msg(reading))
    assert robot.dropped["wrench"] == 1, "the bad reading is not used"
    with pytest.raises(RobotFault, match=message) as err:
        robot.state()
    np.testing.assert_array_equal(err.value.state.tcp_wrench, last.tcp_wrench)  # the last good state is kept
    np.testing.assert_array_equal(err.value.state.tcp_wrench, [0.0, 0.0, 4.0, 0.0, 0.0, 0.0])
    assert len(robot.fault.splitlines()) == 1 and "then recover" in robot.fault
    node.tick()
    np.testing.assert_allclose(targets(node)[-1][0], HOME + [0.001, 0.0, 0.0])  # the goal is dropped: hold
    # recover() while the sensor still reads the same: a person must look.
    threading.Timer(0.05, send_state, args=(node,), kwargs={"wrench": reading}).start()
    with pytest.raises(RobotFault):
        robot.recover()
    assert calls, "the recovery command ran"
    threading.Timer(0.05, send_state, args=(node,)).start()
    robot.recover()  # the reading is sane again
    assert robot.fault is None and np.all(np.isfinite(robot.state().tcp_wrench))
    robot.close()


def test_a_recovery_that_brings_no_state_back_is_a_fault_not_a_crash():
    node = TimedNode()
    robot = make(node, hw={"first_state_timeout_s": 0.1})
    send_state(node)
    node.deliver(FT, wrench_msg([0.0, 0.0, 500.0, 0.0, 0.0, 0.0]))
    with pytest.raises(RobotFault, match="no fresh state after recovery: .* within 0.1 s"):
        robot.recover()
    assert robot.fault is not None
    robot.close()


# --------------------------------------------------------------------------- bad messages


def _hostile_poses() -> list[tuple[str, object]]:
    t = time.time()

    def pose(pos, quat=DOWN, frame="base_link", stamp=t):
        m = convert.pose_stamped_msg(HOME, DOWN, stamp, frame)
        m.pose.position.x, m.pose.position.y, m.pose.position.z = (float(v) for v in pos)
        m.pose.orientation.w, m.pose.orientation.x, m.pose.orientation.y, m.pose.orientation.z = (
            float(v) for v in quat)
        return m

    return [("NaN position", pose([np.nan, 0.0, 0.3])), ("inf position", pose([0.4, np.inf, 0.3])),
            ("NaN quaternion", pose(HOME, [np.nan, 0, 0, 1])), ("zero quaternion", pose(HOME, [0, 0, 0, 0])),
            ("1e200 position", pose([1e200, 0.0, 0.3])), ("20 m away", pose([20.0, 0.0, 0.3])),
            ("other frame", pose(HOME, frame="world")), ("no frame", pose(HOME, frame="")),
            ("older stamp", pose(HOME, stamp=t - 10.0)),
            ("not a pose", SimpleNamespace(header=SimpleNamespace(frame_id="base_link"))),
            ("strings", SimpleNamespace(pose=SimpleNamespace(position=SimpleNamespace(x="a", y=0, z=0)))),
            ("None", None), ("a wrench", wrench_msg(np.zeros(6)))]


def _hostile_joints() -> list[tuple[str, object]]:
    def js(**fields):
        m = joint_msg()
        for k, v in fields.items():
            setattr(m, k, v)
        return m

    return [("NaN position", js(position=[np.nan, *Q[1:]])), ("inf velocity", js(velocity=[np.inf, *Q[1:] * 0])),
            ("huge position", js(position=[1e200, *Q[1:]])), ("huge effort", js(effort=[*Q[:5] * 0, 1e9])),
            ("short positions", js(position=list(Q[:3]))), ("long efforts", js(effort=[0.0] * 9)),
            ("other arm", joint_msg([f"fr3_joint{i}" for i in range(1, 7)])),
            ("not a joint state", SimpleNamespace(name=3)),
            ("None", None)]


def _hostile_wrenches() -> list[tuple[str, object]]:
    def wr(frame="tool0"):
        return wrench_msg(np.zeros(6), frame)

    return [("other frame", wr("ft_sensor")), ("no frame", wr("")), ("another TCP", wr("tool0_controller")),
            ("no wrench", SimpleNamespace(header=SimpleNamespace(frame_id="tool0"))),
            ("no header", SimpleNamespace(wrench=wrench_msg(np.zeros(6)).wrench)), ("None", None)]


@pytest.mark.parametrize("topic, stream, cases", [
    (POSE, "pose", _hostile_poses), ("/joint_states", "joints", _hostile_joints), (FT, "wrench", _hostile_wrenches),
])
def test_a_bad_message_on_any_topic_is_dropped_and_counted_and_changes_nothing(topic, stream, cases):
    node = TimedNode()
    robot = make(node)
    settle(node, 0.05)
    before = robot.state()
    sent = len(targets(node))
    for i, (label, msg) in enumerate(cases()):
        node.deliver(topic, msg)  # a crash here (anything but MessageError) fails the test
        node.tick()
        assert robot.dropped[stream] == i + 1, f"{label} was not dropped: {dict(robot.dropped)}"
    assert len(node.dropped) == len(cases()) and all("\n" not in line for line in node.dropped)
    assert robot.fault is None, robot.fault
    after = robot.state()
    for name in ("tcp_pos", "tcp_quat", "tcp_wrench", "q", "dq", "tau"):
        np.testing.assert_array_equal(getattr(after, name), getattr(before, name), err_msg=name)
    for pos, quat in targets(node)[sent:]:
        assert np.all(np.isfinite(pos)) and np.all(np.isfinite(quat))
        np.testing.assert_allclose(pos, HOME)
    robot.close()


def test_fast_alternating_good_and_bad_messages_never_make_a_bad_target():
    """Every stream alternates a good message with a hostile one, faster than the publish timer;
    the wrench alternates its frame too. No crash, no non-finite or out-of-clip target, no fault."""
    node = TimedNode()
    robot = make(node, error_clip_mm=(10.0, 10.0, 10.0))
    settle(node, 0.05)
    robot.command(HOME + np.array([0.05, 0.0, 0.0]), DOWN)
    bad = {POSE: _hostile_poses(), "/joint_states": _hostile_joints(), FT: _hostile_wrenches()}
    sent = len(targets(node))
    drops = 0
    for i in range(60):
        measured = HOME + np.array([0.0005 * i, 0.0, 0.0])
        send_state(node, pos=measured, wrench=[0.0, 0.0, 5.0, 0.0, 0.0, 0.0],
                   wrench_frame="tool0" if i % 2 else "base_link")
        for topic, cases in bad.items():
            node.deliver(topic, cases[i % len(cases)][1])
            drops += 1
        if i % 3 == 0:
            node.tick()
            pos, quat = targets(node)[-1]
            assert np.all(np.isfinite(pos)) and np.all(np.isfinite(quat))
            assert np.abs(pos - measured).max() <= 0.010 + 1e-9
        z = robot.state().tcp_wrench[2]
        assert z == pytest.approx(-5.0 if i % 2 else 5.0)  # tool0 (z down) or base_link, each read right
    assert len(targets(node)) > sent
    assert sum(robot.dropped.values()) == drops and robot.fault is None
    robot.close()


def test_the_controller_core_ends_on_a_force_torque_fault_and_starts_over_after_recover():
    """The controller node's rules (robot_rl.nodes.controller) on this backend: a fault stops the
    state stream (the actor ends the episode as failed), recovery restarts at the measured pose."""
    from robot_rl.nodes.controller import ControllerCore

    node = TimedNode()
    robot = make(node)
    now = [0.0]
    core = ControllerCore(robot, watchdog_s=1.0, recover_every_s=1.0, clock=lambda: now[0])
    send_state(node)
    assert core.poll() is not None
    assert core.on_target(HOME + [0.0, 0.0, -0.005], DOWN) is True
    node.deliver(FT, wrench_msg([0.0, 0.0, -400.0, 0.0, 0.0, 0.0]))
    assert core.poll() is None and core.fault is not None and "saturated" in core.fault
    assert [e["event"] for e in core.pop_events()][-1] == "fault"
    threading.Timer(0.05, send_state, args=(node,)).start()
    now[0] = 2.0
    assert core.poll() is not None and core.fault is None and core.counts["recoveries"] == 1
    robot.close()
