"""Rigs for the contract tests: every backend of ``Robot``, ``Camera`` and ``InputDevice``,
built the way its own tests build it, behind one small harness per interface.

A rig holds the backend under test and the few things a contract check needs to see
around it that the interface itself does not show: how to let the controller run
(``settle``), the target the controller pulls toward (``goal``), what counts as "the
posture / gripper channel changed", how to make the device go away. Each rig says
which of those it can show; a rule a backend cannot be asked about is skipped by the
test with the reason, never passed silently.

Used by tests/contracts (whose conftest.py holds the fixtures). The fakes are the
existing ones: the MuJoCo world (``build_world``), the actor's topic parts fed by
:class:`actor_harness.LoopbackSim`, ``fake_pylibfranka``, and the fakes the driver tests
use, from tests/support as well: ``fake_ros_node`` (the recording ROS node), ``fake_hid``
(the ``hid`` module), ``fake_pynput`` (the pynput-shaped listener) and ``fake_realsense``
(the pyrealsense2 software device).

Tests pick backends with :func:`over`, which turns backend ids into ``pytest.param`` s
for indirect parametrisation and attaches a per-case ``skip`` (rule not applicable,
with the reason) or ``xfail(strict=True)`` (a known contract breach, with the reason).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pytest
from fake_hid import UNPLUG, FakeHid
from fake_pynput import FakeListener, listener_factory, pynput_key
from fake_ros_node import RecordingNode

from robot_rl.control.transforms import mat_to_quat, rpy_to_quat
from robot_rl.tasks import load_config, make_task

PICK = "configs/pick_cube.yaml"
SUPPORT = Path(__file__).resolve().parents[1] / "support"

#: The contract rigs of each registered backend (a backend may have several: the Franka's two
#: modes, the sim's two arms). ROBOTS and CAMERAS list them in registry order, so every backend
#: of the registries runs the contracts; a registered backend without a rig here gets an id
#: whose rig refuses to build, and its contract tests fail until it has one.
ROBOT_RIGS = {"sim": ("sim", "sim_ur5e"), "topics": ("topic",), "franka": ("franka_torque", "franka_ros2"),
              "ur": ("ur_rtde",), "ros2_control": ("ros2_control_fzi",)}
CAMERA_RIGS = {"sim": ("sim",), "topic": ("topic",), "realsense": ("realsense",), "opencv": ("opencv",)}


def _registered_rigs() -> tuple[tuple[str, ...], tuple[str, ...]]:
    from robot_rl_drivers.cameras import camera_specs
    from robot_rl_drivers.robots import robot_specs

    robots = tuple(rig for spec in robot_specs() for rig in ROBOT_RIGS.get(spec.name, (f"{spec.name}:no-rig",)))
    cameras = tuple(rig for spec in camera_specs() for rig in CAMERA_RIGS.get(spec.name, (f"{spec.name}:no-rig",)))
    return robots, cameras


ROBOTS, CAMERAS = _registered_rigs()
INPUTS = ("spacemouse", "keyboard", "gamepad", "topic", "simulated")


def over(backends: tuple[str, ...], *, skip: Optional[dict[str, str]] = None,
         xfail: Optional[dict[str, str]] = None) -> list:
    """``backends`` as params for an indirect rig fixture, with per-backend skip/xfail marks."""
    skip, xfail = skip or {}, xfail or {}
    params = []
    for b in backends:
        marks = []
        if b in skip:
            marks.append(pytest.mark.skip(reason=f"{b}: {skip[b]}"))
        if b in xfail:
            marks.append(pytest.mark.xfail(strict=True, reason=f"{b}: {xfail[b]}"))
        params.append(pytest.param(b, id=b, marks=marks))
    return params


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


# =====================================================================================
# Robot rigs
# =====================================================================================


class RobotRig:
    """One Robot backend and what a contract check needs to see around it.

    * ``start``: the (pos, quat) the backend measured when it started;
    * ``physical``: whether the measured pose follows the controller (a simulated arm),
      so "the arm did not move" can be checked on the measured pose itself;
    * ``settle(s)``: let the controller loop run for ``s`` seconds (its own clock);
    * ``goal()``: the pose the controller is pulling toward now, as far as the backend
      shows it (the controller's goal, the loop's target, the published target);
    * ``rejected_targets()`` / ``rejected_postures()``: the backend's rejection counters;
    * ``posture_marker()`` / ``gripper_marker()``: values that change when a posture /
      gripper command is applied;
    * ``stop_itself()`` / ``allow_recovery()``: make the arm stop on its own (fault) and
      make a recovery possible again (the tests skip backends that cannot fault);
    * ``hold_tol``: how far the arm can get between a measurement and the hold that
      follows it (it moves on its own in the fake Franka);
    * ``dof``: the arm's joints (the length of ``q``, ``dq``, ``tau``);
    * ``has_posture``: whether the backend takes a null-space posture (one without must
      raise NotImplementedError from ``set_posture`` and keep holding).
    """

    name = "?"
    physical = False
    hold_tol = 0.003  # m: a hold pose vs the pose measured just before the hold was asked for
    dof = 7
    has_posture = True
    start: tuple[np.ndarray, np.ndarray]
    robot: Any

    def settle(self, seconds: float) -> None:
        raise NotImplementedError

    def goal(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def measured(self) -> tuple[np.ndarray, np.ndarray]:
        s = self.robot.state()
        return s.tcp_pos.copy(), s.tcp_quat.copy()

    def rejected_targets(self) -> int:
        raise NotImplementedError

    def rejected_postures(self) -> int:
        raise NotImplementedError

    def posture_marker(self) -> Any:
        raise NotImplementedError

    def gripper_marker(self) -> Any:
        raise NotImplementedError

    def stop_itself(self) -> None:
        raise NotImplementedError

    def allow_recovery(self) -> None:
        pass

    def teardown(self) -> None:
        self.robot.close()


class SimRobotRig(RobotRig):
    """The MuJoCo arm (``build_world``, as tests/sim and tests/envs build it)."""

    name = "sim"
    physical = True

    def __init__(self, overrides: tuple[str, ...] = ()) -> None:
        from robot_rl.sim import build_world

        # A long watchdog, so a hold seen in a test is the one the rule asks for.
        cfg = load_config(PICK, ["robot.controller.watchdog_s=2.0", *overrides])
        self.world = build_world(make_task(cfg), [])
        self.world.task.reset(np.random.default_rng(0))
        self.robot = self.world.robot
        self.controller = self.robot.controller
        s = self.robot.state()
        self.start = (s.tcp_pos.copy(), s.tcp_quat.copy())

    def settle(self, seconds: float) -> None:
        self.world.sleep_until(self.world.now() + seconds)

    def goal(self):
        return self.controller.goal_pos.copy(), self.controller.goal_quat.copy()

    def rejected_targets(self) -> int:
        return self.controller.stats.rejected_targets

    def rejected_postures(self) -> int:
        return self.controller.stats.rejected_postures

    def posture_marker(self):
        ps = self.controller.posture_slew
        return (tuple(np.round(ps.goal_q, 12)), float(ps.goal_stiffness), self.controller.posture_override)

    def gripper_marker(self):
        return float(self.robot.gripper_target)


class SimUR5eRig(SimRobotRig):
    """The 6-DoF MuJoCo UR5e (``sim.arm: ur5e``): position servos, the admittance law, no posture.

    It stops itself the way a UR's admittance loop does: a huge force on the hand
    saturates the wrist force-torque sensor, the law holds with a fault, and
    ``recover()`` succeeds once the force is gone.
    """

    name = "sim_ur5e"
    dof = 6
    has_posture = False
    HUGE_N = 1000.0  # on the hand, beyond robot.admittance.force_limit

    def __init__(self) -> None:
        super().__init__(("sim.arm=ur5e", "robot.admittance.watchdog_s=2.0"))

    def rejected_postures(self) -> int:
        return 0  # no posture channel: set_posture raises NotImplementedError

    def posture_marker(self):
        return None

    def stop_itself(self) -> None:
        self.world.data.xfrc_applied[self.world.model.body("hand").id, :3] = [0.0, 0.0, -self.HUGE_N]
        self.settle(0.02)

    def allow_recovery(self) -> None:
        self.world.data.xfrc_applied[:] = 0.0
        self.settle(0.02)


class TopicRobotRig(RobotRig):
    """``TopicRobot`` (the actor's arm over topics) fed by the sim node's core on a thread
    (``actor_harness.LoopbackSim``, as tests/nodes/test_actor.py wires it)."""

    name = "topic"
    physical = True
    STATE_TIMEOUT_S = 1.0

    def __init__(self) -> None:
        from actor_harness import LoopbackSim

        cfg = load_config(PICK, [f"ros.state_timeout_s={self.STATE_TIMEOUT_S}"])
        self.loop = LoopbackSim(cfg)
        self.robot = self.loop.parts.robot
        s = self.robot.wait_for_state(timeout=30.0)
        self.start = (s.tcp_pos.copy(), s.tcp_quat.copy())

    @property
    def _sim_robot(self):
        return self.loop.sim.world.robot

    def settle(self, seconds: float) -> None:
        time.sleep(seconds)  # the sim runs in real time on its thread

    def goal(self):
        with self.loop.lock:
            c = self._sim_robot.controller
            return c.goal_pos.copy(), c.goal_quat.copy()

    def rejected_targets(self) -> int:
        return self.robot.rejected_commands

    def rejected_postures(self) -> int:
        return self.robot.rejected_commands

    def posture_marker(self):
        with self.loop.lock:
            ps = self._sim_robot.controller.posture_slew
            return (self.loop.sim.controller.counts["postures"], tuple(np.round(ps.goal_q, 12)))

    def gripper_marker(self):
        with self.loop.lock:
            return float(self._sim_robot.gripper_target)

    def stop_itself(self) -> None:
        """The sim node stops publishing (its controller is gone): the state goes stale."""
        self.loop.stop.set()
        self.loop.thread.join()
        time.sleep(self.STATE_TIMEOUT_S + 0.2)

    def allow_recovery(self) -> None:
        self.loop.stop.clear()
        self.loop.thread = threading.Thread(target=self.loop._run, daemon=True)
        self.loop.thread.start()

    def teardown(self) -> None:
        self.robot.close()
        self.loop.close()


class FrankaTorqueRig(RobotRig):
    """``FrankaTorqueRobot`` over ``fake_pylibfranka`` (as tests/drivers/robots/test_franka_torque.py).

    The fake arm follows its own joint trajectory whatever it is sent, so "did not move"
    is checked on the loop's target (the state block's ``target_pos``), not on the pose.
    Its trajectory starts at ``fake_pylibfranka.Q0`` in every torque session.
    """

    name = "franka_torque"
    # The fake arm moves on at up to 66 mm/s, and the loop process may wait for a CPU on a
    # shared machine; a lost hold would leave the target at the far goal, 30 mm away.
    hold_tol = 0.010

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faulting: bool = False) -> None:
        import fake_pylibfranka as fakelib

        from robot_rl.config.loader import build
        from robot_rl.config.sections import ControllerConfig, RobotConfig, WorkspaceConfig
        from robot_rl_drivers.robots.franka.settings import FrankaHardwareConfig
        from robot_rl_drivers.robots.franka.torque import FrankaTorqueRobot

        monkeypatch.syspath_prepend(str(SUPPORT))  # the spawned loop process imports the fake by name
        scenario = {"log": str(tmp_path / "session")}
        if faulting:
            scenario["fault_at"] = 150  # a reflex 150 robot cycles into the first session
        scenario_file = tmp_path / "scenario.json"
        scenario_file.write_text(json.dumps(scenario))
        monkeypatch.setenv(fakelib.SCENARIO_ENV, str(scenario_file))
        cfg = RobotConfig(backend="franka", reset_pos=(0.35, 0.0, 0.45), reset_rpy=(np.pi, 0.0, 0.0),
                          workspace=WorkspaceConfig(pos_low=(0.2, -0.2, 0.3), pos_high=(0.6, 0.2, 0.6)),
                          controller=ControllerConfig(watchdog_s=2.0))
        hw = build(FrankaHardwareConfig, {"ip": "172.16.0.2", "connect_timeout_s": 60.0,
                                          "loop": {"realtime": "ignore", "rt_priority": 0}},
                   file="contracts.yaml", where="robot.hardware")
        self.robot = FrankaTorqueRobot(cfg, hw, lib="fake_pylibfranka")
        pose, _ = fakelib.forward_kinematics(fakelib.Q0)
        self.start = (pose[:3, 3].copy(), mat_to_quat(pose[:3, :3]))
        self.gripper_calls: list[float] = []
        if self.robot.gripper is not None:  # count what reaches the hand
            command = self.robot.gripper.command
            self.robot.gripper.command = lambda f: (self.gripper_calls.append(f), command(f))[1]

    def _state_block(self):
        from robot_rl_drivers.robots.franka.loop import STATE

        values, _ = self.robot._ch.state.read()
        return values, STATE

    def settle(self, seconds: float) -> None:
        time.sleep(seconds)

    def goal(self):
        v, layout = self._state_block()
        return v[layout["target_pos"]].copy(), v[layout["target_quat"]].copy()

    def rejected_targets(self) -> int:
        return self.robot.rejected_targets

    def rejected_postures(self) -> int:
        return self.robot.rejected_postures

    def posture_marker(self):
        return self.robot._ch.posture.seq  # every write to the loop's posture block

    def gripper_marker(self):
        return len(self.gripper_calls)

    def stop_itself(self) -> None:
        wait_until(lambda: self.robot.fault is not None, 10.0, "the fake arm's reflex")


class FrankaRos2Rig(RobotRig):
    """``FrankaRos2ControlRobot`` on a recording node (as tests/drivers/robots/test_franka_ros2.py).

    The "arm" is the state this rig publishes: it stays at HOME, so the measured pose is
    fixed and what the backend does shows in the targets it publishes (``goal``).
    """

    name = "franka_ros2"
    HOME = np.array([0.45, 0.0, 0.30])
    DOWN = rpy_to_quat(np.array([np.pi, 0.0, 0.0]))
    JOINTS = [f"fr3_joint{i}" for i in range(1, 8)]
    STATE_TIMEOUT_S = 0.3

    def __init__(self) -> None:
        from robot_rl.config.loader import build
        from robot_rl.config.sections import ControllerConfig, RobotConfig, WorkspaceConfig
        from robot_rl_drivers.robots.franka.ros2 import FrankaRos2ControlRobot
        from robot_rl_drivers.robots.franka.settings import FrankaHardwareConfig

        self.node = RecordingNode()
        self.live = True
        cfg = RobotConfig(backend="franka", reset_pos=tuple(self.HOME), workspace=WorkspaceConfig(
            pos_low=(0.3, -0.2, 0.1), pos_high=(0.6, 0.2, 0.5)), controller=ControllerConfig(watchdog_s=2.0),
            hardware={"ip": "172.16.0.2", "mode": "ros2_control", "gripper": {"enabled": False},
                      "ros2_control": {"wrench_topic": "/wrench", "state_timeout_s": self.STATE_TIMEOUT_S}})
        hw = build(FrankaHardwareConfig, cfg.hardware, file="contracts.yaml", where="robot.hardware")
        self.robot = FrankaRos2ControlRobot(cfg, hw, self.node, run=self._run_recovery)
        self.publish_hz = hw.ros2_control.publish_hz
        self.send_state()
        self.start = (self.HOME.copy(), self.DOWN.copy())

    def send_state(self) -> None:
        from robot_rl.ros import convert

        t = time.time()
        self.node.deliver("/current_pose", convert.pose_stamped_msg(self.HOME, self.DOWN, t, "base"))
        q = np.linspace(0.1, 0.7, 7)
        self.node.deliver("/joint_states", convert.joint_state_msg(self.JOINTS, q, q * 0.0, q * 2.0, t))

    def _run_recovery(self, cmd, **kw):
        if self.live:  # the controller comes back: states flow again while recover() waits
            threading.Timer(0.05, self.send_state).start()
        return subprocess.CompletedProcess(cmd, 0, "Goal accepted", "")

    def settle(self, seconds: float) -> None:
        for _ in range(max(1, int(seconds * self.publish_hz))):
            if self.live:
                self.send_state()
            self.node.tick()

    def goal(self):
        from robot_rl.ros import convert

        sent = self.node.published.get("/target_pose", [])
        assert sent, "the backend published no target"
        return convert.pose_from_msg(sent[-1])

    def rejected_targets(self) -> int:
        return self.robot.rejected_targets

    def rejected_postures(self) -> int:
        return self.robot.rejected_postures

    def posture_marker(self):
        return len(self.node.published.get("/target_joint", []))

    def gripper_marker(self):
        return None  # no hand on this rig: a gripper value can only be checked, never applied

    def stop_itself(self) -> None:
        self.live = False
        time.sleep(self.STATE_TIMEOUT_S + 0.1)

    def allow_recovery(self) -> None:
        self.live = True



def make_robot_rig(backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *,
                   faulting: bool = False) -> RobotRig:
    if backend == "sim":
        return SimRobotRig()
    if backend == "sim_ur5e":
        return SimUR5eRig()
    if backend == "topic":
        return TopicRobotRig()
    if backend == "franka_torque":
        return FrankaTorqueRig(tmp_path, monkeypatch, faulting=faulting)
    if backend == "franka_ros2":
        return FrankaRos2Rig()
    if backend == "ur_rtde":
        from ur_rig import URRig  # tests/support/ur_rig.py

        return URRig(tmp_path, monkeypatch, faulting=faulting)
    if backend == "ros2_control_fzi":
        from ros2_control_rig import FziRos2ControlRig  # tests/support/ros2_control_rig.py

        return FziRos2ControlRig()
    raise ValueError(f"no contract rig for robot backend {backend!r}: add one to tests/support/contract_rigs.py "
                     "(ROBOT_RIGS and make_robot_rig)")



# =====================================================================================
# Camera rigs
# =====================================================================================

# Every camera rig is configured non-square, so a transposed (W, H) shows.
CAM_W, CAM_H = 64, 48


class CameraRig:
    """One Camera backend.

    * ``width`` / ``height``: the configured size;
    * ``advance()``: let a new frame come (a physics step, a published image, or time);
    * ``streams``: whether a later read brings a strictly newer frame (False for a video
      file, which the grabber has read to its end almost at once);
    * ``check_colours(frame)``: assert the frame's RGB content is what the source sent,
      or None where no reference exists;
    * ``go_away()``: the device stops delivering (None where it cannot).
    """

    name = "?"
    streams = True
    camera: Any
    width = CAM_W
    height = CAM_H
    check_colours: Optional[Callable[[Any], None]] = None
    go_away: Optional[Callable[[], None]] = None

    def advance(self) -> None:
        raise NotImplementedError

    def teardown(self) -> None:
        self.camera.close()


class SimCameraRig(CameraRig):
    name = "sim"

    def __init__(self, quick_timeout: bool = False) -> None:
        from robot_rl.sim import build_world

        cfg = load_config(PICK, [f"cameras.front.width={self.width}", f"cameras.front.height={self.height}"])
        self.world = build_world(make_task(cfg), ["front"])
        self.world.task.reset(np.random.default_rng(0))
        self.camera = self.world.cameras["front"]

    def advance(self) -> None:
        self.world.sleep_until(self.world.now() + 0.02)

    def teardown(self) -> None:
        self.camera.close()
        self.world.close()


class TopicCameraRig(CameraRig):
    """``TopicCamera`` fed through ``on_image`` as the actor node's subscription feeds it."""

    name = "topic"

    def __init__(self, quick_timeout: bool = False) -> None:
        from robot_rl.nodes.camera import TopicCamera

        self.timeout_s = 0.2 if quick_timeout else 5.0
        self.camera = TopicCamera("front", "/camera/front/image", self.width, self.height,
                                  timeout_s=self.timeout_s, wait_timeout_s=2.0)
        self.rng = np.random.default_rng(0)
        self.sent: list[tuple[np.ndarray, float]] = []
        self.advance()
        self.check_colours = self._check_colours
        self.go_away = self._go_away

    def advance(self) -> None:
        image = self.rng.integers(0, 256, (self.height, self.width, 3), dtype=np.uint8)
        stamp = time.time()
        self.sent.append((image, stamp))
        self.camera.on_image(image, stamp)

    def _check_colours(self, frame) -> None:
        image, stamp = self.sent[-1]
        np.testing.assert_array_equal(frame.image, image)
        assert frame.stamp == stamp

    def _go_away(self) -> None:
        time.sleep(self.timeout_s + 0.15)  # the camera node stops publishing


