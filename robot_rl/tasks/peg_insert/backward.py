"""PegInsert's backward task, for forward-backward (reset-free) practice.

After any insertion attempt: pull the peg out of the hole and bring the TCP within
``goal_tolerance`` of a random start pose inside the start range, peg tip above the
board. The peg never leaves the hand, so any scene is a start once the arm is placed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from robot_rl.config.reset import perturbation
from robot_rl.reset.backward import BackwardExpert, BackwardSpec, BackwardTask, tcp_in_start_region

if TYPE_CHECKING:
    from robot_rl.tasks.peg_insert.task import PegInsert


class PegInsertBackwardExpert(BackwardExpert):
    """Straight up out of the hole, then to the goal."""

    task: "PegInsertBackward"

    def plan(self) -> tuple[np.ndarray, float]:
        task = self.task
        tcp = self.world.data.site_xpos[self.world.tcp_site]
        tip, hole = task.forward.peg_tip(), task.forward.hole_top()
        if tip[2] < hole[2] + 0.005:
            return np.array([tcp[0], tcp[1], tcp[2] + 0.05]), 0.0
        return task.goal.copy(), 0.0


class PegInsertBackward(BackwardTask):
    name = "PegInsertBackward"
    goal_dim = 3  # goal minus TCP
    Expert = PegInsertBackwardExpert
    forward: "PegInsert"

    def sample_goal(self, rng: np.random.Generator) -> np.ndarray:
        pos_range, _ = perturbation(self.cfg)
        return np.asarray(self.cfg.robot.reset_pos, float) + rng.uniform(-1.0, 1.0, 3) * pos_range

    def goal_state(self) -> np.ndarray:
        return self.goal - self.world.data.site_xpos[self.world.tcp_site]

    def success(self) -> bool:
        tcp = self.world.data.site_xpos[self.world.tcp_site]
        return bool(self.forward.peg_tip()[2] > self.forward.hole_top()[2] + 1e-3
                    and np.linalg.norm(tcp - self.goal) <= self.fb.goal_tolerance)


class PegInsertSpec(BackwardSpec):
    backward_class = PegInsertBackward
    task_reset_first = True  # pull the peg out before any robot reset
    forward: "PegInsert"

    def forward_ready(self) -> bool:
        return True  # the peg is in the hand: any scene is a start once the arm is placed

    def arm_ready(self) -> bool:
        """Peg out of the hole, TCP where a backward success (or a robot reset) leaves it."""
        return bool(self.forward.peg_tip()[2] > self.forward.hole_top()[2] + 1e-3
                    and tcp_in_start_region(self.world, self.cfg))

    def backward_ready(self) -> bool:
        return True
