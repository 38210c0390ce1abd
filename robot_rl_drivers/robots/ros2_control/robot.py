"""Any arm driven by a ros2_control Cartesian controller over topics (``robot.backend: ros2_control``).

The 1 kHz (or 500 Hz) law runs in ros2_control, next to the arm's hardware interface;
this backend only talks to it over topics, through robot_rl's node layer
(:mod:`robot_rl.ros`, rclpy or the DDS facade). Which topics is a *contract*
(:data:`robot_rl_drivers.robots.ros2_control.settings.ROS2_CONTROL_CONTRACTS`, picked by
``robot.hardware.contract``; every name can still be set):

================== ===================================== ================================================
                   ``crisp`` (CRISP)                     ``cartesian_controllers`` (FZI)
================== ===================================== ================================================
target out         ``/target_pose``                      ``/cartesian_compliance_controller/target_frame``
null-space posture ``/target_joint``                     none (``set_posture`` is NotImplementedError)
pose in            ``/current_pose``                     ``/cartesian_compliance_controller/current_pose``
F/T in             none                                  ``/cartesian_compliance_controller/ft_sensor_wrench``
base frame         ``base``                              ``base_link`` (its ``robot_base_link``)
joints             ``<joint_prefix>1..7`` (a Franka)     ``joint_names``, required, any count
================== ===================================== ================================================

plus ``/joint_states`` for both. Out: the target pose (``geometry_msgs/PoseStamped`` in
``frame_id``, the base frame: FZI's controller ignores a target in any other frame),
re-sent at ``publish_hz``; with CRISP also the null-space posture
(``sensor_msgs/JointState``), published when it changes. In: the TCP pose
(``PoseStamped``, which must be stamped in ``frame_id``), the joint states, and the
force-torque reading (``geometry_msgs/WrenchStamped``). FZI's compliance controller
reads the sensor on ``<controller>/ft_sensor_wrench`` (remap the
``force_torque_sensor_broadcaster``'s ``~/wrench`` onto it), so reading the same topic
here means the fault checks below see exactly what the controller acts on.

Frames of the wrench: ``RobotState.tcp_wrench`` is the reading at the TCP in base-frame
axes. A reading stamped in ``frame_id`` is taken as it is; one stamped in
``tcp_frame_id`` (the TCP of the measured pose, FZI's ``end_effector_link``; ``tool0``
by default) is rotated into the base frame with the measured orientation. Its torque is
kept about the sensor's origin, so the sensor frame must be the TCP frame (FZI's
``ft_sensor_ref_link`` = ``end_effector_link``, as the UR setup in docs/real-cell.md
has it). A reading in any other frame is dropped and counted, with a line saying which
frames are read.

The safety rules, applied to the target before it leaves: the goal is checked
(:mod:`robot_rl.control.commands`: a bad pose or gripper value is counted and the arm
holds) and clipped to the safety box, moves toward a new goal at bounded speed
(:mod:`robot_rl.control.slew`), and the published target is the measured pose plus the
pose error clipped per axis (``robot.controller.error_clip_mm`` / ``_rad``), so the
remote spring never pulls harder than ``K * clip``. Nothing is published before the
first pose and joint state arrive (and, when ``wrench_required``, the first F/T
reading): the first target is the measured pose. When ``command`` stops for
``robot.controller.watchdog_s`` the goal becomes the measured pose.

Bad input on every subscribed topic is dropped and counted (``dropped``, per stream;
the node also counts and warns per topic): a malformed or non-finite message, a pose
beyond any arm's reach or stamped in another frame or older than the last one, joint
states without the arm's joints or with absurd values. A dropped message never
changes the state, and no target is published unless it is finite.

Faults (:class:`~robot_rl_drivers.robots.faults.RobotFault` from ``state``/``command``
until :meth:`Ros2ControlRobot.recover`; the contract is in that module):

* the pose or joint states stop for ``state_timeout_s`` (the controller stopped): no
  target is published any more;
* with ``wrench_required``, the F/T readings stop for ``state_timeout_s``; or, on any
  wrench topic, a reading is beyond ``force_limit`` / ``torque_limit`` on an axis
  (saturated) or not finite. The controller would act on a stale or saturated force,
  so the arm holds: the target re-sent from then on is the pose measured when the
  fault began (clipped toward the measured pose as ever), so a stale force can only
  offset the arm by ``F/K`` of the controller's spring, never drive it away.

:meth:`~Ros2ControlRobot.recover` runs the configured recovery commands, then waits for
fresh state (and a fresh, sane F/T reading) and holds where the arm is.

Posture (:meth:`~Ros2ControlRobot.set_posture`, the joint-space reset; CRISP): the target
pose keeps holding the TCP while the controller's null-space reference moves. The
posture goes out once per call: CRISP keeps the last one it got. CRISP reads
``position`` in the order of its ``joints`` parameter and ignores the names, and it would
take ``velocity`` as ``dq_ref``, so the message carries positions only. A posture is
clipped into ``robot.controller.joint_low`` .. ``joint_high``; ``q=None`` publishes
``robot.controller.rest_posture``, and so does the watchdog hold and :meth:`close`, once,
when a posture set by a caller is active. The null-space stiffness is the controller's
own parameter (CRISP: ``nullspace.stiffness``; the node layer has no parameter
services), so a ``stiffness`` passed in is not applied (a warning says so, once). CRISP
ignores a topic with more than one publisher, so nothing else may publish there. After
:meth:`recover` no posture counts as set.

This backend has no gripper: a gripper opening in ``command`` is checked like the rest
of the command and then ignored; ``state().gripper`` is 1.0. (The Franka subclass,
:class:`~robot_rl_drivers.robots.franka.ros2.FrankaRos2ControlRobot`, drives the Hand.)

The node belongs to the caller, who spins it (the controller node's executor); the
subscription callbacks and the publish timer run there. ``state``/``command`` may be
called from any thread.
"""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from collections import Counter
from typing import Any, Callable, Optional

