"""PickCube's reward-recording scenarios: the frames a lift classifier must get right.

A classifier trained only on clean expert runs sees "cube on the table" and "cube high
in the air" and little in between, and then calls a cube lifted 4 cm (the bar is 5 cm)
a success. So each episode plays one of:

``success_hold``  the expert lifts the cube past the bar and holds it there;
``lift_below``    grasped and lifted to a height below the bar (0 = grasped, not lifted);
``lift_above``    grasped and lifted to just above the bar;
``miss_lift``     the grasp misses the cube by a few cm and the empty gripper rises;
``random``        smoothed random motion and gripper commands.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from robot_rl.config.reward import RewardCollectConfig
from robot_rl.reward.scenarios import ScenarioDriver
from robot_rl.tasks.pick_cube.expert import PickCubeExpert


class PickCubeScenarios(ScenarioDriver):
    scenarios = {"success_hold": 0.35, "lift_below": 0.2, "lift_above": 0.2, "miss_lift": 0.15, "random": 0.1}

    def __init__(self, env: gym.Env, collect: RewardCollectConfig, seed: int | None = None) -> None:
        super().__init__(env, collect, seed)
        self.expert = PickCubeExpert(env, noise=0.0, seed=seed)

    def setup(self) -> None:
        self.expert.reset()
        p, m = self.task.params, self.collect.margin
        h, lift = p.cube_half_size, p.lift_height
        bottom = 0.0
        if self.tag == "lift_below":
            bottom = 0.0 if self.rng.random() < 0.25 else self.rng.uniform(0.003, max(0.003, lift - m))
        elif self.tag == "lift_above":
            bottom = self.rng.uniform(lift + m, lift + m + 0.03)
        elif self.tag == "miss_lift":
            bottom = self.rng.uniform(0.0, lift + 0.05)
            angle = self.rng.uniform(0.0, 2 * np.pi)
            self.miss_offset = self.rng.uniform(0.03, 0.05) * np.array([np.cos(angle), np.sin(angle), 0.0])
            self.miss_phase = "approach"
            self.descend_steps = 0
        self.hold_z = bottom + h + 0.002  # TCP height that puts the grasped cube's bottom at ``bottom``

    def plan(self) -> tuple[np.ndarray, float]:
        if self.tag == "random":
            return self.random_plan()
        if self.tag == "miss_lift":
            return self._plan_miss()
        target, grip = self.expert.plan()
        if self.expert.phase != "lift":
            return target, grip
        if self.tag == "success_hold":
            self.hold_success()
            return target, grip
        target = np.array([target[0], target[1], min(target[2], self.hold_z)])
        self.hold_then_done()
        return target, grip

    def _plan_miss(self) -> tuple[np.ndarray, float]:
        cube, tcp = self.task.cube_pos(), self.tcp()
        spot = cube + self.miss_offset
        if self.miss_phase == "approach":
            target = spot + [0.0, 0.0, PickCubeExpert.hover]
            if np.linalg.norm((target - tcp)[:2]) < 0.01:
                self.miss_phase, self.spot = "descend", spot
            return target, -1.0
        if self.miss_phase == "descend":
            target = np.array([self.spot[0], self.spot[1], cube[2] + 0.002])
            self.descend_steps += 1
            if abs(tcp[2] - target[2]) < 0.01 or self.descend_steps > 10:  # a finger may land on the cube
                self.miss_phase = "close"
            return target, -1.0
        if self.miss_phase == "close":
            self._counter += 1
            if self._counter >= 4:
                self.miss_phase, self._counter = "lift", 0
            return np.array([tcp[0], tcp[1], cube[2] + 0.002]), 1.0
        self.hold_then_done()
        return np.array([self.spot[0], self.spot[1], self.hold_z]), 1.0
