"""Scripted task resets in sim, the task-agnostic part: the robot puts the objects back itself.

These are what ``reset.mode: scripted`` runs in sim, and what forward-backward practice
falls back on when neither policy can start. A task's own reset (in its folder,
``robot_rl/tasks/<task>/reset.py``) subclasses :class:`SimTaskReset` and says how its
objects go back (:meth:`SimTaskReset.reset_objects`); a task object hands its reset out
through ``SimTask.make_reset``. Resets read object poses from the sim (a real setup
would read them from a detector or ask the human) but they *move* objects only with
the robot, through :class:`~robot_rl.reset.motion.MotionRunner` and the controller; the
teleport (:meth:`robot_rl.sim.task.SimTask.teleport`) remains the explicit sim
shortcut and is used once, to set up a freshly built world.

Each reset returns a :class:`~robot_rl.reset.stats.ResetStats`; the routine keeps them
all in :attr:`SimTaskReset.history`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from robot_rl.config import Config
from robot_rl.control.transforms import mat_to_quat
from robot_rl.reset.joint_reset import PostureJointMover
from robot_rl.reset.motion import Pose, ResetError
from robot_rl.reset.robot_reset import RobotReset
from robot_rl.reset.stats import ResetStats

if TYPE_CHECKING:
    from robot_rl.sim.task import SimTask
    from robot_rl.sim.world import SimWorld


def forward_kinematics(world: "SimWorld", q: np.ndarray) -> Pose:
    """The TCP pose of joint angles ``q`` (on scratch data; the world is untouched)."""
    import mujoco

    scratch = mujoco.MjData(world.model)
    scratch.qpos[world.arm_qpos] = q
    mujoco.mj_kinematics(world.model, scratch)
    return Pose.of(scratch.site_xpos[world.tcp_site].copy(),
                   mat_to_quat(scratch.site_xmat[world.tcp_site].reshape(3, 3)))


class SimJointMover(PostureJointMover):
    """Joint reset for the MuJoCo arm: :class:`~robot_rl.reset.joint_reset.PostureJointMover`
    with MuJoCo's kinematics. The joints default to IK for the reset pose (closest to the
    controller's rest posture), and a posture whose TCP would leave the box is refused
    before anything moves."""

    def __init__(self, world: "SimWorld", cfg: Config) -> None:
        from robot_rl.reset.robot_reset import reset_pose

        def solve() -> np.ndarray:
            pose = reset_pose(cfg)
            return world.solve_ik(pose.pos, pose.quat)

        super().__init__(world.robot, cfg, solve=solve, pose_of=lambda q: forward_kinematics(world, q))
        self.world = world


class SimTaskReset:
    """A scripted reset of a sim task; callable as the task's reset routine.

    The first call on a freshly built world sets the scene up with the sim shortcut
    (there is nothing to reset yet; on hardware a person sets the scene up once);
    every later call is scripted. :attr:`history` holds each call's statistics
    (``kind == "setup"`` for the first).
    """

    kind = "task"

    def __init__(self, task: "SimTask", cfg: Config | None = None) -> None:
        self.task = task
        self.cfg = cfg or task.cfg
        self.world: "SimWorld" = task._world()
        # An arm without a null-space posture (the 6-DoF UR5e) does no joint resets: its joints follow from the pose.
        mover = SimJointMover(self.world, self.cfg) if self.world.arm.posture else None
        self.robot_reset = RobotReset(self.world.robot, self.world, self.cfg, mover)
        self.runner = self.robot_reset.runner
        self.history: list[ResetStats] = []
        self.set_up = False

    def __call__(self, rng: np.random.Generator) -> ResetStats:
        if not self.set_up:
            t0 = self.world.now()
            self.task.teleport(rng)
            self.set_up = True
            stats = ResetStats(kind="setup", duration_s=self.world.now() - t0)
        else:
            stats = self.run(rng)
        self.history.append(stats)
        return stats

    def run(self, rng: np.random.Generator) -> ResetStats:
        """One scripted reset of objects and robot."""
        rr = self.robot_reset
        rr.begin(self.task.name)
        try:
            self.reset_objects(rng)
            rr.perform(rng, gripper=self.task.start_gripper(), lift=False)  # reset_objects leaves it clear
        finally:
            stats = rr.end()
        if not self.task.object_in_start_range():
            raise ResetError(f"reset: the {self.task.name} scene is not in its start range after a scripted reset")
        return stats

    def reset_objects(self, rng: np.random.Generator) -> None:
        """Put the task's objects in a new random initial state, with the robot."""

    def in_range(self) -> bool:
        """The objects are inside the task's start range (a task may check more, e.g. a yaw)."""
        return self.task.object_in_start_range()
