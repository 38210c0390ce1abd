"""The arm and the clock as the actor sees them over topics: :class:`TopicRobot`, :class:`WallClock`.

``RobotEnv`` runs on these exactly as it runs on the MuJoCo arm, so the actor's env on
topics is the code path a real robot takes. Contract with the node that owns a
:class:`TopicRobot`:

* the node's subscription callbacks hand in decoded values: :meth:`TopicRobot.on_pose`
  (``/robot/tcp_pose``), :meth:`~TopicRobot.on_twist`, :meth:`~TopicRobot.on_wrench`
  and :meth:`~TopicRobot.on_joints` (``/joint_states``, arm joints + ``gripper``);
  from any thread;
* ``send_target(pos, quat)`` and ``send_gripper(opening)`` publish
  ``/robot/target_pose`` and ``/robot/gripper/command``;
* the node calls :meth:`TopicRobot.resend` from a timer at ``ros.target_hz``: it
  re-publishes the latest target, which keeps the controller's short watchdog fed
  between the env's 10 Hz steps. When the actor dies, the re-sending stops with it and
  the controller holds.

Safety rules on this side: no target leaves before the robot's pose is known; a robot
state older than ``ros.state_timeout_s`` is a :class:`~robot_rl.errors.RobotFault`
(the episode ends as failed, and ``recover()`` waits for the controller to come back).
Every wait ends with :class:`~robot_rl.nodes.latest.StopRequested` once ``cancel`` is
set, so Ctrl-C never waits out a timeout.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Optional, Sequence

import numpy as np

from robot_rl.config.sections import ControllerConfig
from robot_rl.control.commands import (
    BadCommand,
    PostureLimits,
    log_rejection,
    posture_command,
    robot_command,
)
from robot_rl.errors import RobotFault
from robot_rl.interfaces import Clock, Robot, RobotState
from robot_rl.nodes.latest import Latest, Percentiles, StopRequested

log = logging.getLogger("robot_rl.nodes.robot")

GRIPPER_JOINT = "gripper"


def split_gripper(names: Sequence[str], q: np.ndarray, dq: np.ndarray, tau: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """``/joint_states`` entries -> (arm q, dq, tau, gripper opening); ValueError without ``gripper``."""
    names = list(names)
    if GRIPPER_JOINT not in names:
        raise ValueError(f"joint state has no '{GRIPPER_JOINT}' entry (names: {names})")
    g = names.index(GRIPPER_JOINT)
    arm = [i for i in range(len(names)) if i != g]
    return q[arm], dq[arm], tau[arm], float(np.clip(q[g], 0.0, 1.0))


class WallClock(Clock):
    """The wall clock (monotonic), for an env whose robot moves on its own in real time."""

    def now(self) -> float:
        return time.monotonic()

    def sleep_until(self, t: float) -> None:
        delay = t - time.monotonic()
        if delay > 0:
            time.sleep(delay)


class TopicRobot(Robot):
    """A ``Robot`` whose state comes from topics and whose commands go out as messages."""

    def __init__(self, send_target: Callable[[np.ndarray, np.ndarray], None], send_gripper: Callable[[float], None],
                 *, state_timeout_s: float, wait_timeout_s: float, pose_topic: str = "/robot/tcp_pose",
                 cancel: threading.Event | None = None, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time,
                 send_posture: Optional[Callable[[Optional[np.ndarray], Optional[float]], None]] = None,
                 posture_limits: Optional[PostureLimits] = None) -> None:
        self._send_target, self._send_gripper = send_target, send_gripper
        self._send_posture = send_posture
        self._posture_limits = posture_limits or PostureLimits.from_config(ControllerConfig())
        self.cancel = cancel or threading.Event()  # set: every wait raises StopRequested
        self.state_timeout_s, self.wait_timeout_s = state_timeout_s, wait_timeout_s
        self.pose_topic = pose_topic
        self._clock, self._wall = clock, wall
        self._pose: Latest[tuple[np.ndarray, np.ndarray, float]] = Latest(clock)
        self._twist: Latest[np.ndarray] = Latest(clock)
        self._wrench: Latest[np.ndarray] = Latest(clock)
        self._joints: Latest[tuple[np.ndarray, np.ndarray, np.ndarray, float]] = Latest(clock)
        self._send_lock = threading.Lock()
        self._target: Optional[tuple[np.ndarray, np.ndarray]] = None
        self._gripper: Optional[float] = None
        self._state_read_at: Optional[float] = None
        self._last: Optional[RobotState] = None
        self.latency = Percentiles()  # state read at a tick -> the next target sent
        self.state_age = Percentiles()  # wall() - state stamp when the env reads it (wall: the stamps' clock)
        self.targets_sent = 0
        self.resends = 0
        self.rejected_commands = 0  # bad targets, grippers and postures, never sent

    # --- inputs, from the node's subscriptions --------------------------------------

    def on_pose(self, pos: np.ndarray, quat: np.ndarray, stamp: float) -> None:
        self._pose.put((np.asarray(pos, float), np.asarray(quat, float), float(stamp)))

    def on_twist(self, twist: np.ndarray) -> None:
        self._twist.put(np.asarray(twist, float))

    def on_wrench(self, wrench: np.ndarray) -> None:
        self._wrench.put(np.asarray(wrench, float))

    def on_joints(self, names: Sequence[str], q: np.ndarray, dq: np.ndarray, tau: np.ndarray) -> None:
        self._joints.put(split_gripper(names, q, dq, tau))

    # --- waiting --------------------------------------------------------------------

    def has_state(self) -> bool:
        return all(x.value is not None for x in (self._pose, self._twist, self._wrench, self._joints))

    def wait_for_state(self, timeout: float | None = None, newer_than: float | None = None) -> RobotState:
        """Block until a complete state (with a pose stamped at or after ``newer_than``) has arrived."""
        timeout = self.wait_timeout_s if timeout is None else timeout
        deadline = time.monotonic() + timeout
        fresh = None if newer_than is None else (lambda pose: pose[2] >= newer_than)
        for stream in (self._pose, self._twist, self._wrench, self._joints):
            got = stream.wait(max(deadline - time.monotonic(), 0.0), fresh if stream is self._pose else None,
                              self.cancel)
            if got is None:
                what = "a robot state" if newer_than is None else "a robot state after the reset"
                raise RobotFault(f"no {what} on {self.pose_topic} and the other robot topics within "
                                 f"{timeout:.0f} s: is the controller (or sim) node running?", state=self._last)
        return self._compose()

    # --- Robot ----------------------------------------------------------------------

    def state(self) -> RobotState:
        if not self.has_state():
            raise RobotFault(f"no robot state yet on {self.pose_topic}", state=None)
        age = self._pose.age()
        if age > self.state_timeout_s:
            raise RobotFault(f"the robot state on {self.pose_topic} is {age:.2f} s old (ros.state_timeout_s "
                             f"{self.state_timeout_s}): is the controller running?", state=self._last)
        state = self._compose()
        self._state_read_at = self._clock()
        self.state_age.add(self._wall() - state.stamp)
        return state

    def command(self, pos: np.ndarray, quat: np.ndarray, gripper: float | None = None) -> bool:
        """Publish a checked target (and gripper); a bad one is counted, never sent, and the
        arm holds where it is (see :meth:`Robot.command`)."""
        if self._pose.value is None:
            raise RobotFault("refusing to send a target before the robot's pose is known", state=None)
        if self.cancel.is_set():
            raise StopRequested()  # e.g. mid-reset: stop moving, the controller's watchdog holds
        age = self._pose.age()
        if age > self.state_timeout_s:  # the controller stopped: a fault, as in state(), until recover()
            raise RobotFault(f"refusing a target: the robot state on {self.pose_topic} is {age:.2f} s old "
                             f"(ros.state_timeout_s {self.state_timeout_s}): is the controller running?",
                             state=self._last)
        try:
            pos, quat, opening = robot_command(pos, quat, gripper)
        except BadCommand as err:
            self.rejected_commands += 1
            log_rejection(log, "command", self.rejected_commands, err, "holding where the arm is")
            self.hold()
            return False
        with self._send_lock:
            self._target = (pos, quat)
            if opening is not None:
                self._gripper = opening
            self._send_locked()
        if self._state_read_at is not None:
            self.latency.add(self._clock() - self._state_read_at)
            self._state_read_at = None
        return True

    def hold(self) -> None:
        pose = self._pose.value
        if pose is None:
            return  # nothing was ever sent: the controller holds by itself
        with self._send_lock:
            self._target = (pose[0].copy(), pose[1].copy())
            self._send_locked()

    def set_posture(self, q: np.ndarray | None, stiffness: float | None = None) -> bool:
        """Send a joint reset's null-space posture on ``/robot/posture``, clipped into the
        joint limits; the controller clips it again, since it must not rely on its callers."""
        if self._send_posture is None:
            raise NotImplementedError("this actor has no posture topic")
        if self.cancel.is_set() and q is not None:
            raise StopRequested()
        try:
            posture = posture_command(q, stiffness, self._posture_limits)
        except BadCommand as err:
            self.rejected_commands += 1
            log_rejection(log, "posture", self.rejected_commands, err, "nothing sent")
            return False
        self._send_posture(posture.q, posture.stiffness)
        return True

    def recover(self) -> None:
        """Wait for the controller to publish again (a fresh state arrives), then hold where the arm is."""
        deadline = time.monotonic() + self.wait_timeout_s
        while not (self.has_state() and self._pose.age() <= min(self.state_timeout_s, 0.2)):
            if self.cancel.is_set():
                raise StopRequested()
            if time.monotonic() > deadline:
                raise RobotFault(f"no fresh robot state on {self.pose_topic} within {self.wait_timeout_s:.0f} s: "
                                 "is the controller (or sim) node running?", state=self._last)
            time.sleep(0.02)
        self.hold()

    def resend(self) -> None:
        """Re-publish the latest target (from the node's timer); nothing before the first one."""
        with self._send_lock:
            if self._target is not None:
                self._send_locked()
                self.resends += 1

    def close(self) -> None:
        """Stop re-sending; the controller's watchdog then holds the arm."""
        with self._send_lock:
            self._target = None

    # --- pieces ---------------------------------------------------------------------

    def _send_locked(self) -> None:
        assert self._target is not None
        self._send_target(*self._target)
        if self._gripper is not None:
            self._send_gripper(self._gripper)
        self.targets_sent += 1

    def _compose(self) -> RobotState:
        (pos, quat, stamp), twist, wrench = self._pose.value, self._twist.value, self._wrench.value
        q, dq, tau, gripper = self._joints.value
        self._last = RobotState(stamp=stamp, tcp_pos=pos, tcp_quat=quat, tcp_twist=twist, tcp_wrench=wrench,
                                q=q, dq=dq, tau=tau, gripper=gripper)
        return self._last
