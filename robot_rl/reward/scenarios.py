"""Sim drivers that make the frames a reward classifier must get right: the task-agnostic part.

A classifier trained only on clean expert runs sees the start and the finished task and
little in between, and then calls a near miss a success. Each episode here plays one
*scenario*, picked at random, built on the task's scripted expert (with noise on its
motions): holding success, stopping just short of it, failing in the ways the task
fails, and ``random`` (smoothed random motion and gripper commands). Each task names
its scenarios in its own folder (``robot_rl/tasks/<task>/scenarios.py``, a
:class:`ScenarioDriver` subclass) and a task object hands its driver out through
``SimTask.make_scenarios``.

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
from robot_rl.sim.experts import ScriptedExpert

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
