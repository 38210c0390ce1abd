"""The simulated intervener: a stand-in for the person at the SpaceMouse, for sim and CI.

It is an :class:`~robot_rl.interfaces.InputDevice`, so the whole intervention path
(:class:`~robot_rl.envs.intervention.HumanIntervention`, flags, both buffers, statistics)
runs exactly as with a human. It watches the robot state and the task's privileged state and takes over with
the scripted expert when the policy stalls or drifts away, under the rules of
:class:`~robot_rl.config.input.SimulatedInterventionConfig`. Its twist is the expert's
motion in the base frame, normalised to [-1, 1], as a SpaceMouse's would be.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

import gymnasium as gym
import numpy as np

from robot_rl.config.input import InterventionConfig
from robot_rl.interfaces import InputCommand, InputDevice
from robot_rl.sim.experts import ScriptedExpert

#: Builds the task's scripted expert on an env: ``(env, noise, seed) -> expert``.
ExpertFactory = Callable[[gym.Env, float, int], ScriptedExpert]


class SimulatedIntervener(InputDevice):
    """Contract: ``make_expert(env, noise, seed)`` returns the task's scripted expert on ``env``
    (the caller looks it up: the env may run over topics, where there is no sim task object)."""

    name = "simulated"

    def __init__(self, cfg: InterventionConfig, env: gym.Env, make_expert: ExpertFactory) -> None:
        self.cfg = cfg.simulated
        self.env = env
        self.base = env.unwrapped
        self.expert = make_expert(env, self.cfg.noise, self.cfg.seed)
        self.rng = np.random.default_rng(self.cfg.seed)
        self._episode = -1
        self.total_takeovers = 0
        self._new_episode()

    def _new_episode(self) -> None:
        self._episode = self.base.episode_count
        self.history: deque[np.ndarray] = deque(maxlen=self.cfg.stall_steps)
        self.takeovers = 0
        self.remaining = 0
        self.steps = 0
        self.reason = ""

    def _triggered(self) -> str:
        c = self.cfg
        if self.steps <= c.grace_steps or self.takeovers >= c.max_per_episode:
            return ""
        if len(self.history) == self.history.maxlen:
            points = np.array(self.history)
            if np.linalg.norm(points.max(axis=0) - points.min(axis=0)) < c.stall_distance:
                return "stall"
        if self.expert.goal_distance() > c.drift_distance:
            return "drift"
        if c.probability > 0 and self.rng.random() < c.probability:
            return "random"
        return ""

    def read(self) -> InputCommand:
        if self.base.episode_count != self._episode:
            self._new_episode()
        self.steps += 1
        self.history.append(self.base.robot_state.tcp_pos.copy())
        if self.remaining == 0:
            self.reason = self._triggered()
            if not self.reason:
                return InputCommand()
            self.takeovers += 1
            self.total_takeovers += 1
            self.remaining = self.cfg.takeover_steps
            self.expert.reset()
            self.history.clear()
        self.remaining -= 1
        full = self.expert.full_action()
        grip = full[6]
        return InputCommand(twist=full[:6], intervene=True,
                            close_gripper=True if grip > 0.5 else False if grip < -0.5 else None)
