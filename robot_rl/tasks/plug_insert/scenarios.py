"""PlugInsert's reward-recording scenarios: the frames an insertion classifier must get right.

``insert_hold``   the expert inserts the plug and holds it;
``mouth``         the plug, lined up, stops at the slot's mouth or partly in, short of the bar;
``turned``        the plug over the slot but turned 0.1-0.3 rad off, pressed on the board:
                  from above it looks almost inserted, and it can never go in;
``beside``        the plug presses on the board next to the slot;
``random``        smoothed random motion.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from robot_rl.config.reward import RewardCollectConfig
from robot_rl.reward.scenarios import InsertionScenarios
from robot_rl.tasks.plug_insert.expert import PlugInsertExpert


class PlugInsertScenarios(InsertionScenarios):
    scenarios = {"insert_hold": 0.3, "mouth": 0.25, "turned": 0.2, "beside": 0.1, "random": 0.15}

    def __init__(self, env: gym.Env, collect: RewardCollectConfig, seed: int | None = None) -> None:
        super().__init__(env, collect, seed)
        self.expert: PlugInsertExpert = PlugInsertExpert(env, noise=0.0, seed=seed)
        self.expert.retry_on_rim = False  # hold a push where the board stops it

    def setup(self) -> None:
        self.expert.reset()
        p = self.task.params
        self.draw_max_depth(p.insert_depth)
        turn = self.rng.uniform(0.1, 0.3) * self.rng.choice([-1.0, 1.0])
        self.expert.yaw_offset = turn if self.tag == "turned" else 0.0
        near = p.plug_half_length + p.key_depth + p.clearance + 0.003
        self.draw_beside_offset(near, max(near, p.board_half_size - p.plug_half_length))

    def tip_and_opening(self) -> tuple[np.ndarray, np.ndarray]:
        return self.task.plug_tip(), self.task.socket_top()

    def full_action(self) -> np.ndarray:
        action = super().full_action()
        if self.tag != "random":
            action[5] = self.expert.turn()
        return action
