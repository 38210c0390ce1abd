"""The target the law pulls toward moves toward the commanded one at a bounded speed.

Why: the torque-rate limit (which a Franka requires) turns a target that flips faster
than the limit can follow into a stuck torque: far targets alternating every one to
three control cycles left the commanded torque pushing one way while the arm drifted
out of the workspace box (44 mm in 6 s). Moving the law's target toward the commanded
target at no more than ``max_target_speed`` (m/s) and ``max_target_rot_speed`` (rad/s)
makes the law's input continuous whatever the command rate, so the rate limit never
binds on target changes and the TCP follows a target that stays inside the box (the
slewed target lies between two targets the box already clipped: on the straight line
for the position, on the shortest rotation for the orientation).

At the default 1 m/s a policy's 2 cm step target is reached in 10 ms of its 100 ms
step; 0.5 m/s slowed learning measurably (PickCube from state, one seed: 8,000 env steps
to 95% eval success instead of 5,000), and much faster would let a target change
outrun the torque-rate limit again (about 2 mm per 2 ms cycle at the default stiffness).
"""

from __future__ import annotations

import numpy as np

from robot_rl.control.transforms import orientation_error, quat_mul, quat_normalize, rotvec_to_quat


def same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """``np.array_equal(a, b)`` for arrays (or None): asked every control cycle, where
    ``array_equal``'s wrapper cost more than the comparison."""
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and bool((a == b).all())


def limit_norm(vec: np.ndarray, max_norm: float) -> np.ndarray:
    """``vec`` scaled down so that its Euclidean norm is at most ``max_norm``."""
    norm = float(np.linalg.norm(vec))
    return vec if norm <= max_norm else vec * (max_norm / norm)


class TargetSlew:
    """The law's target (``pos``, ``quat``) chasing the commanded ``goal`` at bounded speed."""

    def __init__(self, max_speed: float, max_rot_speed: float) -> None:
        self.max_speed = float(max_speed)
        self.max_rot_speed = float(max_rot_speed)
        self.pos: np.ndarray | None = None
        self.quat: np.ndarray | None = None
        self.goal_pos: np.ndarray | None = None
        self.goal_quat: np.ndarray | None = None

    @property
    def arrived(self) -> bool:
        """The target is on its goal: most cycles, so :meth:`advance` then does nothing."""
        return same(self.pos, self.goal_pos) and same(self.quat, self.goal_quat)

    def clear(self) -> None:
        """No target at all (after a controller restart): the next one is a measured pose."""
        self.pos = self.quat = self.goal_pos = self.goal_quat = None

    def jump_to(self, pos: np.ndarray, quat: np.ndarray) -> None:
        """Target and goal both at this pose (start and hold: the measured pose, no motion)."""
        self.pos = np.array(pos, dtype=np.float64)
        self.quat = quat_normalize(np.array(quat, dtype=np.float64))
        self.goal_pos, self.goal_quat = self.pos.copy(), self.quat.copy()

    def set_goal(self, pos: np.ndarray, quat: np.ndarray) -> None:
        """A new commanded target, already checked and clipped to the box."""
        self.goal_pos, self.goal_quat = np.array(pos, dtype=np.float64), np.array(quat, dtype=np.float64)

    def advance(self, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """Move the target one cycle of ``dt`` seconds toward the goal; returns the new target."""
        assert self.pos is not None and self.goal_pos is not None
        if self.arrived:
            return self.pos, self.quat
        self.pos = self.pos + limit_norm(self.goal_pos - self.pos, self.max_speed * dt)
        turn = orientation_error(self.goal_quat, self.quat)
        if np.any(turn != 0.0):
            step = limit_norm(turn, self.max_rot_speed * dt)
            arrived = step is turn
            self.quat = self.goal_quat.copy() if arrived else quat_normalize(quat_mul(rotvec_to_quat(step), self.quat))
        return self.pos, self.quat


class PostureSlew:
    """The null-space posture, stiffness and damping the law uses, chasing the commanded ones.

    Why: postures alternating faster than the torque-rate limit can follow broke the
    null-space projection the same way alternating targets did (a flood of postures at
    the joint limits moved the TCP over 0.6 m out of the box), while one posture held
    still never moves the TCP. The posture moves toward the commanded one at no more than
    ``max_speed`` rad/s per joint, and stiffness and damping change at bounded rates, so
    the null-space torque changes slowly whatever arrives. A joint reset's posture moves
    slower than that anyway.
    """

    def __init__(self, q: np.ndarray, stiffness: float, damping: float, max_speed: float,
                 max_stiffness_rate: float) -> None:
        self.q, self.stiffness, self.damping = np.array(q, dtype=np.float64), float(stiffness), float(damping)
        self.goal_q, self.goal_stiffness, self.goal_damping = self.q.copy(), self.stiffness, self.damping
        self.max_speed = float(max_speed)
        self.max_stiffness_rate = float(max_stiffness_rate)
        # Damping is 2*sqrt(stiffness) for a commanded posture: its rate follows from the stiffness rate.
        self.max_damping_rate = 2.0 * float(np.sqrt(max_stiffness_rate))

    @property
    def arrived(self) -> bool:
        return (self.stiffness == self.goal_stiffness and self.damping == self.goal_damping
                and same(self.q, self.goal_q))

    def set_goal(self, q: np.ndarray, stiffness: float, damping: float) -> None:
        self.goal_q, self.goal_stiffness, self.goal_damping = (np.array(q, dtype=np.float64), float(stiffness),
                                                               float(damping))

    def advance(self, dt: float) -> bool:
        """One cycle toward the goal; False when nothing changed (already there)."""
        if self.arrived:
            return False
        step = self.max_speed * dt
        self.q = self.q + np.clip(self.goal_q - self.q, -step, step)
        self.stiffness = _toward(self.stiffness, self.goal_stiffness, self.max_stiffness_rate * dt)
        self.damping = _toward(self.damping, self.goal_damping, self.max_damping_rate * dt)
        return True


def _toward(value: float, goal: float, step: float) -> float:
    return goal if abs(goal - value) <= step else value + float(np.sign(goal - value)) * step
