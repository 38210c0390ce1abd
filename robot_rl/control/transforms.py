"""Rotation helpers on ``(w, x, y, z)`` quaternions, rotation vectors and RPY angles.

Plain NumPy so that the same code runs in the MuJoCo backend, on a real robot's torque
loop and in tests. Quaternions are normalised on the way in where it matters; the
rotation vector of a quaternion always takes the short way round (|angle| <= pi).

The impedance law calls these at every control cycle (500-1000 Hz, and 50 times per env
step in sim), where NumPy's per-call overhead on 4-vectors was most of its cost. So a
float64 array's components are taken as Python floats: the same IEEE double operations in
the same order, hence the same bits (a NaN stays a NaN), at a fraction of the cost of NumPy
scalars (tests/control/test_fast_paths.py). Any other input (lists, float32) keeps NumPy's
own arithmetic and result types.
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


def _float64(*arrays: object) -> bool:
    """Every one of ``arrays`` is a float64 ndarray (its ``tolist()`` floats compute the same bits)."""
    return all(type(a) is np.ndarray and a.dtype == np.float64 for a in arrays)


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a * b`` (apply ``b`` first, then ``a``)."""
    if _float64(a, b):
        a, b = a.tolist(), b.tolist()
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array([
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ])


def quat_conj(q: np.ndarray) -> np.ndarray:
    if _float64(q):
        w, x, y, z = q.tolist()
        return np.array([w, -x, -y, -z])
    return np.array([q[0], -q[1], -q[2], -q[3]], dtype=np.float64)


def quat_to_rotvec(q: np.ndarray) -> np.ndarray:
    """Axis * angle of ``q``, taking the shorter of the two equivalent rotations."""
    q = np.asarray(q, dtype=np.float64)
    if q[0] < 0:
        q = -q
    v = q[1:]
    s = math.sqrt(v.dot(v))  # what np.linalg.norm computes for a float64 vector, without its wrapper
    if s < 1e-9:
        return 2.0 * v
    angle = 2.0 * np.arctan2(s, q[0])
    return v / s * angle


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
    (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) = np.asarray(m, dtype=np.float64).tolist()
    tr = m00 + m11 + m22
    if tr > 0:
        s = np.sqrt(tr + 1.0) * 2
        q = [0.25 * s, (m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s]
    elif m00 > m11 and m00 > m22:
        s = np.sqrt(1.0 + m00 - m11 - m22) * 2
        q = [(m21 - m12) / s, 0.25 * s, (m01 + m10) / s, (m02 + m20) / s]
    elif m11 > m22:
        s = np.sqrt(1.0 + m11 - m00 - m22) * 2
        q = [(m02 - m20) / s, (m01 + m10) / s, 0.25 * s, (m12 + m21) / s]
    else:
        s = np.sqrt(1.0 + m22 - m00 - m11) * 2
        q = [(m10 - m01) / s, (m02 + m20) / s, (m12 + m21) / s, 0.25 * s]
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
