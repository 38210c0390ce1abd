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
from robot_rl.reward.scenarios import ScenarioDriver
from robot_rl.tasks.peg_insert.expert import PegInsertExpert


class PegInsertScenarios(ScenarioDriver):
    scenarios = {"insert_hold": 0.35, "mouth": 0.3, "beside": 0.2, "random": 0.15}

    def __init__(self, env: gym.Env, collect: RewardCollectConfig, seed: int | None = None) -> None:
        super().__init__(env, collect, seed)
        self.expert = PegInsertExpert(env, noise=0.0, seed=seed)

    def setup(self) -> None:
        self.expert.reset()
        p, m = self.task.params, self.collect.margin
        # how deep the tip may go below the board's top (negative: stays above it)
        self.max_depth = self.rng.uniform(-0.01, max(-0.01, p.insert_depth - m))
        angle = self.rng.uniform(0.0, 2 * np.pi)
        radius = self.rng.uniform(p.peg_half_width + p.clearance + 0.003, p.board_half_size - p.peg_half_width)
        self.beside_offset = radius * np.array([np.cos(angle), np.sin(angle), 0.0])

    def plan(self) -> tuple[np.ndarray, float]:
        if self.tag == "random":
            return self.random_plan()
        tip, hole, tcp = self.task.peg_tip(), self.task.hole_top(), self.tcp()
        offset = tcp - tip
        if self.tag == "beside":
            spot = hole + self.beside_offset
            target_tip = spot + [0.0, 0.0, 0.01]
            if np.linalg.norm((spot - tip)[:2]) < 0.003:
                target_tip = spot - [0.0, 0.0, 0.005]  # press on the board
                self.hold_then_done()
            return target_tip + offset, 0.0
        target, grip = self.expert.plan()
        if self.tag == "insert_hold":
            self.hold_success()
            return target, grip
        if self.expert.phase == "insert":  # mouth: stop short of the bar
            floor = hole[2] - self.max_depth + offset[2]
            target = np.array([target[0], target[1], max(target[2], floor)])
            self.hold_then_done()
        return target, grip