class RealSenseCameraRig(CameraRig):
    """``RealSenseCamera`` on a pyrealsense2 software device (the library boundary)."""

    name = "realsense"

    def __init__(self, quick_timeout: bool = False) -> None:
        pytest.importorskip("pyrealsense2", reason="pyrealsense2 (and apt libusb-1.0-0) not installed")
        from fake_realsense import SERIAL, SyntheticRealSense

        from robot_rl.config.sections import CameraConfig
        from robot_rl_drivers.cameras.realsense.camera import RealSenseCamera
        from robot_rl_drivers.cameras.realsense.settings import RealSenseSettings

        self.timeout_s = 0.2 if quick_timeout else 2.0
        self.dev = SyntheticRealSense(self.width, self.height)
        cfg = CameraConfig(backend="realsense", width=self.width, height=self.height, fps=self.dev.fps)
        self.camera = RealSenseCamera("front", cfg, RealSenseSettings(serial=SERIAL, frame_timeout_s=self.timeout_s),
                                      devices=lambda: [self.dev.device])
        self.dev.start()  # after the camera started its sensor, as the original test does
        self.check_colours = self._check_colours
        self.go_away = self._go_away

    def advance(self) -> None:
        time.sleep(0.1)  # three frames at 30 fps

    def _check_colours(self, frame) -> None:
        n = int(frame.image[0, 0, 0])
        expected = np.array([n % 256, (2 * n) % 256, (3 * n) % 256], np.uint8)
        assert np.all(frame.image == expected), f"frame is not RGB (n, 2n, 3n) for n={n}: {frame.image[0, 0]}"

    def _go_away(self) -> None:
        self.dev.stop()
        time.sleep(self.timeout_s + 0.2)

    def teardown(self) -> None:
        self.camera.close()
        self.dev.stop()


