"""Rotation helpers on ``(w, x, y, z)`` quaternions, rotation vectors and RPY angles.

Plain NumPy so that the same code runs in the MuJoCo backend, on a real robot's torque
loop and in tests. Quaternions are normalised on the way in where it matters; the
rotation vector of a quaternion always takes the short way round (|angle| <= pi).
"""

from __future__ import annotations

import math

import numpy as np

_EPS = 1e-12


def quat_normalize(q: np.ndarray, min_norm: float = _EPS) -> np.ndarray:
    """``q / |q|``; a non-finite quaternion, or one shorter than ``min_norm``, is a ValueError.

    Any finite quaternion normalises, however large or small: ``math.hypot`` neither
    overflows nor underflows (a finite 1e200 quaternion has a norm), and one whose norm
    is beyond the float range (~1.8e308) is scaled by its largest component first.
    """
    q = np.asarray(q, dtype=np.float64)
    n = math.hypot(*q)
    if math.isfinite(n) and n >= min_norm:
        return q / n
    if math.isinf(n) and np.all(np.isfinite(q)):
        unit = q / np.max(np.abs(q))
        return unit / math.hypot(*unit)
    raise ValueError(f"cannot normalise quaternion {q}")


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a * b`` (apply ``b`` first, then ``a``)."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array([
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ])


def quat_conj(q: np.ndarray) -> np.ndarray:
    return np.array([q[0], -q[1], -q[2], -q[3]], dtype=np.float64)


def quat_to_rotvec(q: np.ndarray) -> np.ndarray:
    """Axis * angle of ``q``, taking the shorter of the two equivalent rotations."""
    q = np.asarray(q, dtype=np.float64)
    if q[0] < 0:
        q = -q
    s = np.linalg.norm(q[1:])
    if s < 1e-9:
        return 2.0 * q[1:]
    angle = 2.0 * np.arctan2(s, q[0])
    return q[1:] / s * angle


def rotvec_to_quat(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    angle = np.linalg.norm(v)
    if angle < 1e-9:
        q = np.array([1.0, 0.5 * v[0], 0.5 * v[1], 0.5 * v[2]])
        return q / np.linalg.norm(q)
    axis = v / angle
    return np.concatenate([[np.cos(angle / 2.0)], np.sin(angle / 2.0) * axis])


def quat_to_mat(q: np.ndarray) -> np.ndarray:
    w, x, y, z = quat_normalize(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def mat_to_quat(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr > 0:
        s = np.sqrt(tr + 1.0) * 2
        q = [0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2
        q = [(m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
    elif m[1, 1] > m[2, 2]:
        s = np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2
        q = [(m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s]
    else:
        s = np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2
        q = [(m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    return q / np.linalg.norm(q)


def rpy_to_quat(rpy: np.ndarray) -> np.ndarray:
    """Roll, pitch, yaw (extrinsic x, y, z; i.e. R = Rz(yaw) Ry(pitch) Rx(roll))."""
    r, p, y = (0.5 * float(a) for a in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    ])


def quat_to_rpy(q: np.ndarray) -> np.ndarray:
    w, x, y, z = quat_normalize(q)
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.array([roll, pitch, yaw])


def orientation_error(target: np.ndarray, current: np.ndarray) -> np.ndarray:
    """Rotation vector (base frame) that takes ``current`` to ``target``."""
    return quat_to_rotvec(quat_mul(target, quat_conj(current)))


def slerp(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
    """Spherical interpolation from ``a`` (t=0) to ``b`` (t=1), the short way round."""
    a, b = quat_normalize(a), quat_normalize(b)
    dot = float(np.dot(a, b))
    if dot < 0.0:
        b, dot = -b, -dot
    if dot > 0.9995:
        return quat_normalize(a + t * (b - a))
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    return (np.sin((1 - t) * theta) * a + np.sin(t * theta) * b) / np.sin(theta)
