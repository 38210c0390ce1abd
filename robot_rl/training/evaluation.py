"""Deterministic evaluation on several seeded initial states.

Episode ``i`` resets with seed ``eval_seed + i``, so every evaluation of a run (and of
every run) sees the same set of different starts, and the policy acts with its mean
action. Evaluation uses its own env and no shared RNG, so it never changes what
training does next (a resumed run stays identical to an uninterrupted one).
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from robot_rl.agents.policy import Policy
from robot_rl.data.rollout import ActorLoop


@dataclass
class EvalResult:
    success_rate: float
    mean_return: float
    mean_length: float
    episodes: int

    def as_dict(self) -> dict[str, float]:
        return {"success_rate": self.success_rate, "return": self.mean_return, "length": self.mean_length}


class _Deterministic:
    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def act(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        return self.policy.act(obs, deterministic=True)


def evaluate(env: gym.Env, policy: Policy, episodes: int, seed: int) -> EvalResult:
    loop = ActorLoop(env, _Deterministic(policy))
    stats = []
    for i in range(episodes):
        loop.run_episode(seed=seed + i)
        stats.append(loop.last_episode)
    return EvalResult(success_rate=float(np.mean([s.success for s in stats])) if stats else 0.0,
                      mean_return=float(np.mean([s.ret for s in stats])) if stats else 0.0,
                      mean_length=float(np.mean([s.length for s in stats])) if stats else 0.0,
                      episodes=len(stats))
