"""PegInsert's scripted reset: pull the peg out, then the robot reset (the peg stays in the hand)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from robot_rl.reset.sim import SimTaskReset

if TYPE_CHECKING:
    from robot_rl.tasks.peg_insert.task import PegInsert


class PegInsertReset(SimTaskReset):
    """Pull the peg straight up out of the hole, slowly, then the robot reset to a random start pose."""

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