class OpenCVCameraRig(CameraRig):
    """``OpenCVCamera`` reading a video file written with cv2.VideoWriter (as test_opencv.py)."""

    name = "opencv"
    streams = False
    RGB = (200, 40, 90)  # channels differ, so a missed BGR->RGB swap shows

    def __init__(self, tmp_path: Path, quick_timeout: bool = False) -> None:
        cv2 = pytest.importorskip("cv2")
        from robot_rl.config.sections import CameraConfig
        from robot_rl_drivers.cameras.opencv.camera import OpenCVCamera
        from robot_rl_drivers.cameras.opencv.settings import OpenCVSettings

        path = tmp_path / "clip.avi"
        writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (self.width, self.height))
        assert writer.isOpened(), "OpenCV cannot write MJPG here"
        bgr = np.zeros((self.height, self.width, 3), np.uint8)
        bgr[:] = self.RGB[::-1]
        for _ in range(3 if quick_timeout else 30):
            writer.write(bgr)
        writer.release()
        # The file is read to its end at once; afterwards the newest frame only ages.
        self.timeout_s = 0.3 if quick_timeout else 30.0
        cfg = CameraConfig(backend="opencv", width=self.width, height=self.height, fps=30)
        self.camera = OpenCVCamera("front", cfg, OpenCVSettings(device=str(path), frame_timeout_s=self.timeout_s))
        self.check_colours = self._check_colours
        self.go_away = self._go_away

    def advance(self) -> None:
        time.sleep(0.05)

    def _check_colours(self, frame) -> None:
        mean = frame.image.reshape(-1, 3).mean(axis=0)
        assert np.allclose(mean, self.RGB, atol=6), f"expected RGB {self.RGB}, got {mean.round()}"

    def _go_away(self) -> None:
        time.sleep(self.timeout_s + 0.2)  # the stream has ended: no new frame comes


