"""PickCube's backward task, for forward-backward (reset-free) practice.

After a successful pick, with the cube held up: put the cube down on the table within
``goal_tolerance`` of a random goal inside the cube's range, let go, and lift the open
gripper ``retreat_height`` above the cube. The scripted robot reset then takes the arm
to a start pose, which keeps the backward task to the part that needs learning and
leaves it shorter. A scene with the cube pushed out of range is turned into a backward
start by the scripted reset's pick-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from robot_rl.reset.backward import BackwardExpert, BackwardSpec, BackwardTask, gripper_open, tcp_in_start_region
from robot_rl.tasks.pick_cube.reset import cube_resting, cube_yaw

if TYPE_CHECKING:
    from robot_rl.tasks.pick_cube.task import PickCube


class PickCubeBackwardExpert(BackwardExpert):
    """Carry the cube above the goal, lower it onto the table, open, lift away."""

    task: "PickCubeBackward"

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


class PickCubeBackward(BackwardTask):
    name = "PickCubeBackward"
    goal_dim = 2  # goal xy minus cube xy
    Expert = PickCubeBackwardExpert
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
