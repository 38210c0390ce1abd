"""Scripted experts for the sim tasks, the task-agnostic part: the source of demonstrations.

An expert reads the measured TCP pose and the task's privileged state vector
(``task.task_state()``: say an object's position, or a peg tip and its hole), decides a
base-frame motion and a gripper command, and returns it in the wrapped env's action
space through :func:`robot_rl.envs.outer_action`, so its actions are exactly what a
policy (or a human) would send. It needs nothing but the ``RobotEnv`` API, so the same
expert drives an env over MuJoCo directly or an env over ROS topics fed by the sim
node. ``noise`` adds Gaussian noise to the motion part, for more varied demonstrations;
the expert corrects it on the next step. ``aim_offset`` (metres, base frame; zero by
default) shifts every position target it steers to: an expert that misjudges where the
object is, as :mod:`robot_rl.data.imperfect_demos` uses for its failed episodes.

Each task's expert lives in its folder (``robot_rl/tasks/<task>/expert.py``) and is
handed out by ``SimTask.make_expert``.
"""

from __future__ import annotations

import abc

import gymnasium as gym
import numpy as np

from robot_rl.envs.wrappers import outer_action


class ScriptedExpert(abc.ABC):
    """Contract: ``reset()`` at the start of each episode, then ``act(obs)`` every step."""

    def __init__(self, env: gym.Env, noise: float = 0.0, seed: int | None = None) -> None:
        self.env = env
        self.base = env.unwrapped
        self.params = self.base.cfg.task.params
        self.noise = float(noise)
        self.rng = np.random.default_rng(seed)
        self.scale = self.base.scale[:3]
        self.aim_offset = np.zeros(3)

    def tcp(self) -> np.ndarray:
        return self.base.robot_state.tcp_pos

    def task_state(self) -> np.ndarray:
        return np.asarray(self.base.task.task_state(), dtype=np.float64)

    def reset(self) -> None:
        """Forget the previous episode's phase."""

    @abc.abstractmethod
    def plan(self) -> tuple[np.ndarray, float]:
        """Base-frame position target for the TCP, and a gripper command (+1 close, -1 open, 0 keep)."""

    @abc.abstractmethod
    def goal_distance(self) -> float:
        """How far the tool is from what it should be working on (metres)."""

    def full_action(self) -> np.ndarray:
        """The next action as a 7-D base-frame RobotEnv action (motion, rotation, gripper)."""
        target, grip = self.plan()
        target = target + self.aim_offset
        # Steer the commanded target (not the measured pose) to the goal: the env
        # accumulates deltas onto its target, so this is a plain set-point.
        current, _ = self.base.target_pose
        move = np.clip((target - current) / self.scale, -1.0, 1.0)
        if self.noise > 0:
            move = np.clip(move + self.rng.normal(0.0, self.noise, 3), -1.0, 1.0)
        return np.concatenate([move, np.zeros(3), [grip]])

    def act(self, obs: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """The next action in the wrapped env's action space."""
        return outer_action(self.env, self.full_action())