def make_camera_rig(backend: str, tmp_path: Path, *, quick_timeout: bool = False) -> CameraRig:
    if backend == "sim":
        return SimCameraRig(quick_timeout)
    if backend == "topic":
        return TopicCameraRig(quick_timeout)
    if backend == "realsense":
        return RealSenseCameraRig(quick_timeout)
    if backend == "opencv":
        return OpenCVCameraRig(tmp_path, quick_timeout)
    raise ValueError(f"no contract rig for camera backend {backend!r}: add one to tests/support/contract_rigs.py "
                     "(CAMERA_RIGS and make_camera_rig)")




# =====================================================================================
# InputDevice rigs
# =====================================================================================


class InputRig:
    """One InputDevice backend, with hooks that play a person on it.

    * ``deflect()``: push the device as far as it goes (and beyond its full scale where
      the raw input allows), on every axis;
    * ``press(action)`` / ``release(action)``: hold / let go the control of ``action``;
    * ``go_away()``: unplug the device mid-use (None where it cannot go away);
    * ``detects_loss``: whether the backend can tell that its device went away (a driver
      sees the read fail); a topic reader cannot tell a dead publisher from a quiet one,
      so its reads must turn neutral instead;
    * ``settle()``: wait until what was played has reached the device's state.
    """

    name = "?"
    device: Any
    detects_loss = True
    go_away: Optional[Callable[[], None]] = None

    def deflect(self) -> None:
        raise NotImplementedError

    def press(self, action: str) -> None:
        raise NotImplementedError

    def release(self, action: str) -> None:
        raise NotImplementedError

    def settle(self) -> None:
        pass

    def teardown(self) -> None:
        self.device.close()


