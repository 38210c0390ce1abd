"""Auto-reset: the scene brings itself back between episodes, through the controller.

* :mod:`~robot_rl.reset.motion`: Cartesian paths (minimum-jerk, slerp) streamed as
  targets through the ``Robot`` interface at the control rate;
* :mod:`~robot_rl.reset.robot_reset`: the scripted robot reset (lift clear, joint reset
  every N, perturbed reset pose, gripper) and the :class:`JointMover` interface;
* :mod:`~robot_rl.reset.joint_reset`: the joint reset every backend uses, through the
  controller's null-space posture (:class:`PostureJointMover`);
* :mod:`~robot_rl.reset.stats`: what a reset did to the controller, and what counts as
  a violation;
* :mod:`~robot_rl.reset.sim`: the task-agnostic part of the scripted task resets in sim
  (each task's own is in its folder, ``robot_rl/tasks/<task>/reset.py``), used by
  ``reset.mode: scripted``;
* :mod:`~robot_rl.reset.backward`, :mod:`~robot_rl.training.reset_free`:
  reset-free practice, where a backward policy undoes the forward task (each task's
  backward task is in its folder);
* :mod:`~robot_rl.reset.soak`: many resets in a row with checks (tests and benches).

The motion, robot-reset, joint-reset and statistics modules use only the ``Robot``/``Clock``
interfaces and run unchanged on hardware; the actor node puts the robot reset in front of
every real episode (:class:`robot_rl.nodes.task.RobotResetTask`).
"""

from __future__ import annotations

from robot_rl.reset.joint_reset import PostureJointMover
from robot_rl.reset.motion import MotionRunner, Pose, ResetError
from robot_rl.reset.robot_reset import JointMover, RobotReset
from robot_rl.reset.stats import ResetStats

__all__ = ["JointMover", "MotionRunner", "Pose", "PostureJointMover", "ResetError", "ResetStats", "RobotReset"]
