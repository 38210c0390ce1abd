"""The controller node's rules between its topics and a ``Robot``: :class:`ControllerCore`.

The controller node (a real arm) and the sim node (the MuJoCo arm) both run one, so the
watchdog a test measures in sim is the one a robot runs. The node calls :meth:`poll`
at the state rate and publishes the state it returns; it hands every target and
gripper command to :meth:`on_target` / :meth:`on_gripper`.

The rules:

* **Never move before the pose is known.** Until the first state has been read,
  targets and gripper commands are ignored (and counted); the first state makes the
  robot hold exactly where it is (``robot.hold()``), so nothing jumps at start.
* **Targets go to** ``robot.command``, which clips them to the safety box; the impedance
  law clips the pose error per axis. A target or gripper command that cannot be used
  (non-finite, malformed, any wrong type: :mod:`robot_rl.control.commands`) is rejected
  here and counted, never raised; a rejected target makes the robot hold the pose
  measured last, until a good target arrives.
* **Watchdog.** When no target has arrived for ``watchdog_s`` (monotonic clock),
  ``robot.hold()`` makes the pose measured at that moment the target, once, until
  the next target arrives. The check runs in every :meth:`poll`, so the hold starts
  between ``watchdog_s`` and ``watchdog_s`` + one state period after the last target.
  ``status()`` reports the wall times of the last target and of the hold's start, and
  :meth:`pop_events` the hold itself, for the node to publish at once.
* **Posture.** :meth:`on_posture` hands a joint reset's null-space posture to
  ``robot.set_posture``, which clips it into the joint limits and a stiffness bound (a
  malformed one is rejected and counted; a robot that has no posture says so once).
  The watchdog's hold, a restart and a fault restore the configured posture: whoever
  was moving the elbow has stopped talking. Its start and end are events
  (``{"event": "posture", "active": ...}``).
* **Faults.** A :class:`~robot_rl.errors.RobotFault` from the robot stops the state
  stream (the actor sees its state go stale and ends the episode as failed);
  ``recover()`` is tried every ``recover_every_s`` until it succeeds, after which the
  controller starts over at the measured pose.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Optional

import numpy as np

from robot_rl.control.commands import BadCommand, gripper_command, log_rejection, pose_command
from robot_rl.errors import RobotFault
from robot_rl.interfaces import Robot, RobotState

log = logging.getLogger("robot_rl.nodes.controller")


class ControllerCore:
    def __init__(self, robot: Robot, watchdog_s: float, *, recover_every_s: float = 5.0,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time) -> None:
        self.robot = robot
        self.watchdog_s = float(watchdog_s)
        self.recover_every_s = recover_every_s
        self._clock, self._wall = clock, wall
        self.state: Optional[RobotState] = None
        self.holding = True
        self.gripper: Optional[float] = None
        self._target: Optional[tuple[np.ndarray, np.ndarray]] = None
        self._hold_pose: Optional[tuple[np.ndarray, np.ndarray]] = None
        self._last_target_at: Optional[float] = None
        self.last_target_wall: Optional[float] = None
        self.hold_started_wall: Optional[float] = None
        self.fault: Optional[str] = None
        self._fault_at = 0.0
        self._events: list[dict[str, Any]] = []
        self.posture_active = False
        self.counts = {"targets": 0, "gripper_commands": 0, "postures": 0, "rejected_targets": 0,
                       "rejected_grippers": 0, "rejected_postures": 0,
                       "ignored_before_state": 0, "ignored_in_fault": 0, "watchdog_holds": 0, "faults": 0,
                       "recoveries": 0}

    def restart(self) -> None:
        """Forget the target and the pose: after a sim reset or a recovery the arm is elsewhere."""
        self.release_posture()
        self.state = None
        self._target = None
        self._last_target_at = None
        self.holding = True

    # --- the state tick ---------------------------------------------------------------

    def poll(self) -> Optional[RobotState]:
        """Read the state, apply the start rule and the watchdog; None while faulted."""
        now = self._clock()
        if self.fault is not None and not self._try_recover(now):
            return None
        try:
            state = self.robot.state()
        except RobotFault as fault:
            self._on_fault(fault, now)
            return None
        first = self.state is None
        self.state = state
        if first:
            self._hold(state, "start")
        elif (not self.holding and self._last_target_at is not None
              and now - self._last_target_at > self.watchdog_s):
            self.counts["watchdog_holds"] += 1
            log.warning("no target for %.3f s: holding the current pose", now - self._last_target_at)
            self._hold(state, "watchdog")
            self.release_posture()
        return state

    # --- commands ---------------------------------------------------------------------

    def on_target(self, pos: object, quat: object) -> bool:
        """A target pose; False when it was rejected or ignored (no pose yet, or faulted). Never raises."""
        if not self._accepting():
            return False
        try:
            self._target = pose_command(pos, quat)
        except BadCommand as err:
            self._reject_target(str(err))
            return False
        self._command(*self._target)
        self._last_target_at = self._clock()
        self.last_target_wall = self._wall()
        self.counts["targets"] += 1
        if self.holding:
            self.holding = False
            self._events.append({"event": "targets", "stamp": self.last_target_wall})
        return True

    def on_gripper(self, opening: object) -> bool:
        """A gripper opening (0 closed .. 1 open), applied with the current target or hold pose.

        False when it was rejected (not one finite number: counted) or ignored. Never raises."""
        if not self._accepting():
            return False
        try:
            self.gripper = gripper_command(opening)
        except BadCommand as err:
            self.counts["rejected_grippers"] += 1
            self._log_rejection("gripper", err)
            return False
        self.counts["gripper_commands"] += 1
        pose = self._hold_pose if self.holding or self._target is None else self._target
        if pose is not None:
            self._command(*pose)
        return True

    def on_posture(self, q: object, stiffness: object = None) -> bool:
        """A null-space posture (None: the configured one back); False when it was not applied. Never raises."""
        if not self._accepting():
            return False
        try:
            applied = self.robot.set_posture(q, stiffness)
        except NotImplementedError as err:
            self.counts["rejected_postures"] += 1
            if self.counts["rejected_postures"] == 1:
                log.error("a posture arrived, but %s (joint resets need one)", err)
            return False
        except RobotFault as fault:
            self._on_fault(fault, self._clock())
            return False
        except (ValueError, TypeError) as err:  # a backend outside robot_rl may still raise
            applied, reason = False, str(err)
        else:
            reason = "the robot refused it (see its log)"
        if applied is False:
            self.counts["rejected_postures"] += 1
            self._log_rejection("posture", reason)
            return False
        if self.posture_active != (q is not None):
            self._events.append({"event": "posture", "active": q is not None, "stamp": self._wall()})
        self.posture_active = q is not None
        self.counts["postures"] += 1
        return True

    def release_posture(self) -> None:
        """Back to the configured posture, if a posture was set (never raises a fault)."""
        if not self.posture_active:
            return
        self.posture_active = False
        self._events.append({"event": "posture", "active": False, "stamp": self._wall()})
        try:
            self.robot.set_posture(None)
        except (RobotFault, NotImplementedError) as err:
            log.warning("could not restore the configured posture: %s", err)

    # --- reporting --------------------------------------------------------------------

    def pop_events(self) -> list[dict[str, Any]]:
        events, self._events = self._events, []
        return events

    def status(self) -> dict[str, Any]:
        return {"holding": self.holding, "has_state": self.state is not None, "fault": self.fault,
                "posture_active": self.posture_active,
                "watchdog_s": self.watchdog_s, "last_target_wall": self.last_target_wall,
                "hold_started_wall": self.hold_started_wall, **self.counts}

    # --- pieces -----------------------------------------------------------------------

    def _accepting(self) -> bool:
        if self.fault is not None:
            self.counts["ignored_in_fault"] += 1
            return False
        if self.state is None:
            self.counts["ignored_before_state"] += 1
            if self.counts["ignored_before_state"] == 1:
                log.warning("a command arrived before the robot's pose is known; ignored")
            return False
        return True

    def _reject_target(self, reason: str) -> None:
        """Count a bad target; the robot holds where it was last measured (once, not per message)."""
        self.counts["rejected_targets"] += 1
        self._log_rejection("target", reason)
        self._target = None
        if not self.holding and self.state is not None:
            self._hold(self.state, "rejected target")

    def _log_rejection(self, what: str, reason: object) -> None:
        log_rejection(log, what, self.counts[f"rejected_{what}s"], reason)

    def _command(self, pos: np.ndarray, quat: np.ndarray) -> None:
        try:
            self.robot.command(pos, quat, self.gripper)
        except RobotFault as fault:
            self._on_fault(fault, self._clock())

    def _hold(self, state: RobotState, reason: str) -> None:
        self.robot.hold()
        self.holding = True
        self._hold_pose = (state.tcp_pos.copy(), state.tcp_quat.copy())
        self.hold_started_wall = self._wall()
        self._events.append({"event": "hold", "reason": reason, "stamp": self.hold_started_wall,
                             "last_target_wall": self.last_target_wall,
                             "tcp_pos": [round(float(v), 6) for v in state.tcp_pos]})

    def _on_fault(self, fault: RobotFault, now: float) -> None:
        self.posture_active = False  # a backend restarts from its configured posture after recovery
        if self.fault is None:
            self.counts["faults"] += 1
            log.error("robot fault: %s", fault)
            self._events.append({"event": "fault", "reason": str(fault), "stamp": self._wall()})
        self.fault = str(fault)
        self._fault_at = now

    def _try_recover(self, now: float) -> bool:
        if now - self._fault_at < self.recover_every_s:
            return False
        self._fault_at = now
        try:
            self.robot.recover()
        except RobotFault as again:
            log.error("recovery failed, trying again in %.0f s: %s", self.recover_every_s, again)
            return False
        log.info("robot recovered")
        self.fault = None
        self.counts["recoveries"] += 1
        self._events.append({"event": "recovered", "stamp": self._wall()})
        self.restart()
        return True