class SpaceMouseRig(InputRig):
    """``SpaceMouse`` over a fake ``hid`` module, byte-exact reports (as test_spacemouse.py)."""

    name = "spacemouse"
    BUTTONS = {"intervene": 0, "success": 1}

    def __init__(self) -> None:
        from robot_rl.config.input import InterventionConfig, SpaceMouseConfig
        from robot_rl_drivers.input.spacemouse import SpaceMouse

        self.hid = FakeHid()
        cfg = InterventionConfig(device="spacemouse", intervene_mode="hold",
                                 spacemouse=SpaceMouseConfig(buttons=dict(self.BUTTONS)))
        self.device = SpaceMouse(cfg, hid_module=self.hid)
        self._held = 0
        self._reports = 0
        self.go_away = self._go_away

    def _push(self, report: str) -> None:
        self._reports += 1
        self.hid.push(report)

    def settle(self) -> None:
        wait_until(lambda: self.device.reports_received >= self._reports and self.hid.reports.empty(), 2.0,
                   "the SpaceMouse reader thread")
        time.sleep(0.01)  # the reader has taken the last report; let it finish decoding it

    def deflect(self) -> None:
        # All six axes at int16's extreme: about 94x the full scale of 350 counts.
        self._push("01 " + " ".join(["ff 7f"] * 3) + " " + " ".join(["00 80"] * 3))

    def press(self, action: str) -> None:
        self._held |= 1 << self.BUTTONS[action]
        self._push(f"03 {self._held:02x}")

    def release(self, action: str) -> None:
        self._held &= ~(1 << self.BUTTONS[action])
        self._push(f"03 {self._held:02x}")

    def _go_away(self) -> None:
        self.hid.reports.put(UNPLUG)
        wait_until(lambda: not self.device.connected, 2.0, "the reader to see the unplug")


