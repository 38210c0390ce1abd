"""Backward tasks: what a second policy learns so that the forward task needs no reset.

A backward task runs on the same MuJoCo world as its forward task and undoes it, ending
in a state the forward task may start from. Its goal is drawn at random in the forward
task's randomization range, so practice keeps visiting varied initial states instead of
one. Success is sim ground truth here; on hardware it would be a second reward
classifier trained on pictures of the reset scene.

* :class:`PickCubeBackward` (after a successful pick, with the cube held up): put the
  cube down on the table within ``goal_tolerance`` of a random goal inside the cube's
  range, let go, and lift the open gripper ``retreat_height`` above the cube. The
  scripted robot reset then takes the arm to a start pose, which keeps the backward
  task to the part that needs learning and leaves it shorter.
* :class:`PegInsertBackward` (after any insertion attempt): pull the peg out of the hole
  and bring the TCP within ``goal_tolerance`` of a random start pose inside the start
  range, peg tip above the board.

Each spec also says when a scene is a valid start for either direction
(:meth:`BackwardSpec.forward_ready`, :meth:`BackwardSpec.backward_ready`); the
forward-backward loop uses that to decide what runs next (see
:mod:`robot_rl.training.reset_free`). A scripted backward expert per task records
demonstrations for the backward policy, in the env's action space.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, Callable

import gymnasium as gym
import numpy as np

from robot_rl.config import Config
from robot_rl.envs.task import EpisodeTask
from robot_rl.envs.wrappers import outer_action
from robot_rl.reset.sim import cube_resting, cube_yaw

if TYPE_CHECKING:
    from robot_rl.sim.tasks.base import SimTask
    from robot_rl.sim.tasks.peg_insert import PegInsert
    from robot_rl.sim.tasks.pick_cube import PickCube


class BackwardTask(EpisodeTask, abc.ABC):
    """The backward task of ``forward``, on the same world (an ``EpisodeTask`` for RobotEnv).

    Contract: :meth:`reset` runs the installed ``reset_routine`` (the forward-backward
    loop's hand-over: it settles the arm where the forward episode left it, it never
    moves objects) and then draws a new goal. The gripper starts as the forward episode
    left it (:meth:`start_gripper`), so a held object stays held.
    """

    name = "backward"

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


class PickCubeBackward(BackwardTask):
    name = "PickCubeBackward"
    goal_dim = 2  # goal xy minus cube xy
    forward: "PickCube"

    def sample_goal(self, rng: np.random.Generator) -> np.ndarray:
        p = self.params
        half = np.maximum(np.asarray(p.cube_xy_range) - self.cfg.reset.place_margin, 0.0)
        return np.asarray(p.cube_xy_center) + rng.uniform(-1.0, 1.0, 2) * half

    def goal_state(self) -> np.ndarray:
        return self.goal - self.forward.cube_pos()[:2]

    def success(self) -> bool:
        cube = self.forward.cube_pos()
        tcp_z = self.world.data.site_xpos[self.world.tcp_site][2]
        return bool(cube_resting(self.forward)
                    and np.linalg.norm(cube[:2] - self.goal) <= self.fb.goal_tolerance
                    and self.forward.object_in_start_range()
                    and gripper_open(self.world)
                    and tcp_z >= cube[2] + self.params.cube_half_size + self.fb.retreat_height)


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


class PegInsertBackward(BackwardTask):
    name = "PegInsertBackward"
    goal_dim = 3  # goal minus TCP
    forward: "PegInsert"

    def sample_goal(self, rng: np.random.Generator) -> np.ndarray:
        from robot_rl.config.reset import perturbation

        pos_range, _ = perturbation(self.cfg)
        return np.asarray(self.cfg.robot.reset_pos, float) + rng.uniform(-1.0, 1.0, 3) * pos_range

    def goal_state(self) -> np.ndarray:
        return self.goal - self.world.data.site_xpos[self.world.tcp_site]

    def success(self) -> bool:
        tcp = self.world.data.site_xpos[self.world.tcp_site]
        return bool(self.forward.peg_tip()[2] > self.forward.hole_top()[2] + 1e-3
                    and np.linalg.norm(tcp - self.goal) <= self.fb.goal_tolerance)


# --- when may which direction start ---------------------------------------------------


class BackwardSpec(abc.ABC):
    """Per-task rules of the forward-backward loop."""

    backward_class: type[BackwardTask]
    can_pick_up = False  # the task reset can turn any scene into a backward start (``pick_up``)

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


class PickCubeSpec(BackwardSpec):
    backward_class = PickCubeBackward
    can_pick_up = True
    forward: "PickCube"

    def cube_in_hand(self) -> bool:
        cube = self.forward.cube_pos()
        tcp = self.world.data.site_xpos[self.world.tcp_site]
        return bool(np.linalg.norm((cube - tcp)[:2]) < 0.02 and abs(cube[2] - tcp[2]) < 0.02
                    and self.world.robot.gripper_target < 0.5)

    def forward_ready(self) -> bool:
        t = self.forward
        return bool(cube_resting(t) and t.object_in_start_range()
                    and abs(cube_yaw(t)) <= t.params.cube_yaw_range + 0.02)

    def arm_ready(self) -> bool:
        return gripper_open(self.world) and tcp_in_start_region(self.world, self.cfg)

    def backward_ready(self) -> bool:
        """The forward task succeeded: the cube is held up off the table."""
        return bool(self.cube_in_hand() and self.forward.cube_pos()[2] > self.forward.params.cube_half_size + 0.01)


class PegInsertSpec(BackwardSpec):
    backward_class = PegInsertBackward
    forward: "PegInsert"

    def forward_ready(self) -> bool:
        return True  # the peg is in the hand: any scene is a start once the arm is placed

    def arm_ready(self) -> bool:
        """Peg out of the hole, TCP where a backward success (or a robot reset) leaves it."""
        return bool(self.forward.peg_tip()[2] > self.forward.hole_top()[2] + 1e-3
                    and tcp_in_start_region(self.world, self.cfg))

    def backward_ready(self) -> bool:
        return True


SPECS: dict[str, type[BackwardSpec]] = {"PickCube": PickCubeSpec, "PegInsert": PegInsertSpec}


def make_spec(forward: "SimTask", cfg: Config) -> BackwardSpec:
    if forward.name not in SPECS:
        raise ValueError(f"no backward task for {forward.name}")
    return SPECS[forward.name](forward, cfg)


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

    def act(self, obs: Any = None) -> np.ndarray:
        target, grip = self.plan()
        current, _ = self.base.target_pose
        move = np.clip((target - current) / self.scale, -1.0, 1.0)
        if self.noise > 0:
            move = np.clip(move + self.rng.normal(0.0, self.noise, 3), -1.0, 1.0)
        return outer_action(self.env, np.concatenate([move, np.zeros(3), [grip]]))


class PickCubeBackwardExpert(BackwardExpert):
    """Carry the cube above the goal, lower it onto the table, open, lift away."""

    task: PickCubeBackward

    def plan(self) -> tuple[np.ndarray, float]:
        task = self.task
        cube = task.forward.cube_pos()
        tcp = self.world.data.site_xpos[self.world.tcp_site]
        h = task.params.cube_half_size
        offset = tcp[:2] - cube[:2]  # keep the cube, not the TCP, on the goal
        above = np.array([*(task.goal + offset), 2 * h + 0.03])
        if self.phase == "carry":
            if np.linalg.norm(above[:2] - tcp[:2]) < 0.004:
                self.phase = "lower"
            return np.array([*(task.goal + offset), max(tcp[2], above[2])]), 1.0
        if self.phase == "lower":
            if cube[2] - h < 0.004:
                self.phase = "release"
                self.steps = 0
            return np.array([*(task.goal + offset), h + 0.001]), 1.0
        if self.phase == "release":
            self.steps += 1
            if self.steps >= 3:
                self.phase = "retreat"
            return tcp.copy(), -1.0
        return np.array([tcp[0], tcp[1], cube[2] + h + task.fb.retreat_height + 0.02]), -1.0  # straight up


class PegInsertBackwardExpert(BackwardExpert):
    """Straight up out of the hole, then to the goal."""

    task: PegInsertBackward

    def plan(self) -> tuple[np.ndarray, float]:
        task = self.task
        tcp = self.world.data.site_xpos[self.world.tcp_site]
        tip, hole = task.forward.peg_tip(), task.forward.hole_top()
        if tip[2] < hole[2] + 0.005:
            return np.array([tcp[0], tcp[1], tcp[2] + 0.05]), 0.0
        return task.goal.copy(), 0.0


BACKWARD_EXPERTS: dict[str, type[BackwardExpert]] = {
    "PickCubeBackward": PickCubeBackwardExpert, "PegInsertBackward": PegInsertBackwardExpert}


def make_backward_expert(env: gym.Env, noise: float = 0.0, seed: int | None = None) -> BackwardExpert:
    expert = BACKWARD_EXPERTS[env.unwrapped.task.name](env, noise=noise, seed=seed)
    expert.reset()
    return expert
