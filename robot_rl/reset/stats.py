"""What a reset did to the controller: the numbers tests and benches assert on.

A reset is supposed to move the arm as gently as a careful person would, through the
same controller as the policy. :class:`ResetStats` records, per reset, the change in the
controller's own counters (:attr:`robot_rl.control.CartesianImpedanceController.stats`)
and the tracking error sampled at every target tick.

**Violation**, as counted by :attr:`ResetStats.violations`: a control event that means
the reset asked for something the safety layer had to refuse or correct:

* a target outside the safety box reached the controller (``box_clipped_targets``),
* a target was rejected as malformed or non-finite (``rejected_targets``),
* the watchdog fired because the target stream stopped (``watchdog_holds``).

Pose-error clipping (``error_clipped_cycles``) is the impedance law limiting its force
during a fast move; it is normal limiting for a policy, so it is *not* a violation. It
is still counted separately, and resets move slowly enough that it never engages: the
tests assert ``error_clipped_cycles == 0`` as well.

Backends that run the impedance law in this process expose the controller as
``robot.controller`` (the MuJoCo arm does); for others only the tracking error is known.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from robot_rl.interfaces import Robot, RobotState
from robot_rl.reset.motion import Pose

COUNTERS = ("cycles", "rejected_targets", "box_clipped_targets", "error_clipped_cycles", "watchdog_holds")


def controller_counters(robot: Robot) -> dict[str, int] | None:
    """The controller's event counters, when the backend exposes its controller."""
    controller = getattr(robot, "controller", None)
    stats = getattr(controller, "stats", None)
    if stats is None:
        return None
    return {name: int(getattr(stats, name)) for name in COUNTERS}


@dataclass
class ResetStats:
    """One reset's record (or the sum of several, see :meth:`add`)."""

    kind: str = ""  # "robot", a task's name (its scripted reset), "teleport", ...
    resets: int = 1
    duration_s: float = 0.0  # on the robot's clock
    targets_sent: int = 0
    cycles: int = 0
    rejected_targets: int = 0
    box_clipped_targets: int = 0
    error_clipped_cycles: int = 0
    watchdog_holds: int = 0
    max_pos_error: float = 0.0  # metres, measured TCP vs the target sent, at ticks
    max_rot_error: float = 0.0  # radians
    joint_resets: int = 0
    attempts: int = 0  # grasp/place attempts (task resets)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def violations(self) -> int:
        """Box-clipped or rejected targets and watchdog holds (see the module docstring)."""
        return self.rejected_targets + self.box_clipped_targets + self.watchdog_holds

    def add(self, other: "ResetStats") -> None:
        for name in ("resets", "targets_sent", "cycles", "rejected_targets", "box_clipped_targets",
                     "error_clipped_cycles", "watchdog_holds", "joint_resets", "attempts"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.duration_s += other.duration_s
        self.max_pos_error = max(self.max_pos_error, other.max_pos_error)
        self.max_rot_error = max(self.max_rot_error, other.max_rot_error)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["violations"] = self.violations
        return out


class StatsRecorder:
    """Counts one reset: call :meth:`start`, let the runner tick, then :meth:`stop`."""

    def __init__(self, robot: Robot, clock) -> None:
        self.robot = robot
        self.clock = clock
        self.stats = ResetStats()
        self._before: dict[str, int] | None = None
        self._t0 = 0.0

    def start(self, kind: str) -> None:
        self.stats = ResetStats(kind=kind)
        self._before = controller_counters(self.robot)
        self._t0 = self.clock.now()

    def on_tick(self, target: Pose, state: RobotState) -> None:
        from robot_rl.control.transforms import orientation_error

        s = self.stats
        s.max_pos_error = max(s.max_pos_error, float(np.max(np.abs(state.tcp_pos - target.pos))))
        s.max_rot_error = max(s.max_rot_error,
                              float(np.max(np.abs(orientation_error(target.quat, state.tcp_quat)))))

    def stop(self, targets_sent: int) -> ResetStats:
        s = self.stats
        s.duration_s = self.clock.now() - self._t0
        s.targets_sent = targets_sent
        after = controller_counters(self.robot)
        if after is not None and self._before is not None:
            for name in COUNTERS:
                setattr(s, name, after[name] - self._before[name])
        return s
