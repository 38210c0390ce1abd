"""Build a wrapped RobotEnv from a config: in sim by default, or over given parts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import gymnasium as gym

from robot_rl.config import Config, load_config
from robot_rl.envs.robot_env import RobotEnv
from robot_rl.envs.task import EpisodeTask
from robot_rl.envs.wrappers import wrap_env
from robot_rl.errors import ConfigError
from robot_rl.interfaces import Camera, Clock, Robot
from robot_rl.paths import resolve_config

TASK_CONFIGS = {"PickCube": "pick_cube", "PegInsert": "peg_insert"}


@dataclass
class EnvParts:
    """The backend pieces a RobotEnv runs on."""

    robot: Robot
    cameras: dict[str, Camera]
    clock: Clock
    task: EpisodeTask


def sim_parts(cfg: Config, render: bool = False) -> EnvParts:
    """A MuJoCo world for the config, rendering only the cameras the env observes."""
    from robot_rl.sim import build_world

    cams = list(cfg.env.cameras) if cfg.env.obs_mode != "state" else []
    if render and "front" in cfg.cameras and "front" not in cams:
        cams.append("front")
    world = build_world(cfg, cams)
    return EnvParts(world.robot, dict(world.cameras), world, world.task)


def make_env(cfg: Config, *, render_mode: str | None = None, parts: EnvParts | None = None) -> gym.Env:
    """The env a config describes, with its wrappers. Without ``parts``, a sim env."""
    if parts is None:
        if cfg.robot.backend != "sim":
            raise ConfigError(f"robot.backend is '{cfg.robot.backend}': make_env builds sim envs only; "
                              "hardware envs are built by the actor node over topics")
        parts = sim_parts(cfg, render=render_mode == "rgb_array")
    env = RobotEnv(cfg, parts.robot, parts.cameras, parts.clock, parts.task, render_mode=render_mode)
    return wrap_env(env, cfg)


EnvRole = Literal["train", "demos", "eval"]


def policy_view(env: gym.Env, cfg: Config) -> gym.Env:
    """``env`` with only the observation keys ``env.policy_keys`` names (all when null)."""
    keys = cfg.env.policy_keys
    if keys is None:
        return env
    have = list(env.observation_space.spaces)
    missing = [k for k in keys if k not in have]
    if missing:
        raise ConfigError(f"env.policy_keys names {missing}, which the observation lacks "
                          f"(it has {have}; env.obs_mode is '{cfg.env.obs_mode}')")
    return gym.wrappers.FilterObservation(env, list(keys))


def make_actor_env(cfg: Config, role: EnvRole = "train", *, parts: EnvParts | None = None,
                   human: bool = True, **device_context: Any) -> gym.Env:
    """The env an actor practises in, in the one order every actor uses.

    ``make_env``, then the reward classifier (``reward.classifier_path``; not for
    ``eval``, which scores by the task's own success), then the policy's view
    (``env.policy_keys``), then, for ``train`` with ``human``, the input device
    ``intervention.device`` names, outermost so a person's labels overrule the
    classifier. ``demos`` is the same without the person: scripted demonstrations are
    rewarded as practice is. ``device_context`` goes to the device builders.
    """
    env = make_env(cfg, parts=parts)
    if role != "eval":
        from robot_rl.reward.wrapper import wrap_reward  # torch: imported only when needed

        env = wrap_reward(env, cfg)
    env = policy_view(env, cfg)
    if role == "train" and human:
        from robot_rl.envs.intervention import with_intervention

        env = with_intervention(env, cfg, **device_context)
    return env


def make_registered_env(task: str, obs_mode: str = "state", config: str | None = None,
                        overrides: tuple[str, ...] = (), render_mode: str | None = None) -> gym.Env:
    """Entry point of the gymnasium ids ``robot_rl/<Task>-v0``."""
    path = resolve_config(config or TASK_CONFIGS[task])
    cfg = load_config(path, [f"env.obs_mode={obs_mode}", *overrides])
    if cfg.task.name != task:
        raise ConfigError(f"{path}: task.name is '{cfg.task.name}', expected '{task}'")
    return make_env(cfg, render_mode=render_mode)
