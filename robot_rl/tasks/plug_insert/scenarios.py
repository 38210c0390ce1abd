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
from robot_rl.reward.scenarios import ScenarioDriver
from robot_rl.tasks.plug_insert.expert import PlugInsertExpert


class PlugInsertScenarios(ScenarioDriver):
    scenarios = {"insert_hold": 0.3, "mouth": 0.25, "turned": 0.2, "beside": 0.1, "random": 0.15}

    def __init__(self, env: gym.Env, collect: RewardCollectConfig, seed: int | None = None) -> None:
        super().__init__(env, collect, seed)
        self.expert: PlugInsertExpert = PlugInsertExpert(env, noise=0.0, seed=seed)

    def setup(self) -> None:
        self.expert.reset()
        p, m = self.task.params, self.collect.margin
        # how deep the tip may go below the board's top (negative: stays above it)
        self.max_depth = self.rng.uniform(-0.01, max(-0.01, p.insert_depth - m))
        turn = self.rng.uniform(0.1, 0.3) * self.rng.choice([-1.0, 1.0])
        self.expert.yaw_offset = turn if self.tag == "turned" else 0.0
        angle = self.rng.uniform(0.0, 2 * np.pi)
        near = p.plug_half_length + p.key_depth + p.clearance + 0.003
        radius = self.rng.uniform(near, max(near, p.board_half_size - p.plug_half_length))
        self.beside_offset = radius * np.array([np.cos(angle), np.sin(angle), 0.0])

    def plan(self) -> tuple[np.ndarray, float]:
        if self.tag == "random":
            return self.random_plan()
        tip, socket, tcp = self.task.plug_tip(), self.task.socket_top(), self.tcp()
        offset = tcp - tip
        if self.tag == "beside":
            spot = socket + self.beside_offset
            target_tip = spot + [0.0, 0.0, 0.01]
            if np.linalg.norm((spot - tip)[:2]) < 0.003:
                target_tip = spot - [0.0, 0.0, 0.005]  # press on the board
                self.hold_then_done()
            return target_tip + offset, 0.0
        target, grip = self.expert.plan()
        if self.tag == "insert_hold":
            self.hold_success()
            return target, grip
        if self.expert.phase == "insert":  # mouth: stop short of the bar; turned: the board stops it
            if self.tag == "mouth":
                floor = socket[2] - self.max_depth + offset[2]
                target = np.array([target[0], target[1], max(target[2], floor)])
            self.hold_then_done()
        return target, grip

    def full_action(self) -> np.ndarray:
        action = super().full_action()
        if self.tag != "random":
            action[5] = self.expert.turn()
        return action
