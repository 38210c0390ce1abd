"""From ur_rtde's readings to what robot_rl's admittance law and interfaces use.

A UR reports poses as ``[x, y, z, rx, ry, rz]``: a position in metres and a rotation
*vector* (axis times angle, radians) in the base frame; robot_rl uses ``(w, x, y, z)``
quaternions. ``getActualTCPForce()`` is the wrench at the TCP in base-frame coordinates
(force N, then torque Nm), which is what :class:`~robot_rl.control.admittance.TcpState`
takes. The conversions live here, tested once.

Readings are input: the library hands over lists of floats, but a value that is not
``n`` finite numbers (NaN, inf, a short list) must neither crash the loop nor reach the
law as if it were a pose. :func:`vector` turns any reading into ``n`` floats and says
whether it was usable; an unusable one becomes NaN, which the law counts
(``nonfinite_states``) and answers by ramping the commanded twist to zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from robot_rl.control.admittance import TcpState
from robot_rl.control.transforms import quat_to_rotvec, rotvec_to_quat

MAX_READING = 1e6  # no UR reading (m, rad, N, Nm, rad/s) comes near this; beyond it the value is garbage
MAX_CLOCK_S = 1e10  # the UR's clock (s since its controller started) likewise
UNREADABLE = -99  # the code of a robot or safety mode reading that is not an integer


def vector(value: Any, size: int) -> tuple[np.ndarray, bool]:
    """``value`` as ``size`` float64s and whether it was ``size`` finite, sane numbers (NaN-filled if not)."""
    try:
        vec = np.array(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return np.full(size, np.nan), False
    if vec.shape != (size,):
        return np.full(size, np.nan), False
    ok = bool(np.all(np.isfinite(vec)) and np.all(np.abs(vec) < MAX_READING))
    return (vec, True) if ok else (np.full(size, np.nan), False)


def code(value: Any, default: int = UNREADABLE) -> int:
    """A robot or safety mode reading as an int (``default`` if it is not one)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return default
    return int(number) if np.isfinite(number) and number == int(number) else default


def pose_from_ur(pose: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Position (3,) and quaternion (w, x, y, z) of a UR pose ``[x, y, z, rx, ry, rz]``."""
    p = np.asarray(pose, dtype=np.float64)
    return p[:3].copy(), rotvec_to_quat(p[3:6])


def ur_pose(pos: np.ndarray, quat: np.ndarray) -> list[float]:
    """A UR pose ``[x, y, z, rx, ry, rz]`` (rotation vector) of a position and a quaternion."""
    return [float(v) for v in np.concatenate([np.asarray(pos, dtype=np.float64), quat_to_rotvec(quat)])]


@dataclass(frozen=True)
class Reading:
    """One cycle's RTDE readings, checked (:func:`read`)."""

    timestamp: float  # the UR's clock (s since its controller started); NaN if unreadable or absurd
    pose: np.ndarray  # (6,) [x y z rx ry rz]
    twist: np.ndarray  # (6,) measured TCP speed
    wrench: np.ndarray  # (6,) F/T reading at the TCP, base frame
    q: np.ndarray  # (6,)
    dq: np.ndarray  # (6,)
    safety_mode: int  # UNREADABLE if not an integer
    robot_mode: int
    pose_ok: bool  # pose usable (the law gets NaN otherwise)
    wrench_ok: bool
    ok: bool  # every field usable

    def tcp(self, fresh_wrench: bool) -> TcpState:
        """What the law needs; ``fresh_wrench`` False hands it no new F/T sample (``wrench=None``)."""
        if self.pose_ok:
            pos, quat = pose_from_ur(self.pose)
        else:
            pos, quat = np.full(3, np.nan), np.full(4, np.nan)
        wrench = (self.wrench.copy() if self.wrench_ok else np.full(6, np.nan)) if fresh_wrench else None
        return TcpState(pos=pos, quat=quat, wrench=wrench)


def read(receive: Any) -> Reading:
    """Everything a cycle needs from an ``rtde_receive.RTDEReceiveInterface``, checked field by field.

    Library exceptions propagate (the caller treats them as a lost connection).
    """
    ts_raw = receive.getTimestamp()
    try:
        timestamp = float(ts_raw)
    except (TypeError, ValueError, OverflowError):
        timestamp = float("nan")
    if not (np.isfinite(timestamp) and 0.0 <= timestamp < MAX_CLOCK_S):
        timestamp = float("nan")
    pose, pose_ok = vector(receive.getActualTCPPose(), 6)
    twist, twist_ok = vector(receive.getActualTCPSpeed(), 6)
    wrench, wrench_ok = vector(receive.getActualTCPForce(), 6)
    q, q_ok = vector(receive.getActualQ(), 6)
    dq, dq_ok = vector(receive.getActualQd(), 6)
    safety, robot = code(receive.getSafetyMode()), code(receive.getRobotMode())
    ok = bool(np.isfinite(timestamp) and pose_ok and twist_ok and wrench_ok and q_ok and dq_ok
              and UNREADABLE not in (safety, robot))
    return Reading(timestamp, pose, twist, wrench, q, dq, safety, robot, pose_ok, wrench_ok, ok)
