"""Scripted task resets for the MuJoCo tasks: the robot puts the objects back itself.

These are what ``reset.mode: scripted`` runs in sim, and what forward-backward practice
falls back on when neither policy can start. They read object poses from the sim (a
real setup would read them from a detector or ask the human) but they *move* objects
only with the robot, through :class:`~robot_rl.reset.motion.MotionRunner` and the
controller; the teleport (:meth:`robot_rl.sim.tasks.base.SimTask.teleport`) remains
the explicit sim shortcut and is used once, to set up a freshly built world.

* :class:`PickCubeReset`: lift clear; unless the cube is already in the gripper, pick it
  up wherever it lies (top grasp, fingers turned to its faces); put it down at a new
  random position and yaw inside the task's randomization range; let go, retreat, and
  finish with the robot reset.
* :class:`PegInsertReset`: pull the peg straight up out of the hole, slowly, then the
  robot reset to a random start pose (the peg stays in the hand).

Each reset returns a :class:`~robot_rl.reset.stats.ResetStats`; the routine keeps them
all in :attr:`SimTaskReset.history`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from robot_rl.config import Config
from robot_rl.control.transforms import mat_to_quat, quat_to_mat
from robot_rl.reset.joint_reset import PostureJointMover
from robot_rl.reset.motion import Pose, ResetError
from robot_rl.reset.robot_reset import RobotReset, yawed
from robot_rl.reset.stats import ResetStats

if TYPE_CHECKING:
    from robot_rl.sim.tasks.base import SimTask
    from robot_rl.sim.tasks.peg_insert import PegInsert
    from robot_rl.sim.tasks.pick_cube import PickCube
    from robot_rl.sim.world import SimWorld

log = logging.getLogger("robot_rl.reset")

GRASP_Z_OFFSET = 0.002  # TCP this far above the cube's centre when grasping (the pads' centre)
PLACE_CLEARANCE = 0.0015  # the held cube's bottom this far above the table when released
FINGER_DEPTH = 0.008  # the pads reach this far below the TCP


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
        self.robot_reset = RobotReset(self.world.robot, self.world, self.cfg, SimJointMover(self.world, self.cfg))
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


class PickCubeReset(SimTaskReset):
    """Pick the cube wherever it is and put it down at a random spot in range."""

    task: "PickCube"

    def __init__(self, task: "PickCube", cfg: Config | None = None) -> None:
        super().__init__(task, cfg)
        p = task.params
        self.h = float(p.cube_half_size)
        # The TCP height for moving above the table: the open fingers clear the cube's
        # top, and a held cube's bottom clears the table, by reset.hover_height.
        self.hover_z = min(2 * self.h + FINGER_DEPTH + self.cfg.reset.hover_height, self.robot_reset.top)
        box = self.robot_reset.box
        self.yaw_low = float(box.rot_low[2]) + 0.01
        self.yaw_high = float(box.rot_high[2]) - 0.01

    # --- cube geometry ------------------------------------------------------------------

    def cube_yaw(self) -> float:
        return cube_yaw(self.task)

    def gripper_yaw(self) -> float:
        """Yaw of the gripper relative to the reset orientation."""
        return float(self.robot_reset.box.relative_rotvec(self.runner.target.quat)[2])

    def cube_resting(self) -> bool:
        return cube_resting(self.task)

    def cube_in_hand(self) -> bool:
        state = self.runner.state()
        rel = self.task.cube_pos() - state.tcp_pos
        return bool(np.linalg.norm(rel[:2]) < 0.02 and abs(rel[2]) < 0.02 and state.gripper < 0.95
                    and self.task.cube_pos()[2] > self.h + 0.01)

    def in_range(self, tol: float = 1e-3, yaw_tol: float = 0.02) -> bool:
        p = self.task.params
        return bool(self.task.object_in_start_range()
                    and abs(self.cube_yaw()) <= p.cube_yaw_range + yaw_tol)

    # --- motions --------------------------------------------------------------------------

    def pick(self) -> None:
        """From the hover height: open, go above the cube, down, close, up; raises if it fails."""
        rr, runner = self.robot_reset, self.runner
        cube = self.task.cube_pos()
        yaw = float(np.clip(self.cube_yaw(), self.yaw_low, self.yaw_high))
        quat = yawed(rr.nominal.quat, yaw)
        xy = np.clip(cube[:2], rr.box.pos_low[:2] + 0.003, rr.box.pos_high[:2] - 0.003)
        runner.set_gripper(1.0)
        runner.move_to([xy[0], xy[1], self.hover_z], quat, what="above the cube")
        runner.move_to([xy[0], xy[1], cube[2] + GRASP_Z_OFFSET], what="the grasp pose")
        runner.set_gripper(0.0)
        runner.move_to([xy[0], xy[1], self.hover_z], what="the lift after grasping")
        if not self.cube_in_hand():
            raise _Retry("the grasp missed the cube")

    def place(self, rng: np.random.Generator) -> None:
        """Carry the held cube to a random spot and yaw in range, put it down, let go, retreat."""
        rr, runner, p = self.robot_reset, self.runner, self.task.params
        margin = self.cfg.reset.place_margin
        half = np.maximum(np.asarray(p.cube_xy_range) - margin, 0.0)
        goal_xy = np.asarray(p.cube_xy_center) + rng.uniform(-1.0, 1.0, 2) * half
        # Cube yaw = gripper yaw + in-hand offset; the gripper's yaw must stay in the box.
        offset = fold_yaw(self.cube_yaw() - self.gripper_yaw())
        y_max = max(p.cube_yaw_range - 0.01, 0.0)
        lo, hi = max(-y_max, self.yaw_low + offset), min(y_max, self.yaw_high + offset)
        goal_yaw = rng.uniform(lo, hi) if lo < hi else float(np.clip(0.0, self.yaw_low + offset,
                                                                      self.yaw_high + offset))
        turn = (goal_yaw - offset) - self.gripper_yaw()
        state = runner.state()
        rel = self.task.cube_pos()[:2] - state.tcp_pos[:2]
        c, s = np.cos(turn), np.sin(turn)
        rel = np.array([c * rel[0] - s * rel[1], s * rel[0] + c * rel[1]])
        tcp_xy = np.clip(goal_xy - rel, rr.box.pos_low[:2] + 0.003, rr.box.pos_high[:2] - 0.003)
        quat = yawed(runner.target.quat, turn)
        runner.move_to([tcp_xy[0], tcp_xy[1], self.hover_z], quat, what="above the place spot")
        # Down to 1 cm above the table at full speed, the last centimetre slowly.
        height = self.task.cube_pos()[2] - self.h - PLACE_CLEARANCE  # how far the cube's bottom must go down
        z = runner.target.pos[2]
        runner.move_to([tcp_xy[0], tcp_xy[1], z - max(height - 0.01, 0.0)], what="the place approach")
        runner.move_to([tcp_xy[0], tcp_xy[1], z - height], speed=self.cfg.reset.slow_speed, what="the place pose")
        runner.set_gripper(1.0)
        runner.move_to([tcp_xy[0], tcp_xy[1], z - height + 0.01], speed=self.cfg.reset.slow_speed,
                       what="the retreat after placing")
        runner.move_to([tcp_xy[0], tcp_xy[1], self.hover_z], what="the hover height")
        runner.wait(0.2)
        if not (self.cube_resting() and self.in_range()):
            raise _Retry(f"the cube came to rest at {np.round(self.task.cube_pos(), 3).tolist()}, "
                         f"yaw {self.cube_yaw():.2f}, outside the range")

    def pick_up(self) -> None:
        """Lift clear and pick the cube up wherever it lies (for a runner already begun).

        Leaves the cube held at the hover height: a backward start in forward-backward
        practice. Raises :class:`ResetError` after ``reset.max_attempts`` misses.
        """
        self.robot_reset.lift_clear(min_z=self.hover_z)
        attempts = 0
        while not self.cube_in_hand():
            if attempts >= self.cfg.reset.max_attempts:
                raise ResetError(f"reset: PickCube could not pick the cube up in {attempts} attempts; "
                                 "the cube needs a person")
            attempts += 1
            try:
                self.pick()
            except _Retry as why:
                log.info("PickCube pick-up attempt %d: %s", attempts, why)
                self.runner.set_gripper(1.0)
        self.robot_reset.recorder.stats.attempts += attempts

    def reset_objects(self, rng: np.random.Generator) -> None:
        rr = self.robot_reset
        rr.lift_clear(min_z=self.hover_z)
        holding = self.cube_in_hand()
        attempts = 0
        last = ""
        while attempts < self.cfg.reset.max_attempts:
            attempts += 1
            try:
                if not holding:
                    self.pick()
                holding = False
                self.place(rng)
                rr.recorder.stats.attempts += attempts
                return
            except _Retry as why:
                last = str(why)
                log.info("PickCube reset attempt %d: %s", attempts, last)
                holding = self.cube_in_hand()
                if not holding:
                    self.runner.set_gripper(1.0)
        rr.recorder.stats.attempts += attempts
        raise ResetError(f"reset: PickCube gave up after {attempts} attempts ({last}); "
                         "the cube needs a person")


class PegInsertReset(SimTaskReset):
    """Pull the peg out of the hole, then the robot reset to a random start pose."""

    task: "PegInsert"

    def reset_objects(self, rng: np.random.Generator) -> None:
        rr, runner = self.robot_reset, self.runner
        tip, hole = self.task.peg_tip(), self.task.hole_top()
        target = runner.target
        clear = hole[2] + 0.01 - tip[2]  # how far up until the tip is 1 cm above the board
        if clear > 0:  # straight up, turning the peg upright on the way so that it cannot jam
            z = min(target.pos[2] + clear, rr.top)
            runner.move_to([target.pos[0], target.pos[1], z], rr.nominal.quat, speed=self.cfg.reset.slow_speed,
                           what="the peg extraction pose")


class _Retry(Exception):
    """A grasp or placement did not work out; the routine tries again."""


def cube_resting(task: "PickCube") -> bool:
    """The cube lies flat on the table and is not moving."""
    d = task._world().data
    speed = float(np.linalg.norm(d.qvel[task._dof:task._dof + 3]))
    return abs(task.cube_pos()[2] - task.params.cube_half_size) < 3e-3 and speed < 0.02


def cube_yaw(task: "PickCube") -> float:
    """Yaw of the cube's side faces, folded into (-pi/4, pi/4] (a cube looks the same every 90 degrees)."""
    mat = quat_to_mat(task._world().data.xquat[task._body])
    up = int(np.argmax(np.abs(mat[2])))
    side = mat[:, (up + 1) % 3]
    return fold_yaw(float(np.arctan2(side[1], side[0])))


def fold_yaw(yaw: float) -> float:
    """``yaw`` folded into (-pi/4, pi/4]."""
    q = np.pi / 2
    return float(yaw - q * np.round(yaw / q))


TASK_RESETS: dict[str, type[SimTaskReset]] = {"PickCube": PickCubeReset, "PegInsert": PegInsertReset}


def make_task_reset(task: "SimTask", cfg: Config | None = None) -> SimTaskReset:
    """The scripted reset routine for a sim task."""
    if task.name not in TASK_RESETS:
        raise ValueError(f"no scripted reset for task {task.name}")
    return TASK_RESETS[task.name](task, cfg)
