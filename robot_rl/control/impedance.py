"""The Cartesian impedance law, shared by the MuJoCo arm and real torque-level backends.

``impedance_torque`` is the one function every torque backend calls each control cycle:

    tau = J^T (K e_clipped - D v) + N (K_n (q_rest - q) - D_n dq) - d_j dq   (rate-limited)
          + bias                                                            (compensation)

``e`` is the pose error (position, then base-frame rotation vector), clipped per axis
so that a far-away or wrong target can never command more than ``K * clip`` of spring
force. ``N`` projects the posture term into the null space of the task Jacobian so it
never fights the Cartesian spring. The change of the commanded torque per cycle is
limited (as Franka's own rate limiter requires). ``bias`` is what the backend must add
for gravity and Coriolis compensation: MuJoCo's ``qfrc_bias`` in sim, the Coriolis
vector alone on a Franka (which compensates gravity itself).

:class:`CartesianImpedanceController` wraps the law with the state a loop needs: the
current target (clipped to the safety box, non-finite targets rejected), the last
torque for rate limiting, and a watchdog that holds the current pose when targets stop.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

import numpy as np

from robot_rl.config.sections import ControllerConfig
from robot_rl.control.safety import SafetyBox
from robot_rl.control.transforms import orientation_error, quat_normalize

log = logging.getLogger("robot_rl.control")


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
    error_c = np.clip(error, -gains.error_clip, gains.error_clip)
    twist = arm.jac @ arm.dq
    force = gains.stiffness * error_c - gains.damping * twist
    tau = arm.jac.T @ force

    # N = I - J^T (J^+)^T with the damped right pseudo-inverse J^+ = J^T (J J^T + eps I)^-1
    # (a 6x6 solve is ~5x cheaper than an SVD-based pinv, which matters at 500-1000 Hz).
    jjt = arm.jac @ arm.jac.T + 1e-6 * np.eye(6)
    null_proj = np.eye(arm.q.shape[0]) - arm.jac.T @ np.linalg.solve(jjt, arm.jac)
    posture = gains.nullspace_stiffness * (gains.rest_posture - arm.q) - gains.nullspace_damping * arm.dq
    tau = tau + null_proj @ posture - gains.joint_damping * arm.dq

    max_step = gains.max_torque_rate * dt
    tau_cmd = prev_tau_cmd + np.clip(tau - prev_tau_cmd, -max_step, max_step)
    tau_cmd = np.clip(tau_cmd, -gains.torque_limits, gains.torque_limits)
    total = np.clip(tau_cmd + arm.bias, -gains.torque_limits, gains.torque_limits)
    return LawOutput(total, tau_cmd, force, error, bool(np.any(error_c != error)))


def check_posture(q: object, stiffness: object, joints: int) -> tuple[np.ndarray | None, float | None]:
    """``(posture, stiffness)`` as floats, or ValueError: the rule of ``Robot.set_posture``.

    Every backend applies it before a posture reaches its controller (the 1 kHz loop, a
    ros2_control topic, the actor's topic), so one bad value is refused where it enters.
    """
    posture = None
    if q is not None:
        try:
            posture = np.asarray(q, dtype=np.float64)
        except (TypeError, ValueError):
            posture = np.full(0, np.nan)
        if posture.shape != (joints,) or not np.all(np.isfinite(posture)):
            raise ValueError(f"a posture needs {joints} finite joint angles, got {' '.join(repr(q).split())}")
    k = None
    if stiffness is not None:
        try:
            k = float(stiffness)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            k = float("nan")
        if not np.isfinite(k) or k < 0.0:
            raise ValueError(f"a null-space stiffness must be finite and >= 0, got {stiffness!r}")
    return posture, k


@dataclass
class ControllerStats:
    cycles: int = 0
    rejected_targets: int = 0
    box_clipped_targets: int = 0
    error_clipped_cycles: int = 0
    watchdog_holds: int = 0
    max_force: np.ndarray = field(default_factory=lambda: np.zeros(6))


class CartesianImpedanceController:
    """The law plus a target, a safety box, rate-limit memory and a watchdog.

    Contract: nothing moves before :meth:`start` has been given the measured state; the
    first target is the measured pose. :meth:`set_target` clips to the safety box and
    rejects non-finite targets (logged; the previous target stays). If no target has
    arrived for ``watchdog_s`` (on the caller's clock), the controller holds the pose
    it measures at that moment until a new target arrives.
    """

    def __init__(self, cfg: ControllerConfig, box: SafetyBox, watchdog: bool = True) -> None:
        self.cfg = cfg
        self.box = box
        self.base_gains = ImpedanceGains.from_config(cfg)
        self.gains = self.base_gains
        self.watchdog_enabled = watchdog
        self.stats = ControllerStats()
        self.target_pos: np.ndarray | None = None
        self.target_quat: np.ndarray | None = None
        self.last_target_time = 0.0
        self.holding = False
        self._hold_next = False
        self.prev_tau_cmd: np.ndarray | None = None
        self.last_output: LawOutput | None = None

    @property
    def started(self) -> bool:
        return self.target_pos is not None

    def start(self, arm: ArmState, now: float) -> None:
        """Adopt the measured pose as the target: the arm stays exactly where it is."""
        self.target_pos = np.array(arm.pos, dtype=np.float64)
        self.target_quat = quat_normalize(arm.quat)
        self.prev_tau_cmd = np.zeros_like(arm.q, dtype=np.float64)
        self.last_target_time = now
        self.holding = False
        self._hold_next = False

    def set_target(self, pos: np.ndarray, quat: np.ndarray, now: float) -> bool:
        """Accept a new target (clipped to the box); False if it was rejected."""
        pos = np.asarray(pos, dtype=np.float64)
        quat = np.asarray(quat, dtype=np.float64)
        if pos.shape != (3,) or quat.shape != (4,) or not (np.all(np.isfinite(pos)) and np.all(np.isfinite(quat))):
            return self._reject(f"a non-finite or malformed target pose (pos={pos.tolist()}, quat={quat.tolist()})")
        if np.linalg.norm(quat) < 1e-6:
            return self._reject("a target with a zero quaternion")
        if not self.started:
            log.error("target received before the controller knows the current pose; ignored")
            return False
        pos, quat, clipped = self.box.clip(pos, quat)
        self.stats.box_clipped_targets += int(clipped)
        self.target_pos, self.target_quat = pos, quat
        self.last_target_time = now
        self.holding = False
        self._hold_next = False
        return True

    def _reject(self, what: str) -> bool:
        self.stats.rejected_targets += 1
        log.error("rejected %s; holding the current pose", what)
        self._hold_next = self.started
        return False

    @property
    def posture_override(self) -> bool:
        """True while :meth:`set_posture` has replaced the configured null-space posture."""
        return self.gains is not self.base_gains

    def set_posture(self, q: np.ndarray | None, stiffness: float | None = None) -> None:
        """Pull the null space toward ``q`` with ``stiffness`` (Nm/rad); None restores the config.

        Only the null-space term changes: the Cartesian spring, its error clip, the box
        and the torque limits stay as they are, so the TCP keeps its target. Raises
        ValueError for a malformed or non-finite posture or stiffness (nothing changes).
        """
        base = self.base_gains
        posture, k = check_posture(q, stiffness, base.rest_posture.shape[0])
        if posture is None:
            self.gains = base
        elif k is None:
            self.gains = replace(base, rest_posture=posture)
        else:
            self.gains = replace(base, rest_posture=posture, nullspace_stiffness=k, nullspace_damping=2.0 * np.sqrt(k))

    def hold(self, arm: ArmState, now: float) -> None:
        """Make the measured pose the target, exactly: holding never moves the arm."""
        self.target_pos, self.target_quat = np.array(arm.pos, dtype=np.float64), quat_normalize(arm.quat)
        self.last_target_time = now
        self.holding = True
        self._hold_next = False

    def compute(self, arm: ArmState, now: float, dt: float) -> np.ndarray:
        """Torques for this cycle. Before :meth:`start`, only the compensation torque."""
        if not self.started:
            return np.clip(arm.bias, -self.gains.torque_limits, self.gains.torque_limits)
        if self._hold_next:
            self.hold(arm, now)
        elif (self.watchdog_enabled and not self.holding
                and now - self.last_target_time > self.cfg.watchdog_s):
            log.warning("no target for %.3f s: holding the current pose", now - self.last_target_time)
            self.stats.watchdog_holds += 1
            self.hold(arm, now)
            self.set_posture(None)  # whoever moved the posture is gone too
        out = impedance_torque(arm, self.target_pos, self.target_quat, self.gains, self.prev_tau_cmd, dt)
        self.prev_tau_cmd = out.tau_cmd
        self.last_output = out
        self.stats.cycles += 1
        self.stats.error_clipped_cycles += int(out.error_clipped)
        np.maximum(self.stats.max_force, np.abs(out.force), out=self.stats.max_force)
        return out.tau