class KeyboardRig(InputRig):
    """``KeyboardInput`` with a pynput-shaped listener and pynput-shaped key events."""

    name = "keyboard"

    def __init__(self) -> None:
        from robot_rl.config.input import InterventionConfig, KeyboardConfig
        from robot_rl_drivers.input.keyboard import KeyboardInput

        self.listeners, factory = listener_factory()
        # Full speed, so "as far as it goes" is the top of the range.
        cfg = InterventionConfig(device="keyboard", intervene_mode="hold",
                                 keyboard=KeyboardConfig(linear_speed=1.0, angular_speed=1.0))
        self.keys = cfg.keyboard.keys
        self.device = KeyboardInput(cfg, listener_factory=factory)
        self.go_away = self._go_away

    @property
    def listener(self) -> FakeListener:
        return self.listeners[0]

    @staticmethod
    def _event(key: str):
        return pynput_key(name=key) if len(key) > 1 else pynput_key(char=key)

    def deflect(self) -> None:
        for binding in ("forward", "right", "up", "tilt_forward", "roll_right", "turn_left"):
            self.listener.on_press(self._event(getattr(self.keys, binding)))

    def press(self, action: str) -> None:
        self.listener.on_press(self._event(getattr(self.keys, action)))

    def release(self, action: str) -> None:
        self.listener.on_release(self._event(getattr(self.keys, action)))

    def _go_away(self) -> None:
        self.listener.alive = False  # the listener thread died (the X server went away)


