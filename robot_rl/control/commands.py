"""What a command that can move the arm must look like before anything applies it.

Every command entry point (``Robot.command`` and ``Robot.set_posture`` of every backend,
the controller, the controller node's core, the actor's topic robot) turns its raw input
into checked values through these functions, so one rule holds on every channel:

* a pose is 3 finite floats and a quaternion of 4 finite floats that is not zero; the
  quaternion is normalised without overflowing (``|q|`` of 1e300 is fine);
* a gripper opening is one finite number, clipped to ``[0, 1]``;
* a posture is ``n`` finite joint angles, clipped into the joint limits, with a finite
  stiffness ``>= 0`` clipped to the configured bound.

Only real numbers count as numbers: a vector is a numpy array of an integer or float
dtype, or a list or tuple of Python ints and floats (or numpy integer and float scalars);
a scalar is one of those, alone. Nothing is coerced: numeric strings (``'0.5'``), bools,
complex values (whose imaginary part a cast would drop), masked arrays (whose mask a cast
would ignore) and arrays of bool, complex, object, string, bytes or any other dtype are
refused, because a command that only becomes numbers by conversion says something its
sender did not check. Anything else (strings, bytes, ragged or nested lists, dicts, NaN,
inf, wrong lengths) raises :class:`BadCommand` too, which entry points catch, count and
log: they never raise it further and never apply part of a command whose other part was bad.
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


#: numpy dtype kinds that are real numbers: signed and unsigned integers, floats.
REAL_KINDS = frozenset("iuf")


def is_real_scalar(value: Any) -> bool:
    """A Python int or float, or a numpy integer or float scalar; not a bool, not complex."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _real_array(value: Any, size: int, what: str) -> np.ndarray:
    """``value`` as it stands, if it is real numbers in a form this module accepts; else BadCommand."""
    if isinstance(value, np.ma.MaskedArray):
        raise BadCommand(f"{what} must be {size} numbers, got a masked array (its mask would be ignored)")
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in REAL_KINDS:
            raise BadCommand(f"{what} must be {size} real numbers, got an array of dtype {value.dtype}")
        return value
    if not isinstance(value, (list, tuple)):
        raise BadCommand(f"{what} must be {size} numbers, got {type(value).__name__} {_short(value)}")
    if len(value) != size:  # before looking at the items: a huge list costs nothing
        raise BadCommand(f"{what} must be {size} numbers, got {len(value)} items: {_short(value)}")
    for item in value:
        if not is_real_scalar(item):
            raise BadCommand(f"{what} must be {size} numbers, got {type(item).__name__} {_short(item)} in "
                             f"{_short(value)}")
    return np.array(value, dtype=object)


def finite_vector(value: Any, size: int, what: str) -> np.ndarray:
    """``value`` as a float64 vector of ``size`` finite real numbers, or BadCommand (nothing coerced)."""
    checked = _real_array(value, size, what)
    try:
        vec = checked.astype(np.float64)
    except (TypeError, ValueError, OverflowError):  # a Python int past float64's range
        raise BadCommand(f"{what} must be {size} numbers, got {_short(value)}") from None
    if vec.shape != (size,):
        raise BadCommand(f"{what} must be {size} numbers, got shape {vec.shape}: {_short(value)}")
    if not np.all(np.isfinite(vec)):
        raise BadCommand(f"{what} must be finite, got {_short(vec.tolist())}")
    return vec


def finite_number(value: Any, what: str) -> float:
    """``value`` as one finite float, or BadCommand (bools, strings, complex values and masked
    values are not numbers; a 0-d array of an integer or float dtype is)."""
    if isinstance(value, np.ndarray) and value.shape == () and not isinstance(value, np.ma.MaskedArray) \
            and value.dtype.kind in REAL_KINDS:
        value = value[()]
    if not is_real_scalar(value):
        raise BadCommand(f"{what} must be a number, got {type(value).__name__} {_short(value)}")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):  # a Python int past float64's range
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
