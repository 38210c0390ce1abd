"""RobotEnv and its wrappers.

Envs are assembled in :mod:`robot_rl.assemble`, never here: this package is core, builds
on no backend and knows no task. The gymnasium ids ``robot_rl/<Task>-v0`` are registered
by ``import robot_rl`` from the task registry (:mod:`robot_rl.tasks`) and built by
:func:`robot_rl.assemble.make_registered_env`.
"""

from __future__ import annotations

from robot_rl.envs.robot_env import EnvParts, RobotEnv
from robot_rl.envs.task import EpisodeTask
from robot_rl.envs.wrappers import outer_action, wrap_env

__all__ = ["EnvParts", "EpisodeTask", "RobotEnv", "outer_action", "wrap_env"]
