"""PlugInsert's scripted expert: the source of its demonstrations."""

from __future__ import annotations

import numpy as np

from robot_rl.sim.experts import InsertionExpert
from robot_rl.tasks.plug_insert.geometry import quat_yaw, turn_action, wrap_angle


class PlugInsertExpert(InsertionExpert):
    """Turn the plug to the slot's yaw and its tip over the slot, then push down while correcting.

    The state it reads is the task's: plug tip (3), tip relative to the slot's top centre
    (3), plug yaw relative to the slot (1). Besides the motion the base class steers, it
    turns the commanded yaw toward the slot's, as a set-point like the position. A push
    stuck on the slot's rim aligns again (:class:`~robot_rl.sim.experts.RimDetector`).
    """

    align_yaw = 0.015  # rad: plug yaw to the slot's before pushing down
    abort_yaw = 0.04  # rad: a push above the top turned this far off aligns again
    #: Scenario drivers turn the plug this far off the slot's yaw on purpose (a plug that cannot go in).
    yaw_offset = 0.0

    def yaw_to_go(self, state: np.ndarray | None = None) -> float:
        """How far the plug must still turn (rad, wrapped): its yaw error in the task ``state``
        (read now when not given), less any intended offset."""
        state = self.task_state() if state is None else state
        return wrap_angle(float(state[6]) - self.yaw_offset)

    def lined_up(self, state: np.ndarray, to_start: bool) -> bool:
        """The plug turned to the slot's yaw: within ``align_yaw`` to push, ``abort_yaw`` to keep pushing."""
        yaw_err = abs(self.yaw_to_go(state))
        return yaw_err < self.align_yaw if to_start else yaw_err <= self.abort_yaw

    def turn(self) -> float:
        """The normalised ``rz`` action that turns the commanded yaw toward lining the plug up."""
        goal = quat_yaw(self.base.robot_state.tcp_quat) - self.yaw_to_go()  # the tool yaw that does it
        _, target_quat = self.base.target_pose
        return turn_action(quat_yaw(target_quat), goal, float(self.base.scale[5]))

    def full_action(self) -> np.ndarray:
        action = super().full_action()
        action[5] = self.turn()
        return action