class TopicInputRig(InputRig):
    """``TopicInput`` fed through ``on_twist`` / ``on_joy`` as the actor node's subscriptions feed it
    (a SpaceMouse person: spacenav's raw twist and Joy buttons 32.. for robot_rl's actions)."""

    name = "topic"
    detects_loss = False
    TIMEOUT_S = 0.2

    def __init__(self) -> None:
        from robot_rl.config.input import InterventionConfig
        from robot_rl.nodes.intervention import ACTION_BUTTONS, JOY_BUTTONS, TopicInput

        self.action_buttons, self.width = ACTION_BUTTONS, JOY_BUTTONS
        self.device = TopicInput(InterventionConfig(device="spacemouse", intervene_mode="hold"),
                                 timeout_s=self.TIMEOUT_S)
        self._levels = [0] * self.width
        self.go_away = self._go_away

    def deflect(self) -> None:
        self.device.on_twist(np.array([5.0, -5.0, 5.0, -5.0, 5.0, -5.0]))  # 5x full deflection

    def press(self, action: str) -> None:
        self._levels[self.action_buttons[action]] = 1
        self.device.on_joy(tuple(self._levels))

    def release(self, action: str) -> None:
        self._levels[self.action_buttons[action]] = 0
        self.device.on_joy(tuple(self._levels))

    def _go_away(self) -> None:
        time.sleep(self.TIMEOUT_S + 0.1)  # the publisher (intervention node) died: nothing more arrives


