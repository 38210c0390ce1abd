"""What every control law around a target pose shares: the guarded target and its counters.

The impedance law (torque arms) and the admittance law (arms with a position/velocity
interface) make the same promises about their target, so they keep it the same way:
:class:`TargetGuard` checks a target (:mod:`robot_rl.control.commands`), clips it to the
box, lets the law's target move toward it at bounded speed (:class:`~robot_rl.control.slew.TargetSlew`),
holds the measured pose after a target it cannot use or when targets stop (the
watchdog), and counts all of it in a :class:`LawStats`. Nodes, the adversary and the
contract tests read the same attribute names on both laws.

Clipping targets keeps what the law is *asked* for inside the box; it cannot keep the arm
there against an external force (a collision, a person leaning on the arm, a stuck
gripper). So the guard also watches the *measured* TCP: once it is more than the box's
``outside_margin`` (``robot.workspace.outside_margin_m``) outside the box, or turned more
than ``outside_margin_rad`` (``robot.workspace.outside_margin_rad``) past its orientation
bounds (a hand twisted by a collision or a person), the law faults
(:attr:`TargetGuard.box_fault`, one line naming the axis and the distance),
refuses every target, and holds the nearest pose in the box to where the fault was
noticed: the law pulls back with no more than its usual clipped spring force, so the arm
returns to the box when the force goes away, and moves toward no target meanwhile. The
fault is latched: :meth:`TargetGuard.clear_box_fault` (a backend's ``recover()``) ends it
once the TCP is back within :data:`BOX_CLEAR_SHARE` of both margins (hysteresis, so an arm
resting on a margin does not fault and clear by turns).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields
from typing import Any, Protocol

import numpy as np

from robot_rl.control.commands import BadCommand, log_rejection, pose_command
from robot_rl.control.safety import SafetyBox, finite_quat
from robot_rl.control.slew import TargetSlew

log = logging.getLogger("robot_rl.control")

BOX_CLEAR_SHARE = 0.5  # of the outside margin: a box fault clears only once the TCP is back within this


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
    box_faults: int = 0  # faults raised because the measured TCP was pushed or turned past a margin outside the box
    refused_in_fault: int = 0  # good targets refused while a fault held the arm
    max_outside_m: float = 0.0  # the farthest the measured TCP has been outside the box, metres
    max_outside_rad: float = 0.0  # the farthest the measured TCP has been turned past the box, radians

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
        self.box_fault: str | None = None
        self.outside_m = 0.0  # how far the measured TCP was outside the box in the last cycle, metres
        self.outside_rad = 0.0  # how far it was turned past the box's orientation bounds, radians

    @property
    def fault(self) -> str | None:
        """A one-line reason while a fault holds the arm (the admittance law adds its F/T faults), else None."""
        return self.box_fault

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
        """Accept a new target (clipped to the box); False if it was rejected, or refused while
        a fault holds the arm (counted in ``refused_in_fault``). Never raises."""
        if self.fault is not None:
            self.stats.refused_in_fault += 1
            log_rejection(log, "target while faulted", self.stats.refused_in_fault, self.fault)
            return False
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
        """Make the measured pose the target, exactly (during a box fault the fault's hold pose stays)."""
        if self.box_fault is None:
            self._adopt(state.pos, state.quat, now, holding=True)

    def _watch_box(self, pos: np.ndarray, quat: np.ndarray, now: float) -> None:
        """Fault once the measured TCP (finite ``pos``, ``quat``) is more than a margin outside
        the box, in position or orientation: the target becomes the nearest pose in the box,
        and stays until the fault clears."""
        dist, axis = self.box.excursion(pos)
        turn, rot_axis = self.box.rot_excursion(quat)
        self.outside_m, self.outside_rad = dist, turn
        self.stats.max_outside_m = max(self.stats.max_outside_m, dist)
        self.stats.max_outside_rad = max(self.stats.max_outside_rad, turn)
        if self.box_fault is not None:
            return
        if dist > self.box.outside_margin:
            what = (f"TCP is {dist:.3f} m outside the box on {axis} (robot.workspace.outside_margin_m "
                    f"{self.box.outside_margin:g} m)")
        elif turn > self.box.outside_margin_rad:
            what = (f"TCP is turned {turn:.3f} rad outside the box on {rot_axis} (robot.workspace.outside_margin_rad "
                    f"{self.box.outside_margin_rad:g} rad)")
        else:
            return
        self.box_fault = (f"{what}: an external force (a collision, a person, a stuck gripper?); the arm holds the "
                          "nearest pose in the box and refuses targets until it is back inside and recovered")
        self.stats.box_faults += 1
        log.error("%s", self.box_fault)
        hold_pos, hold_quat, _ = self.box.clip(pos, quat)
        self._adopt(hold_pos, hold_quat, now, holding=True)
        self._on_watchdog()  # whoever commanded a posture is not driving now either

    def clear_box_fault(self, pos: object, quat: object, now: float) -> None:
        """End a box fault once the measured TCP (``pos``, ``quat``) is back within
        :data:`BOX_CLEAR_SHARE` of both margins; ValueError (one line: axis and distance) while
        it is not. The arm keeps holding the fault's hold pose until the next target."""
        if self.box_fault is None:
            return
        p = np.asarray(pos, dtype=np.float64)
        if p.shape != (3,) or not np.all(np.isfinite(p)):
            raise ValueError("the measured TCP position is not finite: cannot tell whether it is back in the box")
        q = finite_quat(quat)
        if q is None:
            raise ValueError("the measured TCP orientation is not a finite quaternion: cannot tell whether it is "
                             "back in the box")
        dist, axis = self.box.excursion(p)
        limit = BOX_CLEAR_SHARE * self.box.outside_margin
        if dist > limit:
            raise ValueError(f"the TCP is still {dist:.3f} m outside the box on {axis} (it must be back within "
                             f"{limit:g} m): take the force off the arm, or guide it back into the box")
        turn, rot_axis = self.box.rot_excursion(q)
        rot_limit = BOX_CLEAR_SHARE * self.box.outside_margin_rad
        if turn > rot_limit:
            raise ValueError(f"the TCP is still turned {turn:.3f} rad outside the box on {rot_axis} (it must be back "
                             f"within {rot_limit:g} rad): take the force off the hand, or turn it back")
        log.warning("box fault cleared, the TCP is back in the box (%s)", self.box_fault)
        self.box_fault = None
        self.last_target_time = now

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
