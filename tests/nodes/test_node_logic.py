"""The node graph's logic without ROS: controller rules, the actor's topic backends, the Joy contract."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

from robot_rl.config.input import InterventionConfig
from robot_rl.config.loader import build
from robot_rl.errors import ConfigError, DeviceError, RobotFault
from robot_rl.interfaces import InputCommand, Robot, RobotState
from robot_rl.nodes.camera import TopicCamera, pinhole_k
from robot_rl.nodes.controller import ControllerCore
from robot_rl.nodes.intervention import (
    ACTION_BUTTONS,
    JOY_BUTTONS,
    TopicInput,
    encode,
    operator_to_spacenav,
    raw_device_config,
    spacenav_to_operator,
)
from robot_rl.nodes.robot import TopicRobot, split_gripper
from robot_rl.nodes.task import SimTopicTask, parse_reset_request, split_ground_truth
from robot_rl.nodes.topics import task_state_names
from robot_rl.tasks import load_config

QUAT = np.array([0.0, 1.0, 0.0, 0.0])


def make_state(pos, stamp=0.0) -> RobotState:
    return RobotState(stamp=stamp, tcp_pos=np.asarray(pos, float), tcp_quat=QUAT, tcp_twist=np.zeros(6),
                      tcp_wrench=np.zeros(6), q=np.zeros(7), dq=np.zeros(7), tau=np.zeros(7), gripper=1.0)


class FakeRobot(Robot):
    """Records calls; its measured pose is whatever the test sets."""

    def __init__(self):
        self.pos = np.array([0.5, 0.0, 0.2])
        self.calls: list[tuple] = []
        self.fail_state = False
        self.fail_recover = False

    def state(self):
        if self.fail_state:
            raise RobotFault("reflex")
        return make_state(self.pos)

    def command(self, pos, quat, gripper=None):
        self.calls.append(("command", np.asarray(pos).copy(), gripper))

    def hold(self):
        self.calls.append(("hold", self.pos.copy()))

    def recover(self):
        self.calls.append(("recover",))
        if self.fail_recover:
            raise RobotFault("still faulted")
        self.fail_state = False


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


# --- controller rules ----------------------------------------------------------------------


def test_controller_never_moves_before_it_has_the_pose_then_holds_where_it_is():
    robot, clock = FakeRobot(), Clock()
    core = ControllerCore(robot, watchdog_s=0.1, clock=clock)
    assert not core.on_target(np.array([0.6, 0.0, 0.2]), QUAT)
    assert not core.on_gripper(0.0)
    assert robot.calls == [] and core.counts["ignored_before_state"] == 2
    core.poll()
    assert [c[0] for c in robot.calls] == ["hold"]  # the measured pose becomes the target
    assert core.holding and core.pop_events()[0]["reason"] == "start"
    assert core.on_target(np.array([0.6, 0.0, 0.2]), QUAT)
    assert robot.calls[-1][0] == "command" and not core.holding


def test_watchdog_holds_once_after_watchdog_s_without_targets_and_targets_resume():
    robot, clock = FakeRobot(), Clock()
    core = ControllerCore(robot, watchdog_s=0.1, clock=clock, wall=clock)
    core.poll()
    core.on_target(np.array([0.6, 0.0, 0.2]), QUAT)
    core.pop_events()
    for dt in (0.05, 0.1):  # at exactly watchdog_s: not yet
        clock.t = 100.0 + dt
        core.poll()
    assert not core.holding and robot.calls[-1][0] == "command"
    clock.t = 100.11
    robot.pos = np.array([0.55, 0.0, 0.2])
    core.poll()
    assert core.holding and robot.calls[-1][0] == "hold" and core.counts["watchdog_holds"] == 1
    hold = core.pop_events()[0]
    assert hold["reason"] == "watchdog" and hold["stamp"] == pytest.approx(100.11)
    assert hold["last_target_wall"] == pytest.approx(100.0) and hold["tcp_pos"] == [0.55, 0.0, 0.2]
    clock.t = 101.0
    core.poll()
    assert core.counts["watchdog_holds"] == 1  # once per silence, not every tick
    # a gripper command while holding keeps the hold pose
    core.on_gripper(0.0)
    assert np.allclose(robot.calls[-1][1], [0.55, 0.0, 0.2]) and robot.calls[-1][2] == 0.0
    core.on_target(np.array([0.62, 0.0, 0.2]), QUAT)
    assert not core.holding and np.allclose(robot.calls[-1][1], [0.62, 0.0, 0.2])


def test_a_fault_stops_the_state_and_recovery_restarts_at_the_measured_pose():
    robot, clock = FakeRobot(), Clock()
    core = ControllerCore(robot, watchdog_s=0.1, recover_every_s=1.0, clock=clock)
    core.poll()
    robot.fail_state, robot.fail_recover = True, True
    assert core.poll() is None and core.fault == "reflex"
    assert not core.on_target(np.array([0.6, 0.0, 0.2]), QUAT)
    clock.t += 1.5
    assert core.poll() is None  # recovery tried and failed
    robot.fail_recover = False
    clock.t += 0.5
    assert core.poll() is None  # not yet time to try again
    clock.t += 1.0
    assert core.poll() is not None and core.fault is None
    assert [c[0] for c in robot.calls].count("recover") == 2 and robot.calls[-1][0] == "hold"


class PostureRobot(FakeRobot):
    """A FakeRobot with a null-space posture, validated as the Robot contract says."""

    def set_posture(self, q, stiffness=None):
        if q is not None and (np.shape(q) != (7,) or not np.all(np.isfinite(q))):
            raise ValueError("a posture needs 7 finite joint angles")
        self.calls.append(("posture", None if q is None else np.asarray(q).copy(), stiffness))


def test_postures_reach_the_robot_and_the_watchdog_restores_the_configured_one():
    robot, clock = PostureRobot(), Clock()
    core = ControllerCore(robot, watchdog_s=0.1, clock=clock, wall=clock)
    assert not core.on_posture(np.full(7, 0.1), 40.0)  # no pose yet: ignored like a target
    core.poll()
    core.on_target(np.array([0.6, 0.0, 0.2]), QUAT)
    assert core.on_posture(np.full(7, 0.1), 40.0) and core.posture_active
    assert robot.calls[-1][0] == "posture" and robot.calls[-1][2] == 40.0
    assert not core.on_posture(np.array([0.1, np.nan, 0, 0, 0, 0, 0]), 40.0)  # malformed: rejected, counted
    assert core.counts["rejected_postures"] == 1 and core.posture_active
    clock.t += 0.2  # the actor went silent mid joint reset
    core.poll()
    assert [c[0] for c in robot.calls[-2:]] == ["hold", "posture"] and robot.calls[-1][1] is None
    assert not core.posture_active and core.status()["posture_active"] is False
    calls = len(robot.calls)
    clock.t += 0.2
    core.poll()
    assert len(robot.calls) == calls  # restored once, not every tick
    assert core.on_posture(None) and robot.calls[-1] == ("posture", None, None)


def test_a_robot_without_a_posture_is_counted_not_fatal():
    robot, clock = FakeRobot(), Clock()  # Robot.set_posture's default: NotImplementedError
    core = ControllerCore(robot, watchdog_s=0.1, clock=clock)
    core.poll()
    assert not core.on_posture(np.zeros(7), 40.0) and not core.on_posture(np.zeros(7), 40.0)
    assert core.counts["rejected_postures"] == 2 and not core.posture_active and core.fault is None


# --- the actor's robot over topics ----------------------------------------------------------


def topic_robot(**kw):
    sent = []
    robot = TopicRobot(lambda p, q: sent.append(("target", p.copy())), lambda g: sent.append(("gripper", g)),
                       state_timeout_s=kw.pop("state_timeout_s", 0.5), wait_timeout_s=kw.pop("wait_timeout_s", 1.0),
                       **kw)
    return robot, sent


def feed(robot, pos=(0.5, 0.0, 0.2), stamp=None):
    robot.on_pose(np.array(pos), QUAT, time.time() if stamp is None else stamp)
    robot.on_twist(np.zeros(6))
    robot.on_wrench(np.zeros(6))
    robot.on_joints([f"j{i}" for i in range(7)] + ["gripper"], np.r_[np.arange(7.0), 0.25], np.zeros(8), np.zeros(8))


def test_topic_robot_sends_nothing_before_the_pose_and_reports_stale_state():
    robot, sent = topic_robot(state_timeout_s=0.2)
    with pytest.raises(RobotFault, match="before the robot's pose is known"):
        robot.command(np.zeros(3), QUAT)
    with pytest.raises(RobotFault, match="no robot state yet"):
        robot.state()
    robot.resend()
    assert sent == []
    feed(robot)
    state = robot.state()
    assert state.gripper == 0.25 and state.q.tolist() == list(range(7))
    time.sleep(0.25)
    with pytest.raises(RobotFault, match="old"):
        robot.state()


def test_topic_robot_resends_the_latest_target_and_hold_targets_the_measured_pose():
    robot, sent = topic_robot()
    feed(robot, pos=(0.5, 0.1, 0.2))
    robot.state()
    robot.command(np.array([0.51, 0.1, 0.2]), QUAT, gripper=0.0)
    assert [s[0] for s in sent] == ["target", "gripper"] and robot.latency.summary()["n"] == 1
    robot.resend()
    assert np.allclose(sent[-2][1], [0.51, 0.1, 0.2]) and sent[-1] == ("gripper", 0.0)
    robot.hold()
    assert np.allclose(sent[-2][1], [0.5, 0.1, 0.2])
    robot.close()
    n = len(sent)
    robot.resend()
    assert len(sent) == n  # closed: the controller's watchdog takes over


def test_split_gripper_needs_the_gripper_entry():
    with pytest.raises(ValueError, match="gripper"):
        split_gripper(["a", "b"], np.zeros(2), np.zeros(2), np.zeros(2))


def test_topic_camera_checks_size_and_staleness():
    cam = TopicCamera("front", "/camera/front/color/image_raw", 8, 6, timeout_s=0.2, wait_timeout_s=0.2)
    with pytest.raises(DeviceError, match="no image on /camera/front"):
        cam.read()
    with pytest.raises(ValueError, match="4x6"):
        cam.on_image(np.zeros((6, 4, 3), np.uint8), 1.0)
    image = np.full((6, 8, 3), 7, np.uint8)
    cam.on_image(image, 1.5)
    frame = cam.read()
    assert frame.stamp == 1.5 and frame.image.tolist() == image.tolist() and frame.image is not image
    time.sleep(0.25)
    with pytest.raises(DeviceError, match="old"):
        cam.read()


def test_pinhole_intrinsics_from_a_vertical_field_of_view():
    k = pinhole_k(90.0, 128, 64)
    assert k[1, 1] == pytest.approx(32.0) and k[0, 0] == k[1, 1] and k[0, 2] == 64 and k[1, 2] == 32


# --- the sim reset handshake -----------------------------------------------------------------


def test_sim_reset_waits_for_its_answer_and_for_state_after_it():
    robot, _ = topic_robot(wait_timeout_s=2.0)
    feed(robot, stamp=10.0)  # state of the previous episode
    requests = []
    task = SimTopicTask(2, robot, requests.append, actor_id="a", reset_timeout_s=5.0)
    task.on_ground_truth(task_state_names(2), np.array([1.0, 2.0, 1.0]), 10.0)  # old episode: success

    def sim_side():
        while not requests:
            time.sleep(0.01)
        request = parse_reset_request(requests[0])
        task.on_reset_done(json.dumps({"id": "someone-else:1", "stamp": 20.0}))
        time.sleep(0.05)
        task.on_reset_done(json.dumps({"id": request["id"], "seed": request["seed"], "stamp": 20.0,
                                       "gripper": 0.5}))
        time.sleep(0.05)
        task.on_ground_truth(task_state_names(2), np.array([3.0, 4.0, 1.0]), 19.9)  # sent before the reset
        time.sleep(0.05)
        task.on_ground_truth(task_state_names(2), np.array([5.0, 6.0, 0.0]), 20.01)
        feed(robot, stamp=20.01)

    thread = threading.Thread(target=sim_side)
    thread.start()
    task.reset(np.random.default_rng(0))
    thread.join()
    assert task.task_state().tolist() == [5.0, 6.0] and not task.success() and task.start_gripper() == 0.5
    assert robot.state().stamp == 20.01 and len(requests) == 1


def test_sim_reset_without_a_sim_is_one_clear_error():
    robot, _ = topic_robot()
    requests = []
    task = SimTopicTask(2, robot, requests.append, actor_id="a", reset_timeout_s=1.2, reset_topic="/sim/reset")
    with pytest.raises(DeviceError, match="did not answer reset request a:1 on /sim/reset"):
        task.reset(np.random.default_rng(0))
    assert len(requests) == 2  # re-sent once a second


@pytest.mark.parametrize("text", ['{"id": "x"}', '{"seed": 1}', "not json", '{"id": "x", "seed": -1}',
                                  '{"id": "x", "seed": true}'])
def test_malformed_reset_requests_are_value_errors(text):
    with pytest.raises(ValueError):
        parse_reset_request(text)


def test_ground_truth_layout_must_match_the_task():
    state, success = split_ground_truth(task_state_names(2), np.array([1.0, 2.0, 1.0]), 2)
    assert state.tolist() == [1.0, 2.0] and success
    with pytest.raises(ValueError, match="same task"):
        split_ground_truth(task_state_names(3), np.zeros(4), 2)


# --- the Joy contract --------------------------------------------------------------------------


def intervention(**kw) -> InterventionConfig:
    return build(InterventionConfig, kw, file="test.yaml", where="intervention")


def test_spacenav_frame_is_a_quarter_turn_of_the_operator_frame():
    push_forward = np.array([0.0, 1.0, 0.0, 0.0, 0.0, 0.0])  # operator y is forward
    assert operator_to_spacenav(push_forward).tolist()[:3] == [1.0, 0.0, 0.0]  # spacenav x is forward
    push_right = np.array([1.0, 0, 0, 0, 0, 0])
    assert operator_to_spacenav(push_right).tolist()[:3] == [0.0, -1.0, 0.0]  # spacenav y is left
    t = np.arange(1.0, 7.0)
    assert np.allclose(spacenav_to_operator(operator_to_spacenav(t)), t)


def test_raw_device_config_removes_every_interpretation():
    cfg = intervention(device="spacemouse+keyboard", axis_map=["y", "-x", "z"], intervene_mode="toggle",
                       spacemouse={"deadband": 0.2, "buttons": {"close_gripper": 0, "success": 1}})
    raw = raw_device_config(cfg)
    assert raw.axis_map == ("x", "y", "z") and raw.intervene_mode == "hold"
    assert raw.spacemouse.deadband == 0.0 and raw.spacemouse.buttons == {}
    assert not raw.spacemouse.intervene_on_motion and not raw.keyboard.intervene_on_motion
    assert raw.device == cfg.device and raw.spacemouse.full_scale == cfg.spacemouse.full_scale


def spacenav_messages(events):
    """What spacenav_node sends (joystick_drivers' spacenav.cpp): a button event is a list
    ending at that button with zeros before it; motion comes with an empty button list."""
    out = []
    for kind, value in events:
        if kind == "button":
            number, press = value
            out.append(("joy", tuple([0] * number + [press])))
        else:
            out.append(("twist", np.asarray(value, float)))
            out.append(("joy", ()))
    return out


def ours(commands):
    """What robot_rl's intervention node sends for a sequence of raw device commands."""
    out = []
    for cmd in commands:
        twist, buttons = encode(cmd)
        out.append(("twist", twist))
        out.append(("joy", tuple(buttons)))
    return out


def replay(device: TopicInput, messages):
    for kind, value in messages:
        (device.on_twist if kind == "twist" else device.on_joy)(value)
    return device.read()


def same(a: InputCommand, b: InputCommand) -> None:
    assert np.allclose(a.twist, b.twist)
    for f in ("intervene", "gripper_toggle_pressed", "close_gripper", "success_pressed", "failure_pressed",
              "pause_pressed", "stop_pressed"):
        assert getattr(a, f) == getattr(b, f), f


def test_the_actor_reads_spacenav_node_and_our_node_the_same_way():
    cfg = intervention(device="spacemouse", intervene_mode="toggle", axis_map=["-y", "x", "z"],
                       spacemouse={"deadband": 0.1, "buttons": {"close_gripper": 0, "intervene": 1}})
    push = np.array([0.5, 0.0, 0.0, 0.0, 0.0, 0.0])  # operator: to the right, half way
    # The human: pushes the puck right, taps button 1 (intervene, toggled on), holds button 0 (close).
    theirs = spacenav_messages([("motion", operator_to_spacenav(push)), ("button", (1, 1)), ("button", (1, 0)),
                                ("button", (0, 1))])
    mine = ours([InputCommand(twist=push, buttons=(0, 0)), InputCommand(twist=push, buttons=(0, 1)),
                 InputCommand(twist=push, buttons=(0, 0)), InputCommand(twist=push, buttons=(1, 0))])
    a = replay(TopicInput(cfg, timeout_s=1.0), theirs)
    b = replay(TopicInput(cfg, timeout_s=1.0), mine)
    same(a, b)
    assert a.intervene and a.close_gripper is True
    # axis map ["-y", "x", "z"]: robot y is operator x (right), after the 0.1 deadband: (0.5-0.1)/0.9
    assert np.allclose(a.twist, [0.0, (0.5 - 0.1) / 0.9, 0.0, 0.0, 0.0, 0.0])


def test_keyboard_actions_travel_on_the_action_buttons_and_taps_are_not_lost():
    cfg = intervention(device="keyboard", intervene_mode="toggle")
    device = TopicInput(cfg, timeout_s=1.0)
    tap = InputCommand(success_pressed=True, intervene=True)  # a raw (hold-mode) read: intervene key down
    for kind, value in ours([tap, InputCommand(), InputCommand()]):
        (device.on_twist if kind == "twist" else device.on_joy)(value)
    cmd = device.read()  # one read after the tap and the release: the press still counts
    assert cmd.success_pressed and cmd.intervene  # toggled on by the press
    cmd = device.read()
    assert not cmd.success_pressed and cmd.intervene  # still toggled on, the press consumed
    twist, buttons = encode(InputCommand(stop_pressed=True, close_gripper=False))
    assert len(buttons) == JOY_BUTTONS and buttons[ACTION_BUTTONS["stop"]] == 1
    assert buttons[ACTION_BUTTONS["open_gripper"]] == 1 and buttons[ACTION_BUTTONS["close_gripper"]] == 0


def test_a_stale_twist_reads_as_zero():
    device = TopicInput(intervention(device="spacemouse"), timeout_s=0.1)
    device.on_twist(np.array([1.0, 0, 0, 0, 0, 0]))
    assert np.any(device.read().twist != 0)
    time.sleep(0.15)
    cmd = device.read()
    assert not np.any(cmd.twist) and not cmd.intervene


# --- config -------------------------------------------------------------------------------------


def test_ros_section_defaults_and_watchdog_check():
    cfg = load_config("configs/pick_cube.yaml")
    assert cfg.ros.watchdog_s == 0.1 and cfg.ros.state_hz >= 100 and cfg.ros.target_hz == 50
    with pytest.raises(ConfigError, match="two target periods"):
        load_config("configs/pick_cube.yaml", ["ros.watchdog_s=0.05", "ros.target_hz=20"])
    with pytest.raises(ConfigError, match="ros.policy"):
        load_config("configs/pick_cube.yaml", ["ros.policy=teleop"])
