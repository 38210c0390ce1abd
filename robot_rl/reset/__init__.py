"""Auto-reset: the scene brings itself back between episodes, through the controller.

* :mod:`~robot_rl.reset.motion`: Cartesian paths (minimum-jerk, slerp) streamed as
  targets through the ``Robot`` interface at the control rate;
* :mod:`~robot_rl.reset.robot_reset`: the scripted robot reset (lift clear, joint reset
  every N, perturbed reset pose, gripper) and the :class:`JointMover` interface;
* :mod:`~robot_rl.reset.joint_reset`: the joint reset every backend uses, through the
  controller's null-space posture (:class:`PostureJointMover`);
* :mod:`~robot_rl.reset.stats`: what a reset did to the controller, and what counts as
  a violation;
* :mod:`~robot_rl.reset.sim`: scripted task resets of the MuJoCo tasks (the robot picks
  and places the cube, pulls the peg out), used by ``reset.mode: scripted``;
* :mod:`~robot_rl.reset.backward`, :mod:`~robot_rl.training.reset_free`:
  reset-free practice, where a backward policy undoes the forward task;
* :mod:`~robot_rl.reset.soak`: many resets in a row with checks (tests and benches).

The motion, robot-reset, joint-reset and statistics modules use only the ``Robot``/``Clock``
interfaces and run unchanged on hardware; :class:`RobotResetTask` puts the robot reset
in front of any real task.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from robot_rl.envs.task import EpisodeTask
from robot_rl.reset.joint_reset import PostureJointMover
from robot_rl.reset.motion import MotionRunner, Pose, ResetError
from robot_rl.reset.robot_reset import JointMover, RobotReset
from robot_rl.reset.stats import ResetStats


class RobotResetTask(EpisodeTask):
    """An ``EpisodeTask`` whose reset first runs the scripted robot reset, then ``task``'s.

    For hardware tasks, whose own ``reset`` prepares the objects (or asks the person
    to) and whose ``success`` is the reward classifier. ``on_reset`` (if given) receives
    every reset's :class:`ResetStats`.
    """

    def __init__(self, task: EpisodeTask, robot_reset: RobotReset,
                 on_reset: Callable[[ResetStats], None] | None = None) -> None:
        self.task = task
        self.robot_reset = robot_reset
        self.on_reset = on_reset
        self.state_dim = task.state_dim

    def reset(self, rng: np.random.Generator) -> None:
        stats = self.robot_reset.run(rng, gripper=self.task.start_gripper())
        if self.on_reset is not None:
            self.on_reset(stats)
        self.task.reset(rng)

    def task_state(self) -> np.ndarray:
        return self.task.task_state()

    def start_gripper(self) -> float:
        return self.task.start_gripper()

    def success(self) -> bool:
        return self.task.success()


__all__ = ["JointMover", "MotionRunner", "Pose", "PostureJointMover", "ResetError", "ResetStats", "RobotReset",
           "RobotResetTask"]
