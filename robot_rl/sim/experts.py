"""Scripted experts for the sim tasks: the source of demonstrations.

An expert reads the measured TCP pose and the task's privileged state vector
(``task.task_state()``: the cube's position, or the peg tip and the hole), decides a
base-frame motion and a gripper command, and returns it in the wrapped env's action
space through :func:`robot_rl.envs.outer_action`, so its actions are exactly what a
policy (or a human) would send. It needs nothing but the ``RobotEnv`` API, so the same
expert drives an env over MuJoCo directly or an env over ROS topics fed by the sim
node. ``noise`` adds Gaussian noise to the motion part, for more varied demonstrations;
the expert corrects it on the next step.
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


class PickCubeExpert(ScriptedExpert):
    """Above the cube → down → close → lift."""

    hover = 0.06

    def reset(self) -> None:
        self.phase = "approach"
        self.closed_steps = 0

    def goal_distance(self) -> float:
        return float(np.linalg.norm(self.task_state()[3:6]))  # cube relative to the TCP

    def plan(self) -> tuple[np.ndarray, float]:
        cube = self.task_state()[0:3]
        tcp = self.tcp()
        h = self.params.cube_half_size
        if self.phase == "approach":
            target = cube + [0.0, 0.0, self.hover]
            if np.linalg.norm((target - tcp)[:2]) < 0.006 and abs(target[2] - tcp[2]) < 0.02:
                self.phase = "descend"
        if self.phase == "descend":
            target = cube + [0.0, 0.0, 0.002]
            if abs(tcp[2] - target[2]) < 0.006 and np.linalg.norm((cube - tcp)[:2]) < 0.008:
                self.phase = "grasp"
            elif np.linalg.norm((cube - tcp)[:2]) > 0.02:
                self.phase = "approach"
                target = cube + [0.0, 0.0, self.hover]
            return target, -1.0
        if self.phase == "grasp":
            self.closed_steps += 1
            target = np.array([tcp[0], tcp[1], cube[2] + 0.002])
            if self.closed_steps >= 4:
                self.phase = "lift"
            return target, 1.0
        if self.phase == "lift":
            target = np.array([tcp[0], tcp[1], h + self.params.lift_height + 0.05])
            if cube[2] < h + 0.004 and tcp[2] > h + 0.03:  # dropped it: start again
                self.phase, self.closed_steps = "approach", 0
                return cube + [0.0, 0.0, self.hover], -1.0
            return target, 1.0
        return target, -1.0


class PegInsertExpert(ScriptedExpert):
    """Align the peg tip over the hole, then push down while correcting xy."""

    def reset(self) -> None:
        self.phase = "align"

    def goal_distance(self) -> float:
        return float(np.linalg.norm(self.task_state()[3:6]))  # peg tip relative to the hole

    def plan(self) -> tuple[np.ndarray, float]:
        state = self.task_state()
        tip, hole = state[0:3], state[0:3] - state[3:6]
        tcp = self.tcp()
        offset = tcp - tip  # TCP relative to the tip
        xy_err = np.linalg.norm((hole - tip)[:2])
        if self.phase == "align":
            target_tip = np.array([hole[0], hole[1], hole[2] + 0.01])
            if xy_err < 0.0008 and tip[2] < hole[2] + 0.02:
                self.phase = "insert"
        if self.phase == "insert":
            target_tip = np.array([hole[0], hole[1], hole[2] - self.params.insert_depth - 0.01])
            if xy_err > 0.003 and tip[2] > hole[2]:
                self.phase = "align"
        return target_tip + offset, 0.0


def make_expert(env: gym.Env, noise: float = 0.0, seed: int | None = None) -> ScriptedExpert:
    """The scripted expert for the env's task."""
    experts = {"PickCube": PickCubeExpert, "PegInsert": PegInsertExpert}
    name = env.unwrapped.cfg.task.name
    if name not in experts:
        raise ValueError(f"no scripted expert for task {name}")
    expert = experts[name](env, noise=noise, seed=seed)
    expert.reset()
    return expert
