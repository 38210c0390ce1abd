"""PickCube's scripted reset: the robot picks the cube up and puts it down somewhere new.

Lift clear; unless the cube is already in the gripper, pick it up wherever it lies (top
grasp, fingers turned to its faces); put it down at a new random position and yaw
inside the task's randomization range; let go, retreat, and finish with the robot reset.
It reads the cube's pose from the sim (a real setup would read it from a detector) but
moves the cube only with the robot, through the controller.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from robot_rl.config import Config
from robot_rl.control.transforms import quat_to_mat
from robot_rl.reset.motion import ResetError
from robot_rl.reset.robot_reset import yawed
from robot_rl.reset.sim import SimTaskReset

if TYPE_CHECKING:
    from robot_rl.tasks.pick_cube.task import PickCube

log = logging.getLogger("robot_rl.reset")

GRASP_Z_OFFSET = 0.002  # TCP this far above the cube's centre when grasping (the pads' centre)
PLACE_CLEARANCE = 0.0015  # the held cube's bottom this far above the table when released
FINGER_DEPTH = 0.008  # the pads reach this far below the TCP


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
        """The cube is inside its start range, its yaw included."""
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
                self.task.place_decoys(rng, self.task.cube_pos()[:2])  # the clutter changes too, as at a teleport
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
