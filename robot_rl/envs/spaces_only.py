"""Backends that hold no robot: a RobotEnv built on them has the config's spaces and nothing else.

The learner needs an env's observation and action spaces, not a robot; so do the checks
that compare a saved policy with a config. Building the env the actors build, through
the same wrappers, on these parts gives exactly their spaces with no sim, no driver
and no topic (:func:`robot_rl.assemble.config_spaces_env`). Anything that would move
the arm, read a camera or wait raises: such an env is for its spaces only.
"""

from __future__ import annotations

import numpy as np

from robot_rl.envs.task import EpisodeTask
from robot_rl.interfaces import Camera, Clock, Frame, Robot, RobotState

WHY = "an env built for its spaces only (robot_rl.assemble.config_spaces_env) has no robot, camera or clock"


class NoRobot(Robot):
    def state(self) -> RobotState:
        raise RuntimeError(WHY)

    def command(self, pos: np.ndarray, quat: np.ndarray, gripper: float | None = None) -> bool:
        raise RuntimeError(WHY)

    def hold(self) -> None:
        raise RuntimeError(WHY)

    def close(self) -> None:
        pass  # nothing was opened


class NoCamera(Camera):
    def read(self) -> Frame:
        raise RuntimeError(WHY)


class NoClock(Clock):
    def now(self) -> float:
        raise RuntimeError(WHY)

    def sleep_until(self, t: float) -> None:
        raise RuntimeError(WHY)


class NoTask(EpisodeTask):
    """A task of ``state_dim`` privileged entries (0 on a real cell) that cannot run."""

    def __init__(self, state_dim: int = 0) -> None:
        self.state_dim = int(state_dim)

    def reset(self, rng: np.random.Generator) -> None:
        raise RuntimeError(WHY)

    def success(self) -> bool:
        raise RuntimeError(WHY)
