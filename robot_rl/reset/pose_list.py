"""The scripted robot reset to given poses, in turn: recorded or written-down start poses.

A task with no scene (a real-only task) cannot place objects; its episodes start where
the arm is put: one pose after another from a list (``task.params.reset_poses`` and a
recorded ``task.params.reset_poses_file``, see :mod:`robot_rl.tasks.real`). Each reset
is :class:`~robot_rl.reset.robot_reset.RobotReset`'s motion (lift clear, joint reset when
due, across and down, gripper, settle), every target through the controller and clipped
to the safety box; only the goal differs: the next pose of the list instead of a random
perturbation of ``robot.reset_pos``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from robot_rl.config import Config
from robot_rl.control.transforms import rpy_to_quat
from robot_rl.interfaces import Clock, Robot
from robot_rl.reset.motion import Pose
from robot_rl.reset.robot_reset import JointMover, RobotReset


class PoseListReset(RobotReset):
    """Resets to ``poses`` ([x, y, z, roll, pitch, yaw] each) in turn, wrapping around."""

    def __init__(self, robot: Robot, clock: Clock, cfg: Config, poses: Sequence[np.ndarray],
                 joint_mover: JointMover | None = None) -> None:
        super().__init__(robot, clock, cfg, joint_mover)
        if not len(poses):
            raise ValueError("a pose-list reset needs at least one pose")
        self.poses = [Pose.of(np.asarray(p[:3], float), rpy_to_quat(np.asarray(p[3:6], float))) for p in poses]
        for pose in self.poses:
            if not self.box.contains(pose.pos):
                raise ValueError(f"reset pose {np.round(pose.pos, 4).tolist()} is outside the safety box")
        self.next_index = 0

    def sample_pose(self, rng: np.random.Generator) -> Pose:
        pose = self.poses[self.next_index % len(self.poses)]
        self.next_index += 1
        return pose