import numpy as np

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
from robot_rl.control.transforms import orientation_error, quat_mul, quat_normalize, quat_to_mat, rotvec_to_quat
from robot_rl.errors import ConfigError, DeviceError
from robot_rl.interfaces import Robot, RobotState
from robot_rl_drivers.robots.faults import RobotFault
from robot_rl_drivers.robots.ros2_control.settings import Ros2ControlSettings

TWIST_SMOOTHING = 0.3  # weight of the newest finite-difference twist
MIN_TWIST_DT = 1e-4  # s: poses closer in time than this give no twist estimate (it would be noise over ~0)
MAX_TWIST = (5.0, 20.0)  # m/s, rad/s: no arm moves its TCP faster; an estimate beyond is clipped
MAX_REACH_M = 10.0  # a measured TCP farther from the base than any arm reaches is a bad message
MAX_JOINT_POSITION = 100.0  # rad (16 turns: beyond any joint, continuous ones included)
MAX_JOINT_VELOCITY = 100.0  # rad/s
MAX_JOINT_EFFORT = 1e5  # Nm or N


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


def wrench_to_base(wrench: np.ndarray, quat: np.ndarray) -> np.ndarray:
    """A wrench in the TCP frame (force, torque about the TCP) -> the same wrench in base-frame axes."""
    rot = quat_to_mat(quat)
    return np.concatenate([rot @ wrench[:3], rot @ wrench[3:]])


def saturation(wrench: np.ndarray, force_limit: float, torque_limit: float) -> Optional[str]:
    """Which axes of a reading are beyond the limits ("|Fz| = 312 N > 150 N"), or None."""
    over = [f"|{axis}| = {abs(v):.4g} N > {force_limit:g} N" for axis, v in zip(("Fx", "Fy", "Fz"), wrench[:3])
            if abs(v) > force_limit]
    over += [f"|{axis}| = {abs(v):.4g} Nm > {torque_limit:g} Nm" for axis, v in zip(("Tx", "Ty", "Tz"), wrench[3:])
             if abs(v) > torque_limit]
    return ", ".join(over) or None


