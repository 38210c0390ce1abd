"""Sim drivers that make the frames a reward classifier must get right.

A classifier trained only on clean expert runs sees "cube on the table" and "cube high
in the air" and little in between, and then calls a cube lifted 4 cm (the bar is 5 cm) a
success. Each episode here plays one *scenario*, picked at random, built on the task's
scripted expert (with noise on its motions):

PickCube
    ``success_hold``  the expert lifts the cube past the bar and holds it there;
    ``lift_below``    grasped and lifted to a height below the bar (0 = grasped, not lifted);
    ``lift_above``    grasped and lifted to just above the bar;
    ``miss_lift``     the grasp misses the cube by a few cm and the empty gripper rises;
    ``random``        smoothed random motion and gripper commands.
PegInsert
    ``insert_hold``   the expert inserts the peg and holds it;
    ``mouth``         the peg stops at the hole's mouth or partly in, short of the bar;
    ``beside``        the peg presses on the board next to the hole;
    ``random``        as above.

Held near-success states stay ``reward.collect.margin`` metres away from the success
boundary; frames on the way there cross it, and every frame is labelled by ground truth
whatever the scenario intended. Contract (as for any recording driver): ``reset()`` after
each ``env.reset()``, then ``act(obs)`` per step; ``tag`` names the scenario and ``done``
turns true once the scenario has been played out.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from robot_rl.config.reward import RewardCollectConfig
from robot_rl.sim.experts import PegInsertExpert, PickCubeExpert, ScriptedExpert

SETTLE_STEPS = 8  # steps to reach a held target before the hold starts counting
RANDOM_STEPS = 25  # length of a random-motion episode


class ScenarioDriver(ScriptedExpert):
    """Picks a scenario per episode; subclasses plan the motion for each."""

    scenarios: dict[str, float] = {}

    def __init__(self, env: gym.Env, collect: RewardCollectConfig, seed: int | None = None) -> None:
        super().__init__(env, noise=collect.expert_noise, seed=seed)
        self.task = self.base.task  # a sim task: scenarios read its ground truth
        self.expert: ScriptedExpert | None = None
        self.collect = collect
        self.tag = ""
        self.done = False
        self._counter = 0
        self._random_move = np.zeros(3)
        self._random_grip = -1.0

    @property
    def tags(self) -> list[str]:
        return list(self.scenarios)

    def reset(self) -> None:
        names = list(self.scenarios)
        weights = np.asarray([self.scenarios[n] for n in names], dtype=float)
        self.tag = names[int(self.rng.choice(len(names), p=weights / weights.sum()))]
        self.done = False
        self._counter = 0
        self._random_move = np.zeros(3)
        self._random_grip = -1.0
        self.setup()

    def setup(self) -> None:
        """Scenario parameters for the new episode (``self.tag`` is set)."""

    def hold_then_done(self) -> None:
        """Count steps in the final phase; done after settling plus ``hold_steps``."""
        self._counter += 1
        self.done = self._counter >= SETTLE_STEPS + self.collect.hold_steps

    def hold_success(self) -> None:
        """Count steps in success; done after ``hold_steps`` of them."""
        if self.task.success():
            self._counter += 1
        self.done = self._counter >= max(1, self.collect.hold_steps)

    def random_plan(self) -> tuple[np.ndarray, float]:
        """Smoothed random motion around the current target, with sticky gripper commands."""
        self._counter += 1
        self.done = self._counter >= RANDOM_STEPS
        current, _ = self.base.target_pose
        self._random_move = 0.7 * self._random_move + 0.3 * self.rng.normal(0.0, 1.0, 3) * self.scale
        if self.rng.random() < 0.1:
            self._random_grip = -self._random_grip
        return current + 3.0 * self._random_move, self._random_grip

    def goal_distance(self) -> float:
        return self.expert.goal_distance() if self.expert is not None else 0.0


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


_DRIVERS = {"PickCube": PickCubeScenarios, "PegInsert": PegInsertScenarios}


def make_scenario_driver(env: gym.Env, collect: RewardCollectConfig, seed: int | None = None) -> ScenarioDriver:
    """The hard-case driver for the env's sim task."""
    name = env.unwrapped.task.name
    if name not in _DRIVERS:
        raise ValueError(f"no reward-frame scenarios for task {name}")
    return _DRIVERS[name](env, collect, seed)
