"""Yaw arithmetic shared by PlugInsert's parts: the plug's yaw is its tool x axis about base z."""

from __future__ import annotations

import numpy as np

from robot_rl.control.transforms import quat_to_mat

YAW_RANGE_TOLERANCE = 0.02  # rad: a reset (or a backward goal) lands within this of the yaw range


def wrap_angle(angle: float) -> float:
    """``angle`` in (-pi, pi]."""
    return float(np.pi - (np.pi - angle) % (2 * np.pi))


def mat_yaw(mat: np.ndarray) -> float:
    """Yaw of a rotation matrix's x axis about the base z axis."""
    return float(np.arctan2(mat[1, 0], mat[0, 0]))


def quat_yaw(quat: np.ndarray) -> float:
    """Yaw of a tool orientation (w x y z) about the base z axis."""
    return mat_yaw(quat_to_mat(quat))


def turn_action(current: float, goal: float, scale: float) -> float:
    """The normalised ``rz`` action that turns a commanded yaw ``current`` toward ``goal`` (base frame)."""
    return float(np.clip(wrap_angle(goal - current) / scale, -1.0, 1.0))
