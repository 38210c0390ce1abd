"""What a command that can move the arm must look like before anything applies it.

Every command entry point (``Robot.command`` and ``Robot.set_posture`` of every backend,
the controller, the controller node's core, the actor's topic robot) turns its raw input
into checked values through these functions, so one rule holds on every channel:

* a pose is 3 finite floats and a quaternion of 4 finite floats that is not zero; the
  quaternion is normalised without overflowing (``|q|`` of 1e300 is fine);
* a gripper opening is one finite number, clipped to ``[0, 1]``;
* a posture is ``n`` finite joint angles, clipped into the joint limits, with a finite
  stiffness ``>= 0`` clipped to the configured bound.

Anything else (strings, bytes, ragged or nested lists, dicts, NaN, inf, wrong lengths)
raises :class:`BadCommand`, which entry points catch, count and log: they never raise it
further and never apply part of a command whose other part was bad.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from robot_rl.control.transforms import quat_normalize


class BadCommand(ValueError):
    """A command that cannot be used; the message says which part and why."""


def log_rejection(logger: logging.Logger, what: str, count: int, reason: object, consequence: str = "") -> None:
    """Log the 1st rejection of a kind and then every 100th: a 1 kHz flood of bad commands
    is counted in full but must not flood the log (or slow the loop that logs it)."""
    if count == 1 or count % 100 == 0:
        tail = f"; {consequence}" if consequence else ""
        logger.error("rejected a %s (%d so far): %s%s", what, count, reason, tail)


def _short(value: Any, limit: int = 80) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def finite_vector(value: Any, size: int, what: str) -> np.ndarray:
    """``value`` as a float64 vector of ``size`` finite numbers, or BadCommand."""
    if isinstance(value, (str, bytes, bytearray, dict)):
        raise BadCommand(f"{what} must be {size} numbers, got {_short(value)}")
    try:
        vec = np.array(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise BadCommand(f"{what} must be {size} numbers, got {_short(value)}") from None
    if vec.shape != (size,):
        raise BadCommand(f"{what} must be {size} numbers, got shape {vec.shape}: {_short(value)}")
    if not np.all(np.isfinite(vec)):
        raise BadCommand(f"{what} must be finite, got {_short(vec.tolist())}")
    return vec


def finite_number(value: Any, what: str) -> float:
    """``value`` as one finite float, or BadCommand (bools and strings are not numbers)."""
    if isinstance(value, (bool, str, bytes, bytearray)) or value is None:
        raise BadCommand(f"{what} must be a number, got {_short(value)}")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise BadCommand(f"{what} must be a number, got {_short(value)}") from None
    if not np.isfinite(number):
        raise BadCommand(f"{what} must be finite, got {number}")
    return number


def unit_quaternion(value: Any) -> np.ndarray:
    """A finite, non-zero quaternion normalised to unit length (w, x, y, z); any finite
    magnitude normalises (:func:`~robot_rl.control.transforms.quat_normalize`)."""
    quat = finite_vector(value, 4, "a target quaternion")
    try:
        return quat_normalize(quat)
    except ValueError:
        raise BadCommand(f"a target quaternion must not be zero, got {_short(quat.tolist())}") from None


def pose_command(pos: Any, quat: Any) -> tuple[np.ndarray, np.ndarray]:
    """A checked target pose: (position (3,), unit quaternion (4,))."""
    return finite_vector(pos, 3, "a target position"), unit_quaternion(quat)


def gripper_command(value: Any) -> float:
    """A checked gripper opening fraction in ``[0, 1]`` (0 closed, 1 open)."""
    return float(np.clip(finite_number(value, "a gripper opening"), 0.0, 1.0))


def robot_command(pos: Any, quat: Any, gripper: Any) -> tuple[np.ndarray, np.ndarray, float | None]:
    """The arguments of ``Robot.command`` checked as one command: (position, unit quaternion,
    gripper opening or None to leave the gripper). A bad gripper value refuses the pose too."""
    pos, quat = pose_command(pos, quat)
    return pos, quat, None if gripper is None else gripper_command(gripper)


@dataclass(frozen=True)
class PostureLimits:
    """The bounds every null-space posture is clipped into (from the controller config)."""

    low: np.ndarray  # (n,) rad
    high: np.ndarray  # (n,) rad
    max_stiffness: float  # Nm/rad

    @classmethod
    def from_config(cls, cfg: Any) -> "PostureLimits":
        """From a :class:`~robot_rl.config.sections.ControllerConfig`."""
        return cls(np.asarray(cfg.joint_low, dtype=np.float64), np.asarray(cfg.joint_high, dtype=np.float64),
                   float(cfg.max_posture_stiffness))


@dataclass(frozen=True)
class Posture:
    """A checked posture command: ``q=None`` means the configured posture and gains."""

    q: np.ndarray | None
    stiffness: float | None  # None: keep the configured null-space stiffness
    clipped: bool  # whether the joint limits or the stiffness bound changed it


def posture_command(q: Any, stiffness: Any, limits: PostureLimits) -> Posture:
    """A checked posture: finite joints clipped into the limits, stiffness clipped to the bound.

    A stiffness is checked even with ``q=None`` (which restores the configured posture
    and gains, so a valid stiffness is then unused): a malformed command is refused whole.
    """
    k = None
    clipped = False
    if stiffness is not None:
        k = finite_number(stiffness, "a null-space stiffness")
        if k < 0.0:
            raise BadCommand(f"a null-space stiffness must be >= 0, got {k}")
        if k > limits.max_stiffness:
            k, clipped = limits.max_stiffness, True
    if q is None:
        return Posture(None, None, False)
    posture = finite_vector(q, limits.low.shape[0], "a posture")
    clipped_q = np.clip(posture, limits.low, limits.high)
    return Posture(clipped_q, k, clipped or bool(np.any(clipped_q != posture)))
