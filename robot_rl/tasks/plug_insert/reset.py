"""PlugInsert's scripted reset: pull the plug out, then the robot reset (the plug stays in the hand).

The robot reset draws a new start pose whose yaw is perturbed by the task's
``start_yaw_range``: the plug starts turned again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from robot_rl.reset.sim import SimTaskReset

if TYPE_CHECKING:
    from robot_rl.tasks.plug_insert.task import PlugInsert


class PlugInsertReset(SimTaskReset):
    """Pull the plug straight up out of the slot, slowly, then the robot reset to a random start pose."""

    task: "PlugInsert"

    def reset_objects(self, rng: np.random.Generator) -> None:
        rr, runner = self.robot_reset, self.runner
        tip, socket = self.task.plug_tip(), self.task.socket_top()
        target = runner.target
        clear = socket[2] + 0.01 - tip[2]  # how far up until the tip is 1 cm above the board
        if clear > 0:  # straight up, upright and at the slot's yaw (the reset's nominal), so it cannot jam
            z = min(target.pos[2] + clear, rr.top)
            runner.move_to([target.pos[0], target.pos[1], z], rr.nominal.quat, speed=self.cfg.reset.slow_speed,
                           what="the plug extraction pose")