class Ros2ControlRobot(Robot):
    """See the module docstring.

    ``label`` names the arm in every message, ``where`` the config section of ``settings``
    (for the hints in them); ``run`` executes recovery commands (tests pass a fake);
    ``clock`` (monotonic seconds) is what state ages and the watchdog are measured in (tests
    that drive the node tick by tick pass one that advances with their ticks).
    """

    def __init__(self, robot_cfg: RobotConfig, settings: Ros2ControlSettings, node: Any, *,
                 run: Callable[..., Any] = subprocess.run, label: str = "ros2_control arm",
                 where: str = "robot.hardware", logger: Optional[logging.Logger] = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        from robot_rl.ros import msgs

        self.cfg = robot_cfg
        self.s = settings
        self.node = node
        self.label, self.where = label, where
        self.log = logger or logging.getLogger("robot_rl_drivers.robots.ros2_control.robot")
        self._run = run
        self._clock = clock
        self.box = SafetyBox.from_config(robot_cfg)
        c = robot_cfg.controller
        self.clip = np.concatenate([np.asarray(c.error_clip_mm) / 1000.0, np.asarray(c.error_clip_rad)])
        self.watchdog_s = c.watchdog_s
        self.joint_names = settings.joints
        self.rest_posture = np.asarray(c.rest_posture, dtype=np.float64)
        self._posture_limits = PostureLimits.from_config(c)
        self._posture_override = False  # a caller's posture is active on the controller
        self._stiffness_warned = False
        self._lock = threading.Lock()
        self._pose: Optional[tuple[np.ndarray, np.ndarray, float]] = None  # pos, quat, stamp
        self._pose_arrival = 0.0  # monotonic
        self._joints: Optional[tuple[np.ndarray, np.ndarray, np.ndarray]] = None  # q, dq, effort
        self._joints_arrival = 0.0
        self._wrench: Optional[tuple[np.ndarray, bool]] = None  # the reading, and whether it is in the TCP frame
        self._wrench_arrival = 0.0
        self._twist = np.zeros(6)
        self._slew = TargetSlew(c.max_target_speed, c.max_target_rot_speed)  # no pose: nothing to publish
        self._last_command = self._clock()
        self._holding = True
        self._fault: Optional[str] = None  # the state stopped: nothing is published
        self._ft_fault: Optional[str] = None  # the F/T reading is stale or saturated: the hold pose is re-sent
        self._last_drop = ""
        self._last_state: Optional[RobotState] = None
        self.published = 0
        self.watchdog_holds = 0
        self.box_clipped_targets = 0
        self.rejected_targets = 0
        self.rejected_postures = 0
        self.nonfinite_targets = 0
        self.ft_faults = 0
        self.dropped: Counter[str] = Counter()  # per stream: pose, joints, wrench
        self._pub = node.create_publisher(msgs.PoseStamped, settings.target_topic, 1)
        self._posture_pub = (node.create_publisher(msgs.JointState, settings.posture_topic, 1)
                             if settings.posture_topic else None)
        self._subs = [node.create_subscription(msgs.PoseStamped, settings.pose_topic, self._on_pose, 10),
                      node.create_subscription(msgs.JointState, settings.joint_states_topic, self._on_joints, 10)]
        if settings.wrench_topic:
            self._subs.append(node.create_subscription(msgs.WrenchStamped, settings.wrench_topic,
                                                       self._on_wrench, 10))
        self._timer = node.create_timer(1.0 / settings.publish_hz, self._tick)

    # ------------------------------------------------------------------ topics in

    def _drop(self, stream: str, reason: str) -> Exception:
        """Count a message of ``stream`` that cannot be used; the MessageError to raise (the node drops it)."""
        from robot_rl.ros.errors import MessageError

        self.dropped[stream] += 1
        self._last_drop = reason
        return MessageError(f"{self.label}: {reason}")

    def _parse(self, stream: str, topic: str, parse: Callable[[Any], Any], msg: Any) -> Any:
        """``parse(msg)``; a malformed message (of any shape) becomes a counted drop, never an exception."""
        from robot_rl.ros.errors import MessageError

        try:
            return parse(msg)
        except MessageError as err:
            raise self._drop(stream, f"{topic}: {err}") from None
        except (AttributeError, TypeError, ValueError, IndexError, OverflowError) as err:
            raise self._drop(stream, f"malformed message on {topic}: {type(err).__name__}: {err}") from None

    def _on_pose(self, msg: Any) -> None:
        from robot_rl.ros import convert

        def parse(m: Any) -> tuple[np.ndarray, np.ndarray, float, str]:
            pos, quat = convert.pose_from_msg(m)
            return pos, quat, float(convert.stamp_from_msg(m.header.stamp)), str(m.header.frame_id)

        topic = self.s.pose_topic
        pos, quat, stamp, frame = self._parse("pose", topic, parse, msg)
        if frame != self.s.frame_id:
            raise self._drop("pose", f"pose on {topic} is in frame {frame[:60]!r}, not the base frame "
                                     f"{self.s.frame_id!r} (set {self.where}.frame_id to the controller's base frame)")
        if not np.isfinite(stamp) or float(np.abs(pos).max()) > MAX_REACH_M:
            raise self._drop("pose", f"pose on {topic} at {np.round(pos, 3).tolist()} m (stamp {stamp:.6g}) is "
                                     f"beyond any arm's reach ({MAX_REACH_M:g} m)")
        with self._lock:
            if self._pose is not None and stamp < self._pose[2]:
                raise self._drop("pose", f"pose on {topic} stamped {stamp:.6f} is older than the last one "
                                         f"({self._pose[2]:.6f}): a second publisher, or a clock that jumped back?")
            if self._pose is not None and stamp - self._pose[2] >= MIN_TWIST_DT:
                dt = stamp - self._pose[2]
                twist = np.concatenate([(pos - self._pose[0]) / dt, orientation_error(quat, self._pose[1]) / dt])
                twist[:3] = np.clip(twist[:3], -MAX_TWIST[0], MAX_TWIST[0])
                twist[3:] = np.clip(twist[3:], -MAX_TWIST[1], MAX_TWIST[1])
                self._twist = (1.0 - TWIST_SMOOTHING) * self._twist + TWIST_SMOOTHING * twist
            self._pose = (pos, quat, stamp)
            self._pose_arrival = self._clock()

    def _on_joints(self, msg: Any) -> None:
        from robot_rl.ros import convert

        topic = self.s.joint_states_topic
        names, q, dq, effort = self._parse("joints", topic, convert.joint_state_from_msg, msg)
        index = {str(n): i for i, n in enumerate(names)}
        missing = [n for n in self.joint_names if n not in index]
        if missing:
            hint = "joint_names or joint_prefix" if self.s.joint_names is None else "joint_names"
            raise self._drop("joints", f"joint state on {topic} lacks {missing} (set {self.where}.{hint})")
        idx = [index[n] for n in self.joint_names]
        q, dq, effort = q[idx], dq[idx], effort[idx]
        for values, bound, what in ((q, MAX_JOINT_POSITION, "positions"), (dq, MAX_JOINT_VELOCITY, "velocities"),
                                    (effort, MAX_JOINT_EFFORT, "efforts")):
            if np.any(np.abs(values) > bound):
                raise self._drop("joints", f"joint {what} on {topic} beyond {bound:g}: "
                                           f"{np.round(values, 3).tolist()}")
        with self._lock:
            self._joints = (q, dq, effort)
            self._joints_arrival = self._clock()

    def _on_wrench(self, msg: Any) -> None:
        topic = str(self.s.wrench_topic)

        def parse(m: Any) -> tuple[np.ndarray, str]:
            force, torque = m.wrench.force, m.wrench.torque
            values = np.array([force.x, force.y, force.z, torque.x, torque.y, torque.z], dtype=np.float64)
            return values, str(m.header.frame_id)

        wrench, frame = self._parse("wrench", topic, parse, msg)
        if not np.all(np.isfinite(wrench)):  # a sensor that sends NaN/inf is not one to act on
            self._set_ft_fault(f"the force-torque reading on {topic} is not finite: the arm holds; check the "
                               "sensor and its driver, then recover")
            raise self._drop("wrench", f"non-finite reading on {topic}: {wrench.tolist()}")
        if frame == self.s.frame_id:
            in_tcp = False
        elif self.s.tcp_frame_id is not None and frame == self.s.tcp_frame_id:
            in_tcp = True
        else:
            frames = repr(self.s.frame_id) + (f" or {self.s.tcp_frame_id!r}" if self.s.tcp_frame_id else "")
            raise self._drop("wrench", f"wrench on {topic} is in frame {frame[:60]!r}; robot_rl reads wrenches in "
                                       f"{frames} (set {self.where}.tcp_frame_id, or the broadcaster's frame_id)")
        over = saturation(wrench, self.s.force_limit, self.s.torque_limit)
        if over is not None:
            self._set_ft_fault(f"force-torque sensor saturated on {topic}: {over}: the arm holds; unload the tool "
                               f"(or raise {self.where}.force_limit / torque_limit), then recover")
            raise self._drop("wrench", f"saturated reading on {topic}: {over}")
        with self._lock:
            self._wrench = (wrench, in_tcp)
            self._wrench_arrival = self._clock()

    def _set_ft_fault(self, reason: str) -> None:
        with self._lock:
            self._ft_fault_locked(reason)

    def _ft_fault_locked(self, reason: str) -> None:
        """The F/T stream cannot be trusted: hold the pose measured now, fault until recover()."""
        if self._ft_fault is not None or self._fault is not None:
            return
        self._ft_fault = reason
        self.ft_faults += 1
        self._hold_measured()
        self.log.error("%s: %s", self.label, reason)

    # ------------------------------------------------------------------ target out

    def _stale_for(self) -> float:
        return self._clock() - min(self._pose_arrival, self._joints_arrival)

    def _state_stale_reason(self) -> str:
        return (f"no state on {self.s.pose_topic} / {self.s.joint_states_topic} for {self._stale_for():.2f} s "
                "(controller stopped, protective stop, or cable?)")

    def _check_wrench_age(self) -> None:
        """With ``wrench_required``, a silent F/T stream is a fault; call with ``_lock`` held."""
        if self.s.wrench_required and self._wrench is not None and self._ft_fault is None:
            age = self._clock() - self._wrench_arrival
            if age > self.s.state_timeout_s:
                self._ft_fault_locked(f"no force-torque reading on {self.s.wrench_topic} for {age:.2f} s (sensor or "
                                      "its broadcaster stopped?): the arm holds; check `ros2 topic hz "
                                      f"{self.s.wrench_topic}`, then recover")

    def _ready_locked(self) -> bool:
        return (self._pose is not None and self._joints is not None
                and (not self.s.wrench_required or self._wrench is not None))

    def _tick(self) -> None:
        """Publish the clipped target; the node's executor calls this at ``publish_hz``."""
        from robot_rl.ros import convert

        with self._lock:
            if not self._ready_locked() or self._fault is not None:
                return  # never move before the current pose is known, nor after the controller stopped
            if self._stale_for() > self.s.state_timeout_s:
                self._fault = self._state_stale_reason()
                self.log.error("%s: %s", self.label, self._fault)
                return
            self._check_wrench_age()
            pos, quat, _ = self._pose
            if self._slew.pos is None:
                self._hold_measured()
            if not self._holding and self._clock() - self._last_command > self.watchdog_s:
                self.log.warning("no target for %.3f s: holding the current pose",
                                 self._clock() - self._last_command)
                self.watchdog_holds += 1
                self._hold_measured()
                self._restore_posture()  # whoever moved the posture is gone too
            goal_pos, goal_quat = self._slew.advance(1.0 / self.s.publish_hz)
            target_pos, target_quat = clip_toward(goal_pos, goal_quat, pos, quat, self.clip)
            if not (np.all(np.isfinite(target_pos)) and np.all(np.isfinite(target_quat))):
                self.nonfinite_targets += 1  # cannot happen from checked inputs; never sent if it does
                self._hold_measured()
                return
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
            self._posture_pub.publish(posture_msg(self.joint_names, self.rest_posture, time.time()))
            self._posture_override = False
            self.log.info("%s: null-space posture back to robot.controller.rest_posture", self.label)

    # ------------------------------------------------------------------ gripper (none here)

    def _gripper_fraction(self) -> float:
        return 1.0

    def _command_gripper(self, opening: float) -> None:
        """No gripper on this backend: a checked opening is ignored."""

    # ------------------------------------------------------------------ Robot

    @property
    def ready(self) -> bool:
        return self._ready_locked()

    def _missing(self) -> str:
        got = [what for what, value in (("a pose", self._pose), ("joint states", self._joints),
                                        ("a wrench", self._wrench)) if value is not None]
        return "got " + (" and ".join(got) if got else "nothing")

    def _contract_hint(self) -> str:
        if self.s.contract == "cartesian_controllers":
            return ("is the cartesian_compliance_controller active with solver.publish_state_feedback: true, and "
                    "force_torque_sensor_broadcaster/wrench remapped to its ft_sensor_wrench?")
        return "is the controller active, and RMW_IMPLEMENTATION=rmw_cyclonedds_cpp on the robot PC?"

    def wait_until_ready(self, timeout: Optional[float] = None) -> None:
        """Block until a pose and a joint state (and, when required, a wrench) have arrived (the node must be
        spinning); RobotFault when the F/T reading faults meanwhile, DeviceError on timeout."""
        timeout = self.s.first_state_timeout_s if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while not self.ready:
            if self._ft_fault is not None:
                raise RobotFault(f"{self.label} stopped: {self._ft_fault}", self._last_state)
            if time.monotonic() > deadline:
                topics = [self.s.pose_topic, self.s.joint_states_topic]
                if self.s.wrench_required:
                    topics.append(str(self.s.wrench_topic))
                dropped = f"; last dropped: {self._last_drop}" if self._last_drop else ""
                raise DeviceError(f"{self.label}: no state on {' and '.join(topics)} within {timeout:g} s "
                                  f"({self._missing()}{dropped}; {self._contract_hint()})")
            time.sleep(0.01)
        if self._ft_fault is not None:
            raise RobotFault(f"{self.label} stopped: {self._ft_fault}", self._last_state)

    @property
    def fault(self) -> Optional[str]:
        return self._fault or self._ft_fault

    def _check(self) -> None:
        if self._fault is None and self.ready:
            with self._lock:
                if self._stale_for() > self.s.state_timeout_s:
                    self._fault = self._state_stale_reason()
                else:
                    self._check_wrench_age()
        if self.fault is not None:
            raise RobotFault(f"{self.label} stopped: {self.fault}", self._last_state)
        if not self.ready:
            raise DeviceError(f"{self.label}: no state yet on {self.s.pose_topic} / {self.s.joint_states_topic}"
                              f"{' / ' + str(self.s.wrench_topic) if self.s.wrench_required else ''} "
                              "(call wait_until_ready first)")

    def state(self) -> RobotState:
        self._check()
        with self._lock:
            (pos, quat, stamp), (q, dq, effort) = self._pose, self._joints
            wrench = np.zeros(6)
            if self._wrench is not None:
                reading, in_tcp = self._wrench
                wrench = wrench_to_base(reading, quat) if in_tcp else reading.copy()
            state = RobotState(stamp=stamp, tcp_pos=pos.copy(), tcp_quat=quat.copy(), tcp_twist=self._twist.copy(),
                               tcp_wrench=wrench, q=q.copy(), dq=dq.copy(), tau=effort.copy(),
                               gripper=self._gripper_fraction())
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
            log_rejection(self.log, "command", self.rejected_targets, f"{self.label}: {err}",
                          "holding where the arm is")
            self.hold()
            return False
        goal_pos, goal_quat, clipped = self.box.clip(pos, quat)
        self.box_clipped_targets += int(clipped)
        with self._lock:
            if self._slew.pos is None:
                self._hold_measured()
            self._slew.set_goal(goal_pos, goal_quat)
            self._last_command = self._clock()
            self._holding = False
        if opening is not None:
            self._command_gripper(opening)
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
            why = ("the cartesian_controllers contract has none" if self.s.contract == "cartesian_controllers"
                   else "CRISP's is /target_joint")
            raise NotImplementedError(f"{self.label}: {self.where}.posture_topic is null, so the controller takes "
                                      f"no null-space posture ({why})")
        self._check()
        try:
            posture = posture_command(q, stiffness, self._posture_limits)
        except BadCommand as err:
            self.rejected_postures += 1
            log_rejection(self.log, "posture", self.rejected_postures, f"{self.label}: {err}", "nothing published")
            return False
        if posture.stiffness is not None and not self._stiffness_warned:
            self._stiffness_warned = True
            self.log.warning("%s: null-space stiffness %g Nm/rad not applied: the controller's own parameter holds "
                             "(CRISP: nullspace.stiffness; raise it there for faster joint resets)",
                             self.label, posture.stiffness)
        q_ref = self.rest_posture if posture.q is None else posture.q
        with self._lock:  # one critical section with the watchdog's restore, so they cannot interleave
            self._posture_pub.publish(posture_msg(self.joint_names, q_ref, time.time()))
            self._posture_override = q is not None
        return True

    def hold(self) -> None:
        with self._lock:
            self._hold_measured()

    def recover(self) -> None:
        """Run the recovery commands, wait for fresh state (and a sane F/T reading), and hold where the arm is.

        RobotFault when a command fails or the state does not come back: a person must look."""
        if self.fault is None:
            return
        for cmd in self.s.recovery_commands:
            shown = " ".join(cmd)
            try:
                done = self._run(cmd, capture_output=True, text=True, timeout=self.s.recovery_timeout_s)
            except FileNotFoundError:
                raise RobotFault(f"{self.label}: cannot run '{cmd[0]}' here; recover by hand: {shown}",
                                 self._last_state) from None
            except subprocess.TimeoutExpired:
                raise RobotFault(f"{self.label}: '{shown}' did not finish within "
                                 f"{self.s.recovery_timeout_s:g} s", self._last_state) from None
            if done.returncode != 0:
                detail = ((done.stderr or done.stdout or "").strip().splitlines() or ["no output"])[-1]
                raise RobotFault(f"{self.label}: recovery failed: '{shown}' exited with "
                                 f"{done.returncode}: {detail}", self._last_state)
        with self._lock:
            self._slew.clear()  # no target until the next tick, which holds the pose measured then
            self._holding = True
            self._pose_arrival = self._joints_arrival = self._wrench_arrival = 0.0
            self._pose = self._joints = self._wrench = None
            self._fault = self._ft_fault = None
            self._posture_override = False  # a restarted controller starts from its own reference
        try:
            self.wait_until_ready()
        except DeviceError as err:
            if isinstance(err, RobotFault):
                raise
            with self._lock:
                self._fault = f"no fresh state after recovery: {err}"
            raise RobotFault(f"{self.label}: {self._fault}", self._last_state) from None
        self.log.info("%s: recovered", self.label)

    def close(self) -> None:
        """Hold (one last target: the measured pose, and the configured posture if a caller
        changed it), then leave the caller's node as it was."""
        self.hold()
        self._tick()
        with self._lock:
            if self._fault is None and self._ready_locked():
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


def make(cfg: RobotConfig, hw: Ros2ControlSettings, *, file: str = "<config>", node: Optional[Any] = None,
         lib: Optional[str] = None) -> Ros2ControlRobot:
    """The SPEC's factory: the backend on ``node`` (``lib`` does not apply: no hardware library)."""
    if node is None:
        raise ConfigError(f"{file}: robot.backend 'ros2_control' talks over ROS topics; build it with a node "
                          "(the controller node passes its own)")
    return Ros2ControlRobot(cfg, hw, node)
