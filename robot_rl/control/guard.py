"""What every control law around a target pose shares: the guarded target and its counters.

The impedance law (torque arms) and the admittance law (arms with a position/velocity
interface) make the same promises about their target, so they keep it the same way:
:class:`TargetGuard` checks a target (:mod:`robot_rl.control.commands`), clips it to the
box, lets the law's target move toward it at bounded speed (:class:`~robot_rl.control.slew.TargetSlew`),
holds the measured pose after a target it cannot use or when targets stop (the
watchdog), and counts all of it in a :class:`LawStats`. Nodes, the adversary and the
contract tests read the same attribute names on both laws.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields
from typing import Any, Protocol

import numpy as np

from robot_rl.control.commands import BadCommand, log_rejection, pose_command
from robot_rl.control.safety import SafetyBox
from robot_rl.control.slew import TargetSlew

log = logging.getLogger("robot_rl.control")


class MeasuredPose(Protocol):
    """The part of a law's measured state the guard needs (ArmState and TcpState both have it)."""

    pos: np.ndarray
    quat: np.ndarray


@dataclass
class LawStats:
    """What a law refused, clipped and held, for status reports and tests (laws add their own counters)."""

    cycles: int = 0
    rejected_targets: int = 0
    box_clipped_targets: int = 0
    error_clipped_cycles: int = 0
    watchdog_holds: int = 0

    def summary(self) -> dict[str, object]:
        """Plain values for a status message (arrays as lists rounded to 3 decimals)."""
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = [round(float(v), 3) for v in value] if isinstance(value, np.ndarray) else value
        return out


class TargetGuard:
    """The checked, box-clipped, slewed target of a law, its watchdog and its hold.

    Contract: nothing moves before :meth:`start` has been given the measured pose; the
    first target is the measured pose. A target that cannot be used is counted and makes
    the law hold the pose it measures in the next cycle; no method that takes a command
    raises. If no target has arrived for ``cfg.watchdog_s`` (on the caller's clock), the
    law holds the pose it measures at that moment until a new target arrives. ``cfg`` is
    any law config with ``watchdog_s``, ``max_target_speed`` and ``max_target_rot_speed``.
    """

    def __init__(self, cfg: Any, box: SafetyBox, stats: LawStats, watchdog: bool = True) -> None:
        self.cfg = cfg
        self.box = box
        self.stats = stats
        self.slew = TargetSlew(cfg.max_target_speed, cfg.max_target_rot_speed)
        self.watchdog_enabled = watchdog
        self.last_target_time = 0.0
        self.holding = False
        self._hold_next = False

    @property
    def started(self) -> bool:
        return self.slew.pos is not None

    @property
    def target_pos(self) -> np.ndarray | None:
        """The target the law pulls toward in this cycle (slewing toward :attr:`goal_pos`)."""
        return self.slew.pos

    @property
    def target_quat(self) -> np.ndarray | None:
        return self.slew.quat

    @property
    def goal_pos(self) -> np.ndarray | None:
        """The last accepted target, clipped to the box."""
        return self.slew.goal_pos

    @property
    def goal_quat(self) -> np.ndarray | None:
        return self.slew.goal_quat

    def _adopt(self, pos: np.ndarray, quat: np.ndarray, now: float, holding: bool) -> None:
        """Target and goal := this pose exactly (start and hold), the watchdog restarted."""
        self.slew.jump_to(pos, quat)
        self.last_target_time = now
        self.holding = holding
        self._hold_next = False

    def set_target(self, pos: object, quat: object, now: float) -> bool:
        """Accept a new target (clipped to the box); False if it was rejected. Never raises."""
        try:
            pos, quat = pose_command(pos, quat)
        except BadCommand as err:
            return self.reject(str(err))
        if not self.started:
            log.error("target received before the controller knows the current pose; ignored")
            return False
        pos, quat, clipped = self.box.clip(pos, quat)
        self.stats.box_clipped_targets += int(clipped)
        self.slew.set_goal(pos, quat)
        self.last_target_time = now
        self.holding = False
        self._hold_next = False
        return True

    def reject(self, what: str) -> bool:
        """Count a command that cannot be used and hold the pose measured next cycle; False."""
        self.stats.rejected_targets += 1
        log_rejection(log, "command", self.stats.rejected_targets, what, "holding the current pose")
        self._hold_next = self.started
        return False

    def hold(self, state: MeasuredPose, now: float) -> None:
        """Make the measured pose the target, exactly."""
        self._adopt(state.pos, state.quat, now, holding=True)

    def _on_watchdog(self) -> None:
        """What else a law drops when its targets stop (the impedance law: a commanded posture)."""

    def _guard(self, state: MeasuredPose, now: float) -> None:
        """Start of a cycle: hold after a rejected target, or when the watchdog has run out."""
        if self._hold_next:
            self.hold(state, now)
        elif self.watchdog_enabled and not self.holding and now - self.last_target_time > self.cfg.watchdog_s:
            log.warning("no target for %.3f s: holding the current pose", now - self.last_target_time)
            self.stats.watchdog_holds += 1
            self.hold(state, now)
            self._on_watchdog()
