"""A Franka driven through a ros2_control Cartesian impedance controller (``mode: ros2_control``).

Here the 1 kHz law runs in ros2_control (CRISP's ``cartesian_impedance_controller``, or
a franka_ros2 one) next to ``franka_hardware``; this backend only talks to it over
topics, through robot_rl's node layer (:mod:`robot_rl.ros`, rclpy or the DDS facade):

* in: the TCP pose (``geometry_msgs/PoseStamped``), ``/joint_states`` and optionally a
  TCP wrench (``geometry_msgs/WrenchStamped``);
* out: the target pose (``geometry_msgs/PoseStamped``), re-sent at ``publish_hz``, and
  the null-space reference posture (``sensor_msgs/JointState`` on ``posture_topic``,
  CRISP's ``target_joint``), published when it changes (see below).

The safety rules hold as in the torque mode, applied to the target before it leaves:
the goal is checked (:mod:`robot_rl.control.commands`: a bad pose or gripper value is
counted and the arm holds) and clipped to the safety box, moves toward a new goal at
bounded speed (:mod:`robot_rl.control.slew`, so no command rate can make the remote
controller's torque-rate limit push the arm out of the box), and the published target is
the measured pose plus the pose error clipped per axis (``controller.error_clip_mm`` /
``_rad``), so the remote spring never pulls harder than ``K * clip``. Nothing is published before the
first pose and joint state arrive (the first target is the measured pose), and when
``command`` stops for ``controller.watchdog_s`` the goal becomes the measured pose.

Posture (:meth:`FrankaRos2ControlRobot.set_posture`, the joint-space reset): the target
pose keeps holding the TCP while the controller's null-space reference ``q_ref`` moves,
so the elbow is brought back by the same law, box and clip as the policy. The posture
goes out once per call: CRISP keeps the last one it got, so it is not re-sent with the
target. CRISP reads ``position`` in the order of its ``joints`` parameter and ignores
the names (we send ``<joint_prefix>1..7``, which is that order), and it would take
``velocity`` as ``dq_ref``, so the message carries positions only. Until the first
posture the controller holds its own (CRISP: the joints at activation); a posture is
clipped into ``controller.joint_low`` .. ``joint_high`` before it is published; ``q=None``
publishes ``robot.controller.rest_posture``, and so does the watchdog hold below and
:meth:`~FrankaRos2ControlRobot.close`, once, when a posture set by a caller is active.
The null-space stiffness is the controller's parameter (CRISP: ``nullspace.stiffness``)
and the node layer has no parameter services, so a ``stiffness`` passed to
``set_posture`` is not applied (a warning says so, once): if the joint reset is too
slow, raise that parameter in the controller's configuration. CRISP ignores a topic
with more than one publisher, so nothing else may publish on ``posture_topic``. A
controller restarted by :meth:`~FrankaRos2ControlRobot.recover` starts from its own
reference again, so after ``recover`` no posture counts as set.

Faults: the arm's reflexes are not on these topics, but a stopped controller stops the
state stream: state older than ``state_timeout_s`` is a
:class:`~robot_rl_drivers.robots.faults.RobotFault` (contract in that module), and
:meth:`FrankaRos2ControlRobot.recover` runs the configured recovery commands
(franka_ros2's error-recovery action by default: the node layer has no actions).

The node belongs to the caller, who spins it (the controller node's executor); the
subscription callbacks and the publish timer run there. ``state``/``command`` may be
called from any thread.
"""

from __future__ import annotations

import importlib
import logging
import subprocess
import threading
import time
from typing import Any, Callable, Optional

import numpy as np

from robot_rl.config.hardware import FrankaHardwareConfig
from robot_rl.config.sections import RobotConfig
from robot_rl.control import SafetyBox
from robot_rl.control.commands import (
    BadCommand,
    PostureLimits,
    log_rejection,
    posture_command,
    robot_command,
)
from robot_rl.control.slew import TargetSlew
from robot_rl.control.transforms import orientation_error, quat_mul, quat_normalize, rotvec_to_quat
from robot_rl.errors import DeviceError
from robot_rl.interfaces import Robot, RobotState
from robot_rl_drivers.robots.faults import RobotFault

log = logging.getLogger("robot_rl_drivers.robots.franka_ros2")

TWIST_SMOOTHING = 0.3  # weight of the newest finite-difference twist


def posture_msg(names: list[str], q: np.ndarray, t: float) -> Any:
    """``sensor_msgs/JointState`` with positions only: a null-space reference, not a state."""
    from robot_rl.ros import convert

    return convert.posture_msg(names, q, None, t)


