"""Base policies for the tests, loaded by their entry points (``base_policies:drift``), as a person's own would be.

:func:`drift` acts on the arm's own state only (the first entries of ``state``, which every
observation mode has), so the same base serves state and pixel configs: a small, smooth,
deterministic motion with the gripper open. Its :data:`POISON` switch makes every N-th
action NaN *after* it loaded (the load check samples observations and must pass): what a
base that goes wrong at run time does.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

#: ``every``: 0 for clean actions, N for NaN on every N-th call; ``calls``: actions given so far.
POISON = {"every": 0, "calls": 0, "poisoned": 0}


class Drift:
    """A deterministic base: ``0.4 * sin(3 * state[:n-1])`` on the motion dims, the gripper open (-1)."""

    def __init__(self, obs_space: gym.spaces.Dict, action_space: gym.spaces.Box) -> None:
        self.n = int(np.prod(action_space.shape))

    def act(self, obs) -> np.ndarray:
        POISON["calls"] += 1
        if POISON["every"] and POISON["calls"] % POISON["every"] == 0:
            POISON["poisoned"] += 1
            return np.full(self.n, np.nan, np.float32)
        state = np.nan_to_num(np.asarray(obs["state"], np.float64)[: self.n - 1], posinf=0.0, neginf=0.0)
        return np.append(0.4 * np.sin(3.0 * state), -1.0).astype(np.float32)


def drift(obs_space: gym.spaces.Dict, action_space: gym.spaces.Box) -> Drift:
    return Drift(obs_space, action_space)


def other(obs_space: gym.spaces.Dict, action_space: gym.spaces.Box) -> Drift:
    """The same motion, reversed: a different base, for the tests that a residual keeps to its own."""
    base = Drift(obs_space, action_space)
    act = base.act
    base.act = lambda obs: np.append(-act(obs)[:-1], -1.0).astype(np.float32)  # type: ignore[method-assign]
    return base
