"""PegInsert's reward-recording scenarios: the frames an insertion classifier must get right.

``insert_hold``   the expert inserts the peg and holds it;
``mouth``         the peg stops at the hole's mouth or partly in, short of the bar;
``beside``        the peg presses on the board next to the hole;
``random``        smoothed random motion.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from robot_rl.config.reward import RewardCollectConfig
from robot_rl.reward.scenarios import InsertionScenarios
from robot_rl.tasks.peg_insert.expert import PegInsertExpert


class PegInsertScenarios(InsertionScenarios):
    scenarios = {"insert_hold": 0.35, "mouth": 0.3, "beside": 0.2, "random": 0.15}

    def __init__(self, env: gym.Env, collect: RewardCollectConfig, seed: int | None = None) -> None:
        super().__init__(env, collect, seed)
        self.expert = PegInsertExpert(env, noise=0.0, seed=seed)
        self.expert.retry_on_rim = False  # hold a push where the board stops it

    def setup(self) -> None:
        self.expert.reset()
        p = self.task.params
        self.draw_max_depth(p.insert_depth)
        self.draw_beside_offset(p.peg_half_width + p.clearance + 0.003, p.board_half_size - p.peg_half_width)

    def tip_and_opening(self) -> tuple[np.ndarray, np.ndarray]:
        return self.task.peg_tip(), self.task.hole_top()
