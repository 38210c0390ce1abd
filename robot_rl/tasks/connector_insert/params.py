"""ConnectorInsert's parameters (``task.params`` in a config): what a real-only task needs.

Light to import, like every task's params: every config load types ``task.params`` with
this dataclass. The fields are the real-only contract (:mod:`robot_rl.tasks.real` reads
them): the proprioception the policy sees, and where each episode starts.
"""

from __future__ import annotations

from dataclasses import dataclass

from robot_rl.config.loader import param


@dataclass
class ConnectorInsertParams:
    # The proprioception keys the policy sees, in this order (robot_rl.envs.robot_env.PROPRIO_LAYOUT:
    # tcp_pos 3, tcp_quat 4, tcp_twist 6, tcp_wrench 6, gripper 1). Required in the config: with no
    # scene to ask, the config alone says what the policy observes.
    proprio: list[str] = param(default_factory=list)
    # Reset poses, one [x, y, z, roll, pitch, yaw] (metres, radians, base frame) per entry; episodes
    # start at them in turn. Empty with no file: robot.reset_pos / robot.reset_rpy.
    reset_poses: list[tuple[float, float, float, float, float, float]] = param(
        default_factory=list, min=-6.3, max=6.3, doc="metres and radians; each position inside robot.workspace")
    # A recorded file of reset poses (JSON: a list of [x, y, z, roll, pitch, yaw], e.g. written by
    # robot_rl.tasks.real.write_reset_poses from poses the arm was jogged to), used after reset_poses.
    reset_poses_file: str | None = None