def clip_toward(goal_pos: np.ndarray, goal_quat: np.ndarray, pos: np.ndarray, quat: np.ndarray,
                clip: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pose at most ``clip`` (per axis: metres, then radians) from the measured one, toward the goal."""
    dp = np.clip(goal_pos - pos, -clip[:3], clip[:3])
    dr = np.clip(orientation_error(goal_quat, quat), -clip[3:], clip[3:])
    return pos + dp, quat_normalize(quat_mul(rotvec_to_quat(dr), quat))


class FrankaRos2ControlRobot(Robot):
    """See the module docstring. ``run`` executes recovery commands (tests pass a fake)."""

    def __init__(self, robot_cfg: RobotConfig, hw: FrankaHardwareConfig, node: Any, *,
                 lib: str = "pylibfranka", run: Callable[..., Any] = subprocess.run) -> None:
        from robot_rl.ros import msgs

        self.cfg = robot_cfg
        self.hw = hw
        self.s = hw.ros2_control
        self.node = node
        self._run = run
        self.box = SafetyBox.from_config(robot_cfg)
        c = robot_cfg.controller
        self.clip = np.concatenate([np.asarray(c.error_clip_mm) / 1000.0, np.asarray(c.error_clip_rad)])
        self.watchdog_s = c.watchdog_s
        self._joint_names = [f"{self.s.joint_prefix}{i}" for i in range(1, 8)]
        self.rest_posture = np.asarray(c.rest_posture, dtype=np.float64)
        self._posture_limits = PostureLimits.from_config(c)
        self._posture_override = False  # a caller's posture is active on the controller
        self._stiffness_warned = False
        self._lock = threading.Lock()
        self._pose: Optional[tuple[np.ndarray, np.ndarray, float]] = None  # pos, quat, stamp
        self._pose_arrival = 0.0  # monotonic
        self._joints: Optional[tuple[np.ndarray, np.ndarray, np.ndarray]] = None  # q, dq, effort
        self._joints_arrival = 0.0
        self._wrench = np.zeros(6)
        self._twist = np.zeros(6)
        self._slew = TargetSlew(c.max_target_speed, c.max_target_rot_speed)  # no pose: nothing to publish
        self._last_command = time.monotonic()
        self._holding = True
        self._fault: Optional[str] = None
        self._last_state: Optional[RobotState] = None
        self.published = 0
        self.watchdog_holds = 0
        self.box_clipped_targets = 0
        self.rejected_targets = 0
        self.rejected_postures = 0
        self._pub = node.create_publisher(msgs.PoseStamped, self.s.target_topic, 1)
        self._posture_pub = (node.create_publisher(msgs.JointState, self.s.posture_topic, 1)
                             if self.s.posture_topic else None)
        self._subs = [node.create_subscription(msgs.PoseStamped, self.s.pose_topic, self._on_pose, 10),
                      node.create_subscription(msgs.JointState, self.s.joint_states_topic, self._on_joints, 10)]
        if self.s.wrench_topic:
            self._subs.append(node.create_subscription(msgs.WrenchStamped, self.s.wrench_topic, self._on_wrench, 10))
        self._timer = node.create_timer(1.0 / self.s.publish_hz, self._tick)
        self.gripper = None
        if hw.gripper.enabled:
            from robot_rl_drivers.robots.franka_gripper import FrankaGripper

            self.gripper = FrankaGripper(importlib.import_module(lib), hw.ip, hw.gripper, robot_cfg.gripper_max_width)

    # ------------------------------------------------------------------ topics in

    def _on_pose(self, msg: Any) -> None:
        from robot_rl.ros import convert

        pos, quat = convert.pose_from_msg(msg)  # MessageError: the node drops it with a warning
        stamp = convert.stamp_from_msg(msg.header.stamp)
        with self._lock:
            if self._pose is not None and stamp > self._pose[2]:
                dt = stamp - self._pose[2]
                twist = np.concatenate([(pos - self._pose[0]) / dt, orientation_error(quat, self._pose[1]) / dt])
                self._twist = (1.0 - TWIST_SMOOTHING) * self._twist + TWIST_SMOOTHING * twist
            self._pose = (pos, quat, stamp)
            self._pose_arrival = time.monotonic()

    def _on_joints(self, msg: Any) -> None:
        from robot_rl.ros import convert
        from robot_rl.ros.errors import MessageError

        names, q, dq, effort = convert.joint_state_from_msg(msg)
        try:
            idx = [names.index(n) for n in self._joint_names]
        except ValueError:
            missing = [n for n in self._joint_names if n not in names]
            raise MessageError(f"joint state lacks {missing} (set ros2_control.joint_prefix)") from None
        with self._lock:
            self._joints = (q[idx], dq[idx], effort[idx])
            self._joints_arrival = time.monotonic()

    def _on_wrench(self, msg: Any) -> None:
        from robot_rl.ros import convert

        wrench = convert.wrench_from_msg(msg)
        with self._lock:
            self._wrench = wrench

    # ------------------------------------------------------------------ target out

    def _stale_for(self) -> float:
        return time.monotonic() - min(self._pose_arrival, self._joints_arrival)

    def _tick(self) -> None:
        """Publish the clipped target; the node's executor calls this at ``publish_hz``."""
        from robot_rl.ros import convert

        with self._lock:
            if self._pose is None or self._joints is None or self._fault is not None:
                return  # never move before the current pose is known, nor after a fault
            if self._stale_for() > self.s.state_timeout_s:
                self._fault = (f"no state on {self.s.pose_topic} / {self.s.joint_states_topic} for "
                               f"{self._stale_for():.2f} s (controller stopped, reflex, or cable?)")
                log.error("Franka (ros2_control): %s", self._fault)
                return
            pos, quat, _ = self._pose
            if self._slew.pos is None:
                self._hold_measured()
            if not self._holding and time.monotonic() - self._last_command > self.watchdog_s:
                log.warning("no target for %.3f s: holding the current pose", time.monotonic() - self._last_command)
                self.watchdog_holds += 1
                self._hold_measured()
                self._restore_posture()  # whoever moved the posture is gone too
            goal_pos, goal_quat = self._slew.advance(1.0 / self.s.publish_hz)
            target_pos, target_quat = clip_toward(goal_pos, goal_quat, pos, quat, self.clip)
        self._pub.publish(convert.pose_stamped_msg(target_pos, target_quat, time.time(), self.s.frame_id))
        self.published += 1

    def _hold_measured(self) -> None:
        """The law's target and goal become the measured pose (in the box); call with ``_lock`` held."""
        if self._pose is not None:
            self._slew.jump_to(*self.box.clip(self._pose[0], self._pose[1])[:2])
        self._holding = True

    def _restore_posture(self) -> None:
        """Publish the configured posture if a caller's is active; call with ``_lock`` held."""
        if self._posture_override and self._posture_pub is not None:
            self._posture_pub.publish(posture_msg(self._joint_names, self.rest_posture, time.time()))
            self._posture_override = False
            log.info("Franka (ros2_control): null-space posture back to robot.controller.rest_posture")

    # ------------------------------------------------------------------ Robot

    @property
    def ready(self) -> bool:
        return self._pose is not None and self._joints is not None

    def wait_until_ready(self, timeout: Optional[float] = None) -> None:
        """Block until a pose and a joint state have arrived (the node must be spinning)."""
        timeout = self.s.first_state_timeout_s if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while not self.ready:
            if time.monotonic() > deadline:
                got = ("a pose" if self._pose is not None
                       else "joint states" if self._joints is not None else "nothing")
                raise DeviceError(f"Franka (ros2_control): no state on {self.s.pose_topic} and "
                                  f"{self.s.joint_states_topic} within {timeout:g} s (got {got}; is the "
                                  "controller active, and RMW_IMPLEMENTATION=rmw_cyclonedds_cpp on the robot PC?)")
            time.sleep(0.01)

    @property
    def fault(self) -> Optional[str]:
        return self._fault

    def _check(self) -> None:
        if self._fault is None and self.ready and self._stale_for() > self.s.state_timeout_s:
            with self._lock:
                self._fault = (f"no state on {self.s.pose_topic} / {self.s.joint_states_topic} for "
                               f"{self._stale_for():.2f} s (controller stopped, reflex, or cable?)")
        if self._fault is not None:
            raise RobotFault(f"Franka (ros2_control) stopped: {self._fault}", self._last_state)
        if not self.ready:
            raise DeviceError(f"Franka (ros2_control): no state yet on {self.s.pose_topic} / "
                              f"{self.s.joint_states_topic} (call wait_until_ready first)")

    def state(self) -> RobotState:
        self._check()
        with self._lock:
            (pos, quat, stamp), (q, dq, effort) = self._pose, self._joints
            state = RobotState(stamp=stamp, tcp_pos=pos.copy(), tcp_quat=quat.copy(), tcp_twist=self._twist.copy(),
                               tcp_wrench=self._wrench.copy(), q=q.copy(), dq=dq.copy(), tau=effort.copy(),
                               gripper=self.gripper.fraction if self.gripper is not None else 1.0)
        self._last_state = state
        return state

    def command(self, pos: np.ndarray, quat: np.ndarray, gripper: float | None = None) -> bool:
        """See :meth:`Robot.command`: a bad pose or gripper value is counted, nothing of it is
        used, and the arm holds where it is measured."""
        self._check()
        try:
            pos, quat, opening = robot_command(pos, quat, gripper)
        except BadCommand as err:
            self.rejected_targets += 1
            log_rejection(log, "command", self.rejected_targets, f"Franka (ros2_control): {err}",
                          "holding where the arm is")
            self.hold()
            return False
        goal_pos, goal_quat, clipped = self.box.clip(pos, quat)
        self.box_clipped_targets += int(clipped)
        with self._lock:
            if self._slew.pos is None:
                self._hold_measured()
            self._slew.set_goal(goal_pos, goal_quat)
            self._last_command = time.monotonic()
            self._holding = False
        if opening is not None and self.gripper is not None:
            self.gripper.command(opening)
        return True

    def set_posture(self, q: np.ndarray | None, stiffness: float | None = None) -> bool:
        """Publish ``q`` (7 joint angles, rad), clipped into the joint limits, as the
        controller's null-space reference.

        See the module docstring. ``q=None`` publishes ``robot.controller.rest_posture``.
        Order of checks: no ``posture_topic`` is NotImplementedError; a fault or missing
        state raises as in :meth:`command`; then a ``q`` that is not 7 finite values, or
        a negative or non-finite ``stiffness``, is counted and nothing is published
        (False). A valid ``stiffness`` cannot be applied (the controller's own null-space
        stiffness parameter holds) and logs a warning on first use.
        """
        if self._posture_pub is None:
            raise NotImplementedError("Franka (ros2_control): robot.hardware.ros2_control.posture_topic is null, so "
                                      "the controller takes no null-space posture (CRISP's is /target_joint)")
        self._check()
        try:
            posture = posture_command(q, stiffness, self._posture_limits)
        except BadCommand as err:
            self.rejected_postures += 1
            log_rejection(log, "posture", self.rejected_postures, f"Franka (ros2_control): {err}", "nothing published")
            return False
        if posture.stiffness is not None and not self._stiffness_warned:
            self._stiffness_warned = True
            log.warning("Franka (ros2_control): null-space stiffness %g Nm/rad not applied: the controller's own "
                        "parameter holds (CRISP: nullspace.stiffness; raise it there for faster joint resets)",
                        posture.stiffness)
        q_ref = self.rest_posture if posture.q is None else posture.q
        with self._lock:  # one critical section with the watchdog's restore, so they cannot interleave
            self._posture_pub.publish(posture_msg(self._joint_names, q_ref, time.time()))
            self._posture_override = q is not None
        return True

    def hold(self) -> None:
        with self._lock:
            self._hold_measured()

    def recover(self) -> None:
        """Run the recovery commands, wait for fresh state, and hold where the arm is."""
        if self._fault is None:
            return
        for cmd in self.s.recovery_commands:
            shown = " ".join(cmd)
            try:
                done = self._run(cmd, capture_output=True, text=True, timeout=self.s.recovery_timeout_s)
            except FileNotFoundError:
                raise RobotFault(f"Franka (ros2_control): cannot run '{cmd[0]}' here; recover by hand: {shown}",
                                 self._last_state) from None
            except subprocess.TimeoutExpired:
                raise RobotFault(f"Franka (ros2_control): '{shown}' did not finish within "
                                 f"{self.s.recovery_timeout_s:g} s", self._last_state) from None
            if done.returncode != 0:
                detail = ((done.stderr or done.stdout or "").strip().splitlines() or ["no output"])[-1]
                raise RobotFault(f"Franka (ros2_control): recovery failed: '{shown}' exited with "
                                 f"{done.returncode}: {detail}", self._last_state)
        with self._lock:
            self._slew.clear()  # no target until the next tick, which holds the pose measured then
            self._holding = True
            self._pose_arrival = self._joints_arrival = 0.0
            self._pose = self._joints = None
            self._fault = None
            self._posture_override = False  # a restarted controller starts from its own reference
        self.wait_until_ready()
        log.info("Franka (ros2_control): recovered")

    def close(self) -> None:
        """Hold (one last target: the measured pose, and the configured posture if a caller
        changed it), then leave the caller's node as it was."""
        self.hold()
        self._tick()
        with self._lock:
            if self._fault is None and self.ready:
                self._restore_posture()
        handles = [(self.node.destroy_timer, self._timer), (self.node.destroy_publisher, self._pub)]
        if self._posture_pub is not None:
            handles.append((self.node.destroy_publisher, self._posture_pub))
        handles += [(self.node.destroy_subscription, sub) for sub in self._subs]
        for destroy, handle in handles:
            try:
                destroy(handle)
            except Exception:  # noqa: BLE001 - the node may already be gone
                pass
        if self.gripper is not None:
            self.gripper.close()
