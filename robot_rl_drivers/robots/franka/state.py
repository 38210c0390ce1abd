"""From libfranka's RobotState to what robot_rl's law and interfaces use.

libfranka hands out matrices as flat, column-major arrays: ``O_T_EE`` (16 values, the
end-effector pose in the base frame) and ``Model.zero_jacobian`` (42 values, a 6x7
Jacobian, linear rows first). Reading them row-major gives the transpose, a bug that
looks plausible in a plot, so the conversions live here, tested once.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from robot_rl.control import ArmState
from robot_rl.control.transforms import mat_to_quat


def pose_from_column_major(o_t_ee: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Position (3,) and quaternion (w, x, y, z) of a flat column-major 4x4 transform."""
    m = np.asarray(o_t_ee, dtype=np.float64).reshape(4, 4, order="F")
    return m[:3, 3].copy(), mat_to_quat(m[:3, :3])


def jacobian_from_column_major(flat: Sequence[float]) -> np.ndarray:
    """The (6, 7) Jacobian of libfranka's flat column-major 42 values."""
    return np.asarray(flat, dtype=np.float64).reshape(6, 7, order="F")


def arm_state(state: Any, model: Any) -> ArmState:
    """What the impedance law needs this cycle.

    ``bias`` is the Coriolis vector only: the Franka compensates gravity itself, and
    adding ``model.gravity`` here would double it.
    """
    pos, quat = pose_from_column_major(state.O_T_EE)
    return ArmState(
        q=np.asarray(state.q, dtype=np.float64),
        dq=np.asarray(state.dq, dtype=np.float64),
        pos=pos,
        quat=quat,
        jac=jacobian_from_column_major(model.zero_jacobian(state)),
        bias=np.asarray(model.coriolis(state), dtype=np.float64),
    )