class SimulatedIntervenerRig(InputRig):
    """``SimulatedIntervener`` on the MuJoCo PickCube env (built through ``make_env``).

    "Deflecting" it means giving it a reason to take over: the policy stalls (the arm
    does not move between reads), so after its grace steps it takes over with the expert.
    """

    name = "simulated"
    detects_loss = False

    def __init__(self) -> None:
        from robot_rl.assemble import make_env, person_device
        from robot_rl.sim.intervener import SimulatedIntervener

        cfg = load_config(PICK, ["intervention.device=simulated"])
        self.env = make_env(cfg)
        self.env.reset(seed=0)
        self.device = person_device(cfg, self.env)  # as the trainer and the actor build it
        assert isinstance(self.device, SimulatedIntervener)

    def deflect(self) -> None:
        """Read until the stalled policy makes it take over (the next read is a takeover)."""
        for _ in range(100):
            if self.device.remaining > 0:
                return
            self.device.read()
        raise AssertionError("the simulated intervener never took over a stalled policy")

    def teardown(self) -> None:
        self.device.close()
        self.env.close()


def make_input_rig(backend: str) -> InputRig:
    if backend == "spacemouse":
        return SpaceMouseRig()
    if backend == "keyboard":
        return KeyboardRig()
    if backend == "topic":
        return TopicInputRig()
    if backend == "simulated":
        return SimulatedIntervenerRig()
    if backend == "gamepad":
        from gamepad_rig import GamepadRig  # tests/support/gamepad_rig.py

        return GamepadRig()
    raise ValueError(backend)
