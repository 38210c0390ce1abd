"""PlugInsert's scripted expert: the source of its demonstrations."""

from __future__ import annotations

import numpy as np

from robot_rl.sim.experts import RimDetector, ScriptedExpert
from robot_rl.tasks.plug_insert.geometry import quat_yaw, turn_action, wrap_angle


class PlugInsertExpert(ScriptedExpert):
    """Turn the plug to the slot's yaw and its tip over the slot, then push down while correcting.

    The state it reads is the task's: plug tip (3), tip relative to the slot's top centre
    (3), plug yaw relative to the slot (1). Besides the motion the base class steers, it
    turns the commanded yaw toward the slot's, as a set-point like the position. A push
    stuck on the slot's rim aligns again (:class:`~robot_rl.sim.experts.RimDetector`).
    """

    align_xy = 0.0008  # metres: tip over the slot's centre before pushing down
    align_yaw = 0.015  # rad: plug yaw to the slot's before pushing down
    #: Scenario drivers turn the plug this far off the slot's yaw on purpose (a plug that cannot go in).
    yaw_offset = 0.0

    retry_on_rim = True  # the reward scenarios turn it off: they hold a push where the board stops it

    def reset(self) -> None:
        self.phase = "align"
        self.rim = RimDetector(enabled=self.retry_on_rim)

    def goal_distance(self) -> float:
        return float(np.linalg.norm(self.task_state()[3:6]))  # plug tip relative to the slot

    def yaw_to_go(self) -> float:
        """How far the plug must still turn (rad, wrapped): its yaw error, less any intended offset."""
        return wrap_angle(float(self.task_state()[6]) - self.yaw_offset)

    def plan(self) -> tuple[np.ndarray, float]:
        state = self.task_state()
        tip, socket = state[0:3], state[0:3] - state[3:6]
        offset = self.tcp() - tip  # TCP relative to the tip
        xy_err = np.linalg.norm((socket - tip)[:2])
        yaw_err = abs(self.yaw_to_go())
        if self.phase == "align":
            target_tip = np.array([socket[0], socket[1], socket[2] + 0.01])
            if xy_err < self.align_xy and yaw_err < self.align_yaw and tip[2] < socket[2] + 0.02:
                self.phase = "insert"
                self.rim.start_push()
        if self.phase == "insert":
            target_tip = np.array([socket[0], socket[1], socket[2] - self.params.insert_depth - 0.01])
            stuck = self.rim.stuck(tip[2], socket[2])
            if stuck or ((xy_err > 0.003 or yaw_err > 0.04) and tip[2] > socket[2]):
                self.phase = "align"
        return target_tip + offset, 0.0

    def turn(self) -> float:
        """The normalised ``rz`` action that turns the commanded yaw toward lining the plug up."""
        goal = quat_yaw(self.base.robot_state.tcp_quat) - self.yaw_to_go()  # the tool yaw that does it
        _, target_quat = self.base.target_pose
        return turn_action(quat_yaw(target_quat), goal, float(self.base.scale[5]))

    def full_action(self) -> np.ndarray:
        action = super().full_action()
        action[5] = self.turn()
        return action
