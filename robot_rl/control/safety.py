"""The workspace box: every target pose is clipped to it before the controller sees it.

The box bounds the TCP position and the orientation relative to a nominal orientation
(the reset orientation), as per-axis bounds on the base-frame rotation vector
``r`` with ``q = exp(r) * q_center``. Policies, humans and reset routines all go through
the same box, so none of them can send the arm outside it. An external force still can
push the arm out, or turn the hand out: :meth:`SafetyBox.excursion` measures how far in
position and :meth:`SafetyBox.rot_excursion` in orientation, and a law faults past
``outside_margin`` or ``outside_margin_rad`` (:class:`~robot_rl.control.guard.TargetGuard`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from robot_rl.control.transforms import quat_conj, quat_mul, quat_normalize, quat_to_rotvec, rotvec_to_quat


@dataclass(frozen=True)
class SafetyBox:
    pos_low: np.ndarray
    pos_high: np.ndarray
    rot_low: np.ndarray
    rot_high: np.ndarray
    rot_center: np.ndarray  # (w, x, y, z)
    outside_margin: float = 0.05  # metres the measured TCP may be pushed outside before the law faults
    outside_margin_rad: float = 0.35  # radians the measured TCP may be turned outside before the law faults

    @classmethod
    def from_config(cls, robot_cfg: "RobotConfig") -> "SafetyBox":  # noqa: F821
        from robot_rl.control.transforms import rpy_to_quat

        ws = robot_cfg.workspace
        return cls(np.asarray(ws.pos_low, float), np.asarray(ws.pos_high, float),
                   np.asarray(ws.rot_low, float), np.asarray(ws.rot_high, float),
                   rpy_to_quat(np.asarray(robot_cfg.reset_rpy, float)), float(ws.outside_margin_m),
                   float(ws.outside_margin_rad))

    @functools.cached_property
    def _inside_cos(self) -> float:
        """cos(a / 2), ``a`` the tightest orientation bound: a quaternion whose |dot| with the
        centre is at least this is turned by less than ``a``, so inside on every axis."""
        tightest = float(np.min(np.concatenate([-self.rot_low, self.rot_high])))
        return math.cos(tightest / 2.0) if tightest > 0.0 else 2.0  # a zero bound: always the full check

    def relative_rotvec(self, quat: np.ndarray) -> np.ndarray:
        """Rotation vector of ``quat`` relative to the box's centre orientation."""
        return quat_to_rotvec(quat_mul(quat_normalize(quat), quat_conj(self.rot_center)))

    def clip(self, pos: np.ndarray, quat: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        """The nearest pose inside the box, and whether clipping changed anything."""
        pos = np.asarray(pos, dtype=np.float64)
        clipped_pos = np.clip(pos, self.pos_low, self.pos_high)
        r = self.relative_rotvec(quat)
        clipped_r = np.clip(r, self.rot_low, self.rot_high)
        changed = bool(np.any(clipped_pos != pos) or np.any(clipped_r != r))
        if np.any(clipped_r != r):
            quat = quat_mul(rotvec_to_quat(clipped_r), self.rot_center)
        return clipped_pos, quat_normalize(quat), changed

    def contains(self, pos: np.ndarray, quat: np.ndarray | None = None, tol: float = 1e-6) -> bool:
        pos = np.asarray(pos, dtype=np.float64)
        inside = bool(np.all(pos >= self.pos_low - tol) and np.all(pos <= self.pos_high + tol))
        if quat is not None:
            r = self.relative_rotvec(quat)
            inside &= bool(np.all(r >= self.rot_low - tol) and np.all(r <= self.rot_high + tol))
        return inside

    def excursion(self, pos: np.ndarray) -> tuple[float, str]:
        """How far ``pos`` lies outside the box (metres, 0 inside), and on which side of which
        axis (``"+x"``: beyond ``pos_high[0]``); the axis of the largest excursion wins."""
        pos = np.asarray(pos, dtype=np.float64)
        over = pos - self.pos_high
        under = self.pos_low - pos
        if not (over.max() > 0.0 or under.max() > 0.0):  # inside (or NaN: nothing to say about a non-pose)
            return 0.0, ""  # the common case, checked cheaply: this runs every control cycle
        worst = np.maximum(over, under)
        i = int(np.nanargmax(worst))
        return float(worst[i]), ("+" if over[i] >= under[i] else "-") + "xyz"[i]

    def rot_excursion(self, quat: np.ndarray) -> tuple[float, str]:
        """How far ``quat`` is turned outside the box's orientation bounds (radians of the
        relative rotation vector, 0 inside), and on which side of which axis (``"+rz"``);
        the axis of the largest excursion wins. A non-finite or zero quaternion: 0 (nothing
        to say about a non-pose; the law's own checks handle it)."""
        q = finite_quat(quat)
        if q is None or abs(float(q @ self.rot_center)) >= self._inside_cos:
            return 0.0, ""  # the common case, checked cheaply: turned less than the tightest bound
        r = self.relative_rotvec(q)
        over = r - self.rot_high
        under = self.rot_low - r
        if not (over.max() > 0.0 or under.max() > 0.0):
            return 0.0, ""
        worst = np.maximum(over, under)
        i = int(np.nanargmax(worst))
        return float(worst[i]), ("+" if over[i] >= under[i] else "-") + ("rx", "ry", "rz")[i]


def finite_quat(quat: object) -> np.ndarray | None:
    """``quat`` normalised, when it is a 4-vector that normalises (finite, not ~0), else None."""
    try:
        q = np.asarray(quat, dtype=np.float64)
        return quat_normalize(q) if q.shape == (4,) else None
    except (TypeError, ValueError):
        return None
