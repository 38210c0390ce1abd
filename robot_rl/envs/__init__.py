"""RobotEnv, its wrappers, and the gymnasium ids ``robot_rl/PickCube-v0`` and ``robot_rl/PegInsert-v0``.

``gymnasium.make("robot_rl/PickCube-v0", obs_mode="pixels")`` works after ``import robot_rl.envs``.
"""

from __future__ import annotations

import gymnasium as gym

from robot_rl.envs.factory import EnvParts, make_actor_env, make_env, policy_view
from robot_rl.envs.robot_env import RobotEnv
from robot_rl.envs.task import EpisodeTask
from robot_rl.envs.wrappers import outer_action, wrap_env

ENV_IDS = {"PickCube": "robot_rl/PickCube-v0", "PegInsert": "robot_rl/PegInsert-v0"}


def register_envs() -> None:
    for task, env_id in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(env_id, entry_point="robot_rl.envs.factory:make_registered_env", kwargs={"task": task})


register_envs()

__all__ = ["ENV_IDS", "EnvParts", "EpisodeTask", "RobotEnv", "make_actor_env", "make_env", "outer_action",
           "policy_view", "register_envs", "wrap_env"]
