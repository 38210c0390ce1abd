"""The Cartesian admittance law, for arms driven through a position or velocity interface
and a wrist force-torque sensor (a UR e-series over RTDE, the 6-DoF sim arm).

A torque-controlled arm is compliant by its impedance law; an arm that only takes poses
or twists is made compliant by moving a *reference* pose as a virtual mass-spring-damper
would move under the measured external wrench, and having the arm follow the reference:

    M a = K clip(e) - D v + W          e = target - reference (per axis, clipped)

``W`` is the force-torque reading (the force the world exerts on the tool, base frame: a
push in +x reads +Fx), low-pass filtered, minus the bias taken at :meth:`start`, with a
soft deadband. Under a constant external force ``F`` the reference settles ``F / K`` from
the target, so ``1/K`` is the admittance; against a stiff contact the arm pushes with at
most ``K * error_clip``. Each cycle the reference's acceleration and velocity are limited,
its velocity toward a wall of the safety box is limited to what it can brake from
before the wall (then it is clipped into the box), and it is kept within
``tracking_clip_mm`` of the measured pose, so an arm that cannot follow (blocked, or
slower than the reference) does not wind it up. The arm is sent the reference pose (for a
servoL-style interface) and the twist ``v + tracking_gain * (reference - measured)``
(for speedL), limited in speed and then in change per cycle by the acceleration limits.

The reference is integrated semi-implicitly (the spring and damper act on the velocity
being computed), so the law is stable for every mass, stiffness and damping the config
allows at any cycle time; the steady state is unchanged.

Targets, rejections, holds and the watchdog are :class:`~robot_rl.control.guard.TargetGuard`'s,
as for the impedance law. A force-torque reading beyond ``force_limit``/``torque_limit``,
or none for ``ft_timeout_s``, is a fault (:attr:`CartesianAdmittanceController.ft_fault`):
the twist ramps to zero and the target becomes the reference until :meth:`clear_fault`.
A TCP pushed past the box's outside margin is the guard's box fault, as on the impedance
law: the law keeps running toward the nearest pose in the box and refuses targets.
A non-finite measured state is counted and the twist ramps to zero; no NaN is ever output.
A 6-DoF arm has no null space, so there is no posture.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

import numpy as np

from robot_rl.config.sections import AdmittanceConfig
from robot_rl.control.commands import log_rejection
from robot_rl.control.guard import LawStats, MeasuredPose, TargetGuard
from robot_rl.control.safety import SafetyBox
from robot_rl.control.slew import limit_norm
from robot_rl.control.transforms import orientation_error, quat_mul, quat_normalize, rotvec_to_quat
from robot_rl.errors import RobotRLError

log = logging.getLogger("robot_rl.control")

BRAKE_SHARE = 0.5  # of the acceleration limit, per axis, the reference brakes with before a box wall
AXES = ("Fx", "Fy", "Fz", "Tx", "Ty", "Tz")


@dataclass(frozen=True)
class TcpState:
    """What the admittance law needs each cycle (base frame)."""

    pos: np.ndarray  # (3,) measured TCP position
    quat: np.ndarray  # (4,) measured TCP orientation, w x y z
    # (6,) raw force-torque reading at the TCP, base frame (force N, then torque Nm);
    # None = no new F/T sample this cycle (the law keeps its filtered value)
    wrench: np.ndarray | None = None


@dataclass
class AdmittanceOutput:
    """What the arm is sent this cycle, and what tests and statistics look at."""

    pos: np.ndarray  # (3,) compliant reference position (what a servoL-style interface is sent)
    quat: np.ndarray  # (4,) compliant reference orientation
    # (6,) commanded TCP twist (what speedL is sent): reference velocity + tracking feedback
    # toward the reference; limited in speed and acceleration
    twist: np.ndarray
    wrench: np.ndarray  # (6,) the filtered, bias-removed, deadbanded wrench the law used
    error: np.ndarray  # (6,) unclipped pose error target - reference (rotation as a base-frame rotation vector)
    error_clipped: bool


@dataclass(frozen=True)
class AdmittanceGains:
    """Per-axis gains and limits, precomputed from an AdmittanceConfig."""

    mass: np.ndarray  # (6,)
    stiffness: np.ndarray  # (6,)
    damping: np.ndarray  # (6,)
    error_clip: np.ndarray  # (6,) metres then radians
    max_speed: float
    max_rot_speed: float
    max_acc: float
    max_rot_acc: float
    tracking_gain: float
    tracking_clip: float  # metres
    tracking_clip_rad: float
    deadband: np.ndarray  # (6,) N then Nm
    limit: np.ndarray  # (6,) the F/T reading's saturation, N then Nm

    @classmethod
    def from_config(cls, cfg: AdmittanceConfig) -> "AdmittanceGains":
        m = np.asarray(cfg.mass, dtype=np.float64)
        k = np.asarray(cfg.stiffness, dtype=np.float64)
        d = 2.0 * np.sqrt(k * m) if cfg.damping is None else np.asarray(cfg.damping, dtype=np.float64)
        clip = np.concatenate([np.asarray(cfg.error_clip_mm) / 1000.0, np.asarray(cfg.error_clip_rad)])
        deadband = np.array([cfg.force_deadband] * 3 + [cfg.torque_deadband] * 3, dtype=np.float64)
        limit = np.array([cfg.force_limit] * 3 + [cfg.torque_limit] * 3, dtype=np.float64)
        return cls(m, k, d, clip, float(cfg.max_speed), float(cfg.max_rot_speed), float(cfg.max_acc),
                   float(cfg.max_rot_acc), float(cfg.tracking_gain), float(cfg.tracking_clip_mm) / 1000.0,
                   float(cfg.tracking_clip_rad), deadband, limit)


@dataclass
class AdmittanceStats(LawStats):
    """What the admittance controller refused, clipped, held and faulted on."""

    nonfinite_states: int = 0  # cycles whose measured pose or wrench was not finite (or malformed)
    ft_faults: int = 0  # force-torque faults raised (saturated or stale sensor)
    max_wrench: np.ndarray = field(default_factory=lambda: np.zeros(6))  # the largest |W| used, per axis


class WrenchFilter:
    """The F/T reading as the law uses it: low-pass filtered, bias removed, soft deadband.

    The bias is the reading at (re)start: the tool's weight and the sensor's offset, so
    the arm does not drift off on start. Without a reading then, the first one is the bias.
    """

    def __init__(self, cutoff_hz: float, deadband: np.ndarray) -> None:
        self.cutoff_hz = float(cutoff_hz)
        self.deadband = np.asarray(deadband, dtype=np.float64)
        self.bias: np.ndarray | None = None
        self.filtered = np.zeros(6)
        self._since = 0.0  # seconds since the last sample

    def reset(self, reading: np.ndarray | None) -> None:
        """Take ``reading`` as the bias (None: the next sample is)."""
        self.bias = None if reading is None else np.array(reading, dtype=np.float64)
        self.filtered = np.zeros(6) if reading is None else self.bias.copy()
        self._since = 0.0

    def tick(self, dt: float) -> None:
        self._since += dt

    def update(self, reading: np.ndarray) -> None:
        """Fold a new (finite) sample in, with the time since the last one as its weight."""
        if self.bias is None:
            self.reset(reading)
            return
        alpha = 1.0 - math.exp(-2.0 * math.pi * self.cutoff_hz * self._since)
        self.filtered = self.filtered + alpha * (reading - self.filtered)
        self._since = 0.0

    @property
    def value(self) -> np.ndarray:
        """The wrench the law uses: filtered, minus the bias, soft-deadbanded."""
        if self.bias is None:
            return np.zeros(6)
        w = self.filtered - self.bias
        return np.sign(w) * np.maximum(np.abs(w) - self.deadband, 0.0)


class CartesianAdmittanceController(TargetGuard):
    """The admittance law plus a target, a safety box, a watchdog and F/T fault handling.

    The attributes a node, the adversary or a contract test reads have the names and
    meaning of :class:`~robot_rl.control.impedance.CartesianImpedanceController`'s
    (``cfg``, ``box``, ``watchdog_enabled``, ``stats``, ``holding``, ``started``,
    ``last_output``, ``target_pos``/``target_quat``, ``goal_pos``/``goal_quat``,
    ``last_target_time``); ``ref_pos``/``ref_quat``/``ref_vel`` is the compliant
    reference, ``twist`` the last commanded twist and ``fault`` a one-line reason while
    the F/T stream is saturated or stale or the TCP is pushed out of the box (None otherwise;
    ``ft_fault`` and ``box_fault`` say which).
    """

    def __init__(self, cfg: AdmittanceConfig, box: SafetyBox, watchdog: bool = True) -> None:
        super().__init__(cfg, box, AdmittanceStats(), watchdog)
        self.stats: AdmittanceStats
        self.gains = AdmittanceGains.from_config(cfg)
        self.wrench_filter = WrenchFilter(cfg.wrench_filter_hz, self.gains.deadband)
        self.ft_fault: str | None = None
        self.ref_pos: np.ndarray | None = None
        self.ref_quat: np.ndarray | None = None
        self.ref_vel = np.zeros(6)
        self.twist = np.zeros(6)
        self.last_output: AdmittanceOutput | None = None
        self._ft_age = 0.0  # seconds since the last F/T sample

    # --- starting, targets, holds, faults ---------------------------------------------

    def start(self, tcp: TcpState, now: float) -> None:
        """Reference := the measured pose at rest, F/T bias := this reading: nothing moves."""
        measured = _measured(tcp)
        if measured is None:
            raise RobotRLError("cannot start the admittance law at a non-finite or malformed measured TCP pose "
                               f"(pos {tcp.pos!r}, quat {tcp.quat!r}); check the arm's state stream")
        pos, quat, wrench = measured
        self._adopt(pos, quat, now, holding=False)
        self._restart(pos, quat, wrench)
        self.twist = np.zeros(6)
        self.ft_fault = None
        self.box_fault = None

    @property
    def fault(self) -> str | None:
        """The F/T fault, else the box fault, else None."""
        return self.ft_fault or self.box_fault

    def _restart(self, pos: np.ndarray, quat: np.ndarray, wrench: np.ndarray | None) -> None:
        self.ref_pos, self.ref_quat = pos.copy(), quat.copy()
        self.ref_vel = np.zeros(6)
        self.wrench_filter.reset(wrench)
        self._ft_age = 0.0

    def hold(self, tcp: MeasuredPose, now: float) -> None:
        """Target := the measured pose (the reference, where none is measured); the reference comes to rest there.
        During a box fault the fault's hold pose stays the target."""
        if self.box_fault is not None:
            return
        measured = _pose(tcp.pos, tcp.quat)
        if measured is None and self.ref_pos is not None:
            measured = (self.ref_pos, self.ref_quat)
        if measured is not None:
            self._adopt(*measured, now, holding=True)

    def clear_fault(self, tcp: TcpState, now: float) -> None:
        """End a fault once the cause is gone. A box fault: :meth:`clear_box_fault` (ValueError
        while the TCP is still outside). An F/T fault (or none): re-bias the F/T and restart at
        the measured pose.

        The commanded twist keeps ramping from where it was (it is zero after a fault has
        held for long enough). A sensor still saturated or silent faults again.
        """
        measured = _measured(tcp)
        if measured is None:
            log.error("cannot clear the force-torque fault at a non-finite measured state; still holding")
            return
        pos, quat, wrench = measured
        had_box_fault = self.box_fault is not None
        self.clear_box_fault(pos, quat, now)
        if had_box_fault and self.ft_fault is None:
            return  # the box fault was all: the reference and the hold pose stay
        if self.ft_fault is not None:
            log.warning("force-torque fault cleared (%s)", self.ft_fault)
        self.ft_fault = None
        self._adopt(pos, quat, now, holding=False)
        self._restart(pos, quat, wrench)

    def _raise_fault(self, reason: str) -> None:
        self.ft_fault = reason
        self.stats.ft_faults += 1
        log.error("%s", reason)

    def _ft_problem(self, wrench: np.ndarray | None) -> str | None:
        """A one-line reason if the F/T reading is saturated or stale, else None."""
        hold = "the arm holds until the fault is cleared"
        if wrench is not None:
            over = np.abs(wrench) > self.gains.limit
            if np.any(over):
                parts = [f"|{AXES[i]}| = {abs(wrench[i]):.0f} {'N' if i < 3 else 'Nm'} > "
                         f"{self.gains.limit[i]:g} {'N' if i < 3 else 'Nm'}" for i in np.flatnonzero(over)]
                return f"force-torque sensor saturated: {', '.join(parts)}; {hold}"
        elif self._ft_age > self.cfg.ft_timeout_s:
            return (f"force-torque sensor stale: no usable reading for {self._ft_age:.3f} s "
                    f"(ft_timeout_s {self.cfg.ft_timeout_s:g} s); {hold}")
        return None

    # --- the cycle ---------------------------------------------------------------------

    def compute(self, tcp: TcpState, now: float, dt: float) -> AdmittanceOutput:
        """The reference pose and the twist for this cycle. Before :meth:`start`, the measured pose at rest."""
        dt = float(dt) if math.isfinite(dt) and dt > 0.0 else 0.0
        if not self.started:
            pose = _pose(tcp.pos, tcp.quat)
            pos, quat = pose if pose is not None else (np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]))
            return AdmittanceOutput(pos, quat, np.zeros(6), np.zeros(6), np.zeros(6), False)
        pose = _pose(tcp.pos, tcp.quat)
        wrench, wrench_ok = _wrench(tcp.wrench)
        self.wrench_filter.tick(dt)
        self._ft_age = 0.0 if wrench is not None else self._ft_age + dt  # a malformed reading is none
        if self.ft_fault is None:
            reason = self._ft_problem(wrench)
            if reason is not None:
                self._raise_fault(reason)
        if pose is None or not wrench_ok:
            self.stats.nonfinite_states += 1
            log_rejection(log, "measured state", self.stats.nonfinite_states, "non-finite or malformed TCP state",
                          "the commanded twist ramps to zero")
            return self._finish(self._stop(dt), dt)
        pos, quat = pose
        if self.ft_fault is not None:
            out = self._stop(dt)
            self._adopt(self.ref_pos, self.ref_quat, now, holding=True)  # the target becomes the reference
            return self._finish(out, dt)
        if wrench is not None:
            self.wrench_filter.update(wrench)
        self._guard(tcp, now)
        self._watch_box(pos, quat, now)
        target_pos, target_quat = self.slew.advance(dt)
        out = self._law(pos, quat, target_pos, target_quat, dt)
        if not (np.all(np.isfinite(out.twist)) and np.all(np.isfinite(out.pos)) and np.all(np.isfinite(out.quat))):
            self.stats.nonfinite_states += 1  # every input was checked: cannot happen, but never send NaN
            log.error("the admittance law computed a non-finite output; the commanded twist ramps to zero")
            out = self._stop(dt)
        return self._finish(out, dt)

    def _finish(self, out: AdmittanceOutput, dt: float) -> AdmittanceOutput:
        self.twist = out.twist
        self.last_output = out
        self.stats.cycles += 1
        self.stats.error_clipped_cycles += int(out.error_clipped)
        np.maximum(self.stats.max_wrench, np.abs(out.wrench), out=self.stats.max_wrench)
        return out

    def _law(self, pos: np.ndarray, quat: np.ndarray, target_pos: np.ndarray, target_quat: np.ndarray,
             dt: float) -> AdmittanceOutput:
        g = self.gains
        error = np.concatenate([target_pos - self.ref_pos, orientation_error(target_quat, self.ref_quat)])
        error_c = np.clip(error, -g.error_clip, g.error_clip)
        clipped = error_c != error
        wrench = self.wrench_filter.value
        # Semi-implicit: v' (1 + dt D/M + dt^2 K'/M) = v + dt/M (K e_c + W), K' = 0 where the error is clipped.
        k_eff = np.where(clipped, 0.0, g.stiffness)
        v_old = self.ref_vel
        v_new = (v_old + dt / g.mass * (g.stiffness * error_c + wrench)) / (
            1.0 + dt * g.damping / g.mass + dt * dt * k_eff / g.mass)
        dv = v_new - v_old
        v = v_old + np.concatenate([limit_norm(dv[:3], g.max_acc * dt), limit_norm(dv[3:], g.max_rot_acc * dt)])
        v = np.concatenate([limit_norm(v[:3], g.max_speed), limit_norm(v[3:], g.max_rot_speed)])
        v = self._brake_before_walls(v, dt)
        # The pose measured now is where the last cycle's reference was to be: the tracking
        # feedback compares the two (the new reference is a cycle ahead of any measurement).
        lag = np.concatenate([self.ref_pos - pos, orientation_error(self.ref_quat, quat)])
        self._integrate(v, dt)
        self._track(pos, quat)
        self._clip_to_box()
        return AdmittanceOutput(self.ref_pos.copy(), self.ref_quat.copy(), self._command(lag, dt), wrench,
                                error, bool(np.any(clipped)))

    def _brake_before_walls(self, v: np.ndarray, dt: float) -> np.ndarray:
        """Velocity toward each wall of the box at most what brakes to rest before it (and
        never past it in one cycle), so the reference reaches the box at rest."""
        box, g = self.box, self.gains
        r = box.relative_rotvec(self.ref_quat)
        v = v.copy()
        for lo, hi, now, acc, sl in ((box.pos_low, box.pos_high, self.ref_pos, g.max_acc, slice(0, 3)),
                                     (box.rot_low, box.rot_high, r, g.max_rot_acc, slice(3, 6))):
            brake = BRAKE_SHARE * acc
            up = np.maximum(hi - now, 0.0)
            down = np.maximum(now - lo, 0.0)
            cap_up = np.minimum(np.sqrt(2.0 * brake * up), up / dt) if dt > 0 else np.sqrt(2.0 * brake * up)
            cap_down = np.minimum(np.sqrt(2.0 * brake * down), down / dt) if dt > 0 else np.sqrt(2.0 * brake * down)
            v[sl] = np.clip(v[sl], -cap_down, cap_up)
        return v

    def _integrate(self, v: np.ndarray, dt: float) -> None:
        self.ref_vel = v
        self.ref_pos = self.ref_pos + v[:3] * dt
        if np.any(v[3:] != 0.0):
            self.ref_quat = quat_normalize(quat_mul(rotvec_to_quat(v[3:] * dt), self.ref_quat))

    def _track(self, pos: np.ndarray, quat: np.ndarray) -> None:
        """Keep the reference within the tracking clip of the measured pose; drop the velocity pulling it away."""
        g = self.gains
        lead = self.ref_pos - pos
        dist = float(np.linalg.norm(lead))
        if dist > g.tracking_clip:
            unit = lead / dist
            self.ref_pos = pos + unit * g.tracking_clip
            self.ref_vel[:3] -= max(float(self.ref_vel[:3] @ unit), 0.0) * unit
        turn = orientation_error(self.ref_quat, quat)
        angle = float(np.linalg.norm(turn))
        if angle > g.tracking_clip_rad:
            unit = turn / angle
            self.ref_quat = quat_normalize(quat_mul(rotvec_to_quat(unit * g.tracking_clip_rad), quat))
            self.ref_vel[3:] -= max(float(self.ref_vel[3:] @ unit), 0.0) * unit

    def _clip_to_box(self) -> None:
        """The reference into the box; the velocity components pushing out at a wall zeroed."""
        box = self.box
        self.ref_pos, self.ref_quat, changed = box.clip(self.ref_pos, self.ref_quat)
        if not changed:
            return
        v = self.ref_vel
        v[:3] = np.where((self.ref_pos >= box.pos_high) & (v[:3] > 0.0), 0.0, v[:3])
        v[:3] = np.where((self.ref_pos <= box.pos_low) & (v[:3] < 0.0), 0.0, v[:3])
        r = box.relative_rotvec(self.ref_quat)
        tol = 1e-9
        v[3:] = np.where((r >= box.rot_high - tol) & (v[3:] > 0.0), 0.0, v[3:])
        v[3:] = np.where((r <= box.rot_low + tol) & (v[3:] < 0.0), 0.0, v[3:])

    def _command(self, lag: np.ndarray, dt: float) -> np.ndarray:
        """The twist the arm is sent: reference velocity + feedback on how far it lags the reference, limited."""
        g = self.gains
        lin = self.ref_vel[:3] + g.tracking_gain * lag[:3]
        ang = self.ref_vel[3:] + g.tracking_gain * lag[3:]
        return self._ramp(np.concatenate([limit_norm(lin, g.max_speed), limit_norm(ang, g.max_rot_speed)]), dt)

    def _ramp(self, twist: np.ndarray, dt: float) -> np.ndarray:
        """``twist`` reached from the last commanded one within the acceleration limits."""
        g, prev = self.gains, self.twist
        step = twist - prev
        return prev + np.concatenate([limit_norm(step[:3], g.max_acc * dt), limit_norm(step[3:], g.max_rot_acc * dt)])

    def _stop(self, dt: float) -> AdmittanceOutput:
        """A cycle that brings the arm to rest: the twist ramps to zero and the reference follows it."""
        twist = self._ramp(np.zeros(6), dt)
        self._integrate(twist.copy(), dt)
        self._clip_to_box()
        return AdmittanceOutput(self.ref_pos.copy(), self.ref_quat.copy(), twist, np.zeros(6), np.zeros(6), False)


def _pose(pos: object, quat: object) -> tuple[np.ndarray, np.ndarray] | None:
    """A finite (3,) position and unit (4,) quaternion, or None."""
    try:
        p = np.asarray(pos, dtype=np.float64)
        q = np.asarray(quat, dtype=np.float64)
        if p.shape != (3,) or q.shape != (4,) or not (np.all(np.isfinite(p)) and np.all(np.isfinite(q))):
            return None
        return p.copy(), quat_normalize(q)
    except (TypeError, ValueError, OverflowError):
        return None


def _wrench(value: object) -> tuple[np.ndarray | None, bool]:
    """A finite (6,) reading, or None; and whether ``value`` was usable (None, no sample, is)."""
    if value is None:
        return None, True
    try:
        w = np.array(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None, False
    if w.shape != (6,) or not np.all(np.isfinite(w)):
        return None, False
    return w, True


def _measured(tcp: TcpState) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """The measured pose and wrench, checked (a wrench of None, or an unusable one, is no sample)."""
    pose = _pose(tcp.pos, tcp.quat)
    return None if pose is None else (*pose, _wrench(tcp.wrench)[0])
