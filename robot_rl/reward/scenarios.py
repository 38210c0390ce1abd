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


class InsertionScenarios(ScenarioDriver):
    """The insertion scenarios two tasks share, planned from a part's tip and an opening's top.

    ``insert_hold`` (the expert inserts and holds), ``mouth`` (the expert, stopped short
    of the bar at ``max_depth`` below the board's top), ``beside`` (the tip pressed on the
    board at ``beside_offset`` from the opening) and ``random``. Any other tag follows the
    expert into its ``insert`` phase and holds wherever the board stops it (a part turned
    off its slot, say). A subclass sets ``self.expert`` (with ``plan()`` and ``phase``), says
    where the tip and the opening are, and draws the episode's ``max_depth`` and
    ``beside_offset`` in ``setup`` with :meth:`draw_max_depth` and :meth:`draw_beside_offset`.
    """

    max_depth = 0.0
    beside_offset = np.zeros(3)

    def tip_and_opening(self) -> tuple[np.ndarray, np.ndarray]:
        """The inserted part's tip and the top centre of the opening it goes into (world, m)."""
        raise NotImplementedError

    def draw_max_depth(self, insert_depth: float) -> None:
        """How deep the tip may go below the board's top in ``mouth`` (negative: stays above it)."""
        self.max_depth = self.rng.uniform(-0.01, max(-0.01, insert_depth - self.collect.margin))

    def draw_beside_offset(self, near: float, far: float) -> None:
        """A spot on the board between ``near`` and ``far`` metres from the opening."""
        angle = self.rng.uniform(0.0, 2 * np.pi)
        radius = self.rng.uniform(near, far)
        self.beside_offset = radius * np.array([np.cos(angle), np.sin(angle), 0.0])

    def plan(self) -> tuple[np.ndarray, float]:
        if self.tag == "random":
            return self.random_plan()
        tip, opening = self.tip_and_opening()
        offset = self.tcp() - tip
        if self.tag == "beside":
            spot = opening + self.beside_offset
            target_tip = spot + [0.0, 0.0, 0.01]
            if np.linalg.norm((spot - tip)[:2]) < 0.003:
                target_tip = spot - [0.0, 0.0, 0.005]  # press on the board
                self.hold_then_done()
            return target_tip + offset, 0.0
        target, grip = self.expert.plan()
        if self.tag == "insert_hold":
            self.hold_success()
            return target, grip
        if self.expert.phase == "insert":
            if self.tag == "mouth":  # stop short of the bar
                floor = opening[2] - self.max_depth + offset[2]
                target = np.array([target[0], target[1], max(target[2], floor)])
            self.hold_then_done()
        return target, grip
