"""The Cartesian impedance law, shared by the MuJoCo arm and real torque-level backends.

``impedance_torque`` is the one function every torque backend calls each control cycle:

    tau = J^T (K e_clipped - D v) + N (K_n (q_rest - q) - D_n dq) - d_j dq   (rate-limited)
          + bias                                                            (compensation)

``e`` is the pose error (position, then base-frame rotation vector), clipped per axis
so that a far-away or wrong target can never command more than ``K * clip`` of spring
force. ``N`` projects the posture term into the null space of the task Jacobian so it
never fights the Cartesian spring, and the projected term is scaled to a quarter of
each joint's torque limit at most, so it can never saturate a joint. The change of the
commanded torque per cycle is limited (as Franka's own rate limiter requires). ``bias`` is what the backend must add
for gravity and Coriolis compensation: MuJoCo's ``qfrc_bias`` in sim, the Coriolis
vector alone on a Franka (which compensates gravity itself).

:class:`CartesianImpedanceController` wraps the law with the state a loop needs: the
current target (checked, clipped to the safety box, and reached at bounded speed), the
null-space posture (clipped to the joint limits and a stiffness bound), the last torque
for rate limiting, a watchdog that holds the current pose when targets stop, and the
guard's box fault when an external force pushes the TCP past the box's outside margin.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

import numpy as np

from robot_rl.config.sections import ControllerConfig
from robot_rl.control.commands import BadCommand, PostureLimits, log_rejection, posture_command
from robot_rl.control.guard import LawStats, TargetGuard
from robot_rl.control.safety import SafetyBox
from robot_rl.control.slew import PostureSlew
from robot_rl.control.transforms import orientation_error

log = logging.getLogger("robot_rl.control")

NULLSPACE_TORQUE_SHARE = 0.25  # of each joint's torque limit, at most, for the null-space posture term

# The law runs at 500-1000 Hz (50 times per env step in sim), on arrays of 6-7 numbers, where
# NumPy's per-call overhead is most of the cost: constants are built once, and clipping is
# np.minimum/np.maximum, which give np.clip's bits (NaN included) at a third of its cost.
_JJT_DAMPING = 1e-6 * np.eye(6)
_IDENTITY = {n: np.eye(n) for n in range(1, 13)}


def _clip(x: np.ndarray, low: np.ndarray | float, high: np.ndarray | float) -> np.ndarray:
    """``np.clip(x, low, high)``, bit for bit, cheaper on small arrays."""
    return np.minimum(np.maximum(x, low), high)


@dataclass(frozen=True)
class ArmState:
    """What the law needs from a backend each cycle (all in the base frame)."""

    q: np.ndarray  # (n,)
    dq: np.ndarray  # (n,)
    pos: np.ndarray  # (3,) TCP position
    quat: np.ndarray  # (4,) TCP orientation, w x y z
    jac: np.ndarray  # (6, n) TCP Jacobian: linear rows, then angular rows
    bias: np.ndarray  # (n,) compensation torque to add (gravity + Coriolis, or Coriolis only)


@dataclass(frozen=True)
class ImpedanceGains:
    """Per-axis gains and limits, precomputed from a ControllerConfig."""

    stiffness: np.ndarray  # (6,)
    damping: np.ndarray  # (6,)
    error_clip: np.ndarray  # (6,) metres then radians
    nullspace_stiffness: float
    nullspace_damping: float
    rest_posture: np.ndarray  # (n,)
    joint_damping: float
    torque_limits: np.ndarray  # (n,)
    max_torque_rate: float  # Nm/s

    @classmethod
    def from_config(cls, cfg: ControllerConfig) -> "ImpedanceGains":
        k = np.asarray(cfg.stiffness, dtype=np.float64)
        d = 2.0 * np.sqrt(k) if cfg.damping is None else np.asarray(cfg.damping, dtype=np.float64)
        kn = float(cfg.nullspace_stiffness)
        dn = 2.0 * np.sqrt(kn) if cfg.nullspace_damping is None else float(cfg.nullspace_damping)
        clip = np.concatenate([np.asarray(cfg.error_clip_mm) / 1000.0, np.asarray(cfg.error_clip_rad)])
        return cls(k, d, clip, kn, dn, np.asarray(cfg.rest_posture, dtype=np.float64),
                   float(cfg.joint_damping), np.asarray(cfg.torque_limits, dtype=np.float64),
                   float(cfg.max_torque_rate))


@dataclass
class LawOutput:
    """The commanded torques and the quantities tests and statistics look at."""

    tau: np.ndarray  # (n,) total torque to apply, bias included, saturated
    tau_cmd: np.ndarray  # (n,) rate-limited torque without bias (what a Franka is sent)
    force: np.ndarray  # (6,) commanded Cartesian wrench K e_c - D v
    error: np.ndarray  # (6,) unclipped pose error
    error_clipped: bool


def impedance_torque(arm: ArmState, target_pos: np.ndarray, target_quat: np.ndarray,
                     gains: ImpedanceGains, prev_tau_cmd: np.ndarray, dt: float) -> LawOutput:
    """One cycle of the Cartesian impedance law (see the module docstring)."""
    error = np.concatenate([target_pos - arm.pos, orientation_error(target_quat, arm.quat)])
    error_c = _clip(error, -gains.error_clip, gains.error_clip)
    jac, jac_t = arm.jac, arm.jac.T
    twist = jac @ arm.dq
    force = gains.stiffness * error_c - gains.damping * twist
    tau = jac_t @ force

    # N = I - J^T (J^+)^T with the damped right pseudo-inverse J^+ = J^T (J J^T + eps I)^-1
    # (a 6x6 solve is ~5x cheaper than an SVD-based pinv, which matters at 500-1000 Hz).
    n = arm.q.shape[0]
    eye = _IDENTITY[n] if n in _IDENTITY else np.eye(n)
    null_proj = eye - jac_t @ np.linalg.solve(jac @ jac_t + _JJT_DAMPING, jac)
    posture = gains.nullspace_stiffness * (gains.rest_posture - arm.q) - gains.nullspace_damping * arm.dq
    tau = tau + nullspace_budget(null_proj @ posture, gains.torque_limits) - gains.joint_damping * arm.dq

    limits = gains.torque_limits
    max_step = gains.max_torque_rate * dt
    tau_cmd = prev_tau_cmd + _clip(tau - prev_tau_cmd, -max_step, max_step)
    tau_cmd = _clip(tau_cmd, -limits, limits)
    total = _clip(tau_cmd + arm.bias, -limits, limits)
    return LawOutput(total, tau_cmd, force, error, bool((error_c != error).any()))


def nullspace_budget(tau_null: np.ndarray, torque_limits: np.ndarray) -> np.ndarray:
    """The null-space torque scaled down (as a whole, so it stays in the null space) to at
    most :data:`NULLSPACE_TORQUE_SHARE` of each joint's limit.

    Why: a posture far from the joints (a joint reset's first moments, or one clipped to
    the joint limits) would otherwise saturate joints, and a saturated joint breaks the
    projection: the posture then pushes the TCP, which the clipped spring cannot stop.
    """
    budget = NULLSPACE_TORQUE_SHARE * np.maximum(torque_limits, 1e-9)
    peak = float((np.abs(tau_null) / budget).max())
    return tau_null / peak if peak > 1.0 else tau_null


@dataclass
class ControllerStats(LawStats):
    """What the impedance controller refused, clipped and held, for status reports and tests."""

    rejected_postures: int = 0
    clipped_postures: int = 0
    nonfinite_torques: int = 0
    max_force: np.ndarray = field(default_factory=lambda: np.zeros(6))


class CartesianImpedanceController(TargetGuard):
    """The law plus a target, a safety box, rate-limit memory and a watchdog.

    Contract: nothing moves before :meth:`start` has been given the measured state; the
    first target is the measured pose. :meth:`set_target` checks the target
    (:mod:`robot_rl.control.commands`) and clips it to the box; the law's target then
    moves toward it at bounded speed (:mod:`robot_rl.control.slew`), so no sequence of
    targets at any rate can make the torque-rate limit push the arm out of the box; the
    null-space posture likewise (:class:`~robot_rl.control.slew.PostureSlew`). Targets,
    rejections, holds and the watchdog are :class:`~robot_rl.control.guard.TargetGuard`'s.
    A posture is clipped into the joint limits and its stiffness to
    ``max_posture_stiffness``. No method that takes a command raises.
    """

    def __init__(self, cfg: ControllerConfig, box: SafetyBox, watchdog: bool = True) -> None:
        super().__init__(cfg, box, ControllerStats(), watchdog)
        self.stats: ControllerStats
        self.base_gains = ImpedanceGains.from_config(cfg)
        self.gains = self.base_gains
        self.posture_limits = PostureLimits.from_config(cfg)
        base = self.base_gains
        self.posture_slew = PostureSlew(base.rest_posture, base.nullspace_stiffness, base.nullspace_damping,
                                        cfg.max_posture_speed, cfg.max_posture_stiffness_rate)
        self._posture_commanded = False
        self.prev_tau_cmd: np.ndarray | None = None
        self.last_output: LawOutput | None = None

    def start(self, arm: ArmState, now: float) -> None:
        """Adopt the measured pose as the target: the arm stays exactly where it is. A box fault
        starts over too: an arm still outside the box faults again in the first cycle."""
        self._adopt(arm.pos, arm.quat, now, holding=False)
        self.box_fault = None
        self.prev_tau_cmd = np.zeros_like(arm.q, dtype=np.float64)

    @property
    def posture_override(self) -> bool:
        """True while a posture from :meth:`set_posture` is commanded (the law may still be slewing to it)."""
        return self._posture_commanded

    def set_posture(self, q: object, stiffness: object = None) -> bool:
        """Pull the null space toward ``q`` with ``stiffness`` (Nm/rad); None restores the config.

        Only the null-space term changes: the Cartesian spring, its error clip, the box
        and the torque limits stay as they are, so the TCP keeps its target. ``q`` is
        clipped into the joint limits and ``stiffness`` to ``max_posture_stiffness``
        (counted); a malformed or non-finite one is rejected and counted, nothing
        changes, and False is returned. Never raises.
        """
        try:
            posture = posture_command(q, stiffness, self.posture_limits)
        except BadCommand as err:
            self.stats.rejected_postures += 1
            log_rejection(log, "posture", self.stats.rejected_postures, err, "the null space keeps its posture")
            return False
        self.stats.clipped_postures += int(posture.clipped)
        base = self.base_gains
        q = base.rest_posture if posture.q is None else posture.q
        k, d = base.nullspace_stiffness, base.nullspace_damping
        if posture.stiffness is not None:
            k, d = posture.stiffness, 2.0 * float(np.sqrt(posture.stiffness))
        self.posture_slew.set_goal(q, k, d)  # the law's posture moves there at bounded rates
        self._posture_commanded = posture.q is not None
        return True

    def _advance_posture(self, dt: float) -> None:
        """Move the law's null-space terms one cycle toward the commanded posture."""
        ps = self.posture_slew
        if ps.advance(dt):  # arrived with no posture commanded: its goal is the configured one
            self.gains = self.base_gains if ps.arrived and not self._posture_commanded else replace(
                self.base_gains, rest_posture=ps.q, nullspace_stiffness=ps.stiffness, nullspace_damping=ps.damping)

    def _on_watchdog(self) -> None:
        self.set_posture(None)  # whoever moved the posture is gone too

    def compute(self, arm: ArmState, now: float, dt: float) -> np.ndarray:
        """Torques for this cycle. Before :meth:`start`, only the compensation torque."""
        limits = self.gains.torque_limits
        if not self.started:
            return np.clip(np.nan_to_num(arm.bias), -limits, limits)
        self._guard(arm, now)
        if np.isfinite(arm.pos).all() and np.isfinite(arm.quat).all():
            self._watch_box(arm.pos, arm.quat, now)
        target_pos, target_quat = self.slew.advance(dt)
        self._advance_posture(dt)
        out = impedance_torque(arm, target_pos, target_quat, self.gains, self.prev_tau_cmd, dt)
        if not np.isfinite(out.tau).all():
            # Only a non-finite measured state can get here (every gain and target is checked):
            # send the last finite torque, rate-limited toward zero, never NaN.
            self.stats.nonfinite_torques += 1
            log.error("the law computed a non-finite torque from the measured state; torque ramps down")
            step = self.gains.max_torque_rate * dt
            tau_cmd = self.prev_tau_cmd - np.clip(self.prev_tau_cmd, -step, step)
            out = LawOutput(np.clip(tau_cmd, -limits, limits), tau_cmd, np.zeros(6), np.zeros(6), False)
        self.prev_tau_cmd = out.tau_cmd
        self.last_output = out
        self.stats.cycles += 1
        self.stats.error_clipped_cycles += int(out.error_clipped)
        np.maximum(self.stats.max_force, np.abs(out.force), out=self.stats.max_force)
        return out.tau
