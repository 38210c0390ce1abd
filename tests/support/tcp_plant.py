"""A TCP that follows a commanded twist: the simplest arm an admittance law can drive.

The TCP's velocity follows the commanded twist with a first-order lag (``lag_s``; 0:
at once), its position integrates that velocity, and it reads back with optional
Gaussian position noise. A ``blocked`` TCP does not move at all (an arm against a wall
or in a protective stop). The F/T reading is what the caller puts in ``wrench``: the
contact force the sensor would read.
"""

from __future__ import annotations

import numpy as np

from robot_rl.control.admittance import TcpState
from robot_rl.control.transforms import quat_mul, quat_normalize, rotvec_to_quat


class TcpPlant:
    def __init__(self, pos: np.ndarray, quat: np.ndarray, lag_s: float = 0.0, noise_m: float = 0.0,
                 seed: int = 0) -> None:
        self.pos = np.array(pos, dtype=np.float64)
        self.quat = quat_normalize(np.array(quat, dtype=np.float64))
        self.vel = np.zeros(6)
        self.lag_s = float(lag_s)
        self.noise_m = float(noise_m)
        self.blocked = False
        self.wrench: np.ndarray | None = np.zeros(6)
        self.rng = np.random.default_rng(seed)

    def state(self) -> TcpState:
        """What the law measures: the (noisy) pose and the current F/T reading."""
        pos = self.pos + self.rng.normal(0.0, self.noise_m, 3) if self.noise_m > 0 else self.pos.copy()
        return TcpState(pos, self.quat.copy(), None if self.wrench is None else np.array(self.wrench, float))

    def step(self, twist: np.ndarray, dt: float) -> None:
        """Follow ``twist`` for ``dt`` seconds."""
        if self.blocked:
            self.vel = np.zeros(6)
            return
        twist = np.asarray(twist, dtype=np.float64)
        self.vel = twist.copy() if self.lag_s <= 0 else self.vel + (twist - self.vel) * (1 - np.exp(-dt / self.lag_s))
        self.pos = self.pos + self.vel[:3] * dt
        self.quat = quat_normalize(quat_mul(rotvec_to_quat(self.vel[3:] * dt), self.quat))
