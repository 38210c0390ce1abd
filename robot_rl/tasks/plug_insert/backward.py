"""PlugInsert's backward task, for forward-backward (reset-free) practice.

After any insertion attempt: pull the plug out of the slot and bring the TCP within
``goal_tolerance`` of a random start position, turned to a random start yaw (within
:data:`GOAL_YAW_TOLERANCE`), both drawn from the start ranges: practice keeps visiting
plugs turned every way the forward task starts with. The plug never leaves the hand, so
any scene is a forward start once the arm is placed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from robot_rl.config.reset import perturbation
from robot_rl.reset.backward import BackwardExpert, BackwardSpec, BackwardTask, tcp_in_start_region
from robot_rl.tasks.plug_insert.geometry import YAW_RANGE_TOLERANCE, quat_yaw, turn_action, wrap_angle

if TYPE_CHECKING:
    from robot_rl.tasks.plug_insert.task import PlugInsert

GOAL_YAW_TOLERANCE = 0.05  # rad: how close to its goal yaw the backward task must end
CLEAR = 0.005  # metres: the plug tip this far above the board counts as out of the slot


def plug_out(task: "PlugInsert", margin: float = 1e-3) -> bool:
    return bool(task.plug_tip()[2] > task.socket_top()[2] + margin)


class PlugInsertBackwardExpert(BackwardExpert):
    """Straight up out of the slot, then to the goal position and yaw."""

    task: "PlugInsertBackward"

    def plan(self) -> tuple[np.ndarray, float]:
        tcp = self.world.data.site_xpos[self.world.tcp_site]
        if not plug_out(self.task.forward, CLEAR):
            return np.array([tcp[0], tcp[1], tcp[2] + 0.05]), 0.0
        return self.task.goal[:3].copy(), 0.0

    def full_action(self) -> np.ndarray:
        action = super().full_action()
        if plug_out(self.task.forward, CLEAR):  # turn only once out: a plug in its slot cannot turn
            _, target_quat = self.base.target_pose
            action[5] = turn_action(quat_yaw(target_quat), float(self.task.goal[3]), float(self.base.scale[5]))
        return action


class PlugInsertBackward(BackwardTask):
    name = "PlugInsertBackward"
    goal_dim = 4  # goal position minus TCP, goal yaw minus plug yaw
    Expert = PlugInsertBackwardExpert
    forward: "PlugInsert"

    def sample_goal(self, rng: np.random.Generator) -> np.ndarray:
        pos_range, yaw_range = perturbation(self.cfg)
        pos = np.asarray(self.cfg.robot.reset_pos, float) + rng.uniform(-1.0, 1.0, 3) * pos_range
        return np.append(pos, rng.uniform(-1.0, 1.0) * yaw_range)

    def goal_state(self) -> np.ndarray:
        tcp = self.world.data.site_xpos[self.world.tcp_site]
        return np.append(self.goal[:3] - tcp, wrap_angle(self.goal[3] - self.forward.plug_yaw()))

    def success(self) -> bool:
        tcp = self.world.data.site_xpos[self.world.tcp_site]
        return bool(plug_out(self.forward)
                    and np.linalg.norm(tcp - self.goal[:3]) <= self.fb.goal_tolerance
                    and abs(wrap_angle(self.goal[3] - self.forward.plug_yaw())) <= GOAL_YAW_TOLERANCE)


class PlugInsertSpec(BackwardSpec):
    backward_class = PlugInsertBackward
    task_reset_first = True  # pull the plug out before any robot reset
    forward: "PlugInsert"

    def forward_ready(self) -> bool:
        return True  # the plug is in the hand: any scene is a start once the arm is placed

    def arm_ready(self) -> bool:
        """Plug out of the slot, TCP and yaw where a backward success (or a robot reset) leaves them."""
        _, yaw_range = perturbation(self.cfg)
        return bool(plug_out(self.forward) and tcp_in_start_region(self.world, self.cfg)
                    and abs(self.forward.yaw_error()) <= yaw_range + max(YAW_RANGE_TOLERANCE, GOAL_YAW_TOLERANCE))

    def backward_ready(self) -> bool:
        return True
