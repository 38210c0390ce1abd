"""Backward tasks: what a second policy learns so that the forward task needs no reset.

A backward task runs on the same MuJoCo world as its forward task and undoes it, ending
in a state the forward task may start from. Its goal is drawn at random in the forward
task's randomization range, so practice keeps visiting varied initial states instead of
one. Success is sim ground truth here; on hardware it would be a second reward
classifier trained on pictures of the reset scene.

This module is the task-agnostic part: :class:`BackwardTask`, :class:`BackwardSpec`
(when a scene is a valid start for either direction: :meth:`BackwardSpec.forward_ready`,
:meth:`BackwardSpec.backward_ready`; the forward-backward loop in
:mod:`robot_rl.training.reset_free` uses it to decide what runs next) and
:class:`BackwardExpert`, the scripted backward expert that records demonstrations for
the backward policy in the env's action space. Each task's own backward task, rules and
expert live in its folder (``robot_rl/tasks/<task>/backward.py``); a task object hands
its rules out through ``SimTask.make_backward``.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, Callable

import gymnasium as gym
import numpy as np

from robot_rl.config import Config
from robot_rl.envs.task import EpisodeTask
from robot_rl.envs.wrappers import outer_action

if TYPE_CHECKING:
    from robot_rl.sim.task import SimTask


class BackwardTask(EpisodeTask, abc.ABC):
    """The backward task of ``forward``, on the same world (an ``EpisodeTask`` for RobotEnv).

    Contract: :meth:`reset` runs the installed ``reset_routine`` (the forward-backward
    loop's hand-over: it settles the arm where the forward episode left it, it never
    moves objects) and then draws a new goal. The gripper starts as the forward episode
    left it (:meth:`start_gripper`), so a held object stays held.
    """

    name = "backward"
    #: The scripted backward expert (a :class:`BackwardExpert` subclass), set by each task.
    Expert: type["BackwardExpert"]

    def __init__(self, forward: "SimTask", cfg: Config) -> None:
        self.forward = forward
        self.cfg = cfg
        self.fb = cfg.reset.forward_backward
        self.world = forward._world()
        self.params = forward.params
        self.goal = np.zeros(self.goal_dim)
        self.reset_routine: Callable[[np.random.Generator], Any] | None = None
        self.state_dim = forward.state_dim + self.goal_dim

    goal_dim: int = 0

    def reset(self, rng: np.random.Generator) -> None:
        if self.reset_routine is not None:
            self.reset_routine(rng)
        self.goal = self.sample_goal(rng)

    def start_gripper(self) -> float:
        return float(self.world.robot.gripper_target)

    def task_state(self) -> np.ndarray:
        return np.concatenate([self.forward.task_state(), self.goal_state()]).astype(np.float32)

    @abc.abstractmethod
    def sample_goal(self, rng: np.random.Generator) -> np.ndarray:
        """A random goal inside the forward task's randomization range."""

    @abc.abstractmethod
    def goal_state(self) -> np.ndarray:
        """The goal part of the observation (``goal_dim`` numbers)."""


def gripper_open(world: Any) -> bool:
    """Commanded open, and the fingers are (nearly) fully open."""
    return bool(world.robot.gripper_target > 0.5 and world.robot.state().gripper > 0.9)


def tcp_in_start_region(world: Any, cfg: Config) -> bool:
    """The TCP is where a robot reset could have put it (reset_pos +- perturbation, + tolerance)."""
    from robot_rl.config.reset import perturbation

    pos_range, _ = perturbation(cfg)
    tcp = world.data.site_xpos[world.tcp_site]
    tol = cfg.reset.forward_backward.goal_tolerance
    return bool(np.all(np.abs(tcp - np.asarray(cfg.robot.reset_pos)) <= pos_range + tol))


# --- when may which direction start ---------------------------------------------------


class BackwardSpec(abc.ABC):
    """Per-task rules of the forward-backward loop."""

    backward_class: type[BackwardTask]
    can_pick_up = False  # the task reset can turn any scene into a backward start (``pick_up``)
    # A robot reset must run the task's scripted reset first: the held part may sit in
    # its fixture (a peg in its hole), and moving sideways would jam it.
    task_reset_first = False

    def __init__(self, forward: "SimTask", cfg: Config) -> None:
        self.forward = forward
        self.cfg = cfg
        self.world = forward._world()

    @abc.abstractmethod
    def forward_ready(self) -> bool:
        """The objects are somewhere the forward task may start from (the arm may still need a robot reset)."""

    @abc.abstractmethod
    def arm_ready(self) -> bool:
        """The arm is in a forward start pose already (no robot reset needed)."""

    @abc.abstractmethod
    def backward_ready(self) -> bool:
        """The backward task may start from here."""


# --- scripted backward experts (demonstrations for the backward policy) ---------------


class BackwardExpert(abc.ABC):
    """Contract as :class:`robot_rl.sim.experts.ScriptedExpert`: ``reset()``, then ``act(obs)``."""

    def __init__(self, env: gym.Env, noise: float = 0.0, seed: int | None = None) -> None:
        self.env = env
        self.base = env.unwrapped
        self.task: BackwardTask = self.base.task
        self.world = self.task.world
        self.noise = float(noise)
        self.rng = np.random.default_rng(seed)
        self.scale = self.base.scale[:3]

    def reset(self) -> None:
        self.phase = "carry"

    @abc.abstractmethod
    def plan(self) -> tuple[np.ndarray, float]:
        """Base-frame TCP position target and gripper command (+1 close, -1 open, 0 keep)."""

    def full_action(self) -> np.ndarray:
        """The next action as a 7-D base-frame RobotEnv action; a task that turns the part overrides it."""
        target, grip = self.plan()
        current, _ = self.base.target_pose
        move = np.clip((target - current) / self.scale, -1.0, 1.0)
        if self.noise > 0:
            move = np.clip(move + self.rng.normal(0.0, self.noise, 3), -1.0, 1.0)
        return np.concatenate([move, np.zeros(3), [grip]])

    def act(self, obs: Any = None) -> np.ndarray:
        return outer_action(self.env, self.full_action())


def make_backward_expert(env: gym.Env, noise: float = 0.0, seed: int | None = None) -> BackwardExpert:
    """The scripted expert of the env's backward task (its ``Expert``), ready for its first episode."""
    expert = env.unwrapped.task.Expert(env, noise=noise, seed=seed)
    expert.reset()
    return expert
