"""The composition root: every env robot_rl runs is built here, and only here.

The trainer, the learner's actors, the actor node, demo and reward recording, resets
and the benches all ask this module for their env, so each is assembled in one order:

1. the parts (:class:`~robot_rl.envs.robot_env.EnvParts`): a MuJoCo world
   (:func:`sim_parts`), or parts handed in by the caller (the actor node's backends over
   topics, a hardware backend, a test's fake);
2. :class:`~robot_rl.envs.robot_env.RobotEnv` and its wrappers (:func:`make_env`);
3. for practice, the learned reward (``reward.classifier_path``), the policy's view
   (``env.policy_keys``) and, outermost, the person (:func:`person_device`), so a
   person's labels overrule the classifier (:func:`make_actor_env`).

This is the one place that joins the core to the hardware libraries' front doors
(``robot_rl_drivers``): core packages never import a driver, and the actor node does
not wire input devices itself. Heavy parts (MuJoCo, torch, a driver) are imported only
when the env that needs them is built. The gymnasium ids ``robot_rl/<Task>-v0`` (registered
by ``import robot_rl``) name :func:`make_registered_env` as their entry point.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import gymnasium as gym

from robot_rl.config import Config
from robot_rl.config.input import HELD_DEVICES
from robot_rl.envs.robot_env import EnvParts, RobotEnv
from robot_rl.envs.wrappers import wrap_env
from robot_rl.errors import ConfigError
from robot_rl.interfaces import InputDevice
from robot_rl.paths import resolve_config
from robot_rl.tasks import get_task, load_config, make_task

EnvRole = Literal["train", "demos", "eval"]


def sim_parts(cfg: Config, render: bool = False) -> EnvParts:
    """A MuJoCo world for the config, rendering only the cameras the env observes."""
    from robot_rl.sim import build_world

    cams = list(cfg.env.cameras) if cfg.env.obs_mode != "state" else []
    if render:  # a video shows the env's cameras (and the front one) side by side, even in state mode
        shown = [n for n in ("front", *cfg.env.cameras) if n in cfg.cameras]
        cams += [n for n in dict.fromkeys(shown) if n not in cams]
    world = build_world(make_task(cfg), cams)
    return EnvParts(world.robot, dict(world.cameras), world, world.task)


def make_env(cfg: Config, *, render_mode: str | None = None, parts: EnvParts | None = None) -> gym.Env:
    """The env a config describes, with its wrappers. Without ``parts``, a sim env; with ``env.gym_id``,
    that registered gymnasium env (:mod:`robot_rl.envs.gym_env`)."""
    if cfg.env.gym_id is not None and parts is None:
        return gym_env(cfg, render_mode=render_mode)
    if parts is None:
        spec = get_task(cfg.task.name)
        if spec.real_only:
            raise spec.no_sim("this command's env")
        if cfg.robot.backend != "sim":
            raise ConfigError(f"robot.backend is '{cfg.robot.backend}': make_env builds sim envs only; "
                              "hardware envs are built by the actor node over topics")
        parts = sim_parts(cfg, render=render_mode == "rgb_array")
    env = RobotEnv(cfg, parts.robot, parts.cameras, parts.clock, parts.task, render_mode=render_mode)
    return wrap_env(env, cfg)


def gym_env(cfg: Config, *, render_mode: str | None = None) -> gym.Env:
    """The registered gymnasium env ``env.gym_id`` as robot_rl's (:mod:`robot_rl.envs.gym_env`)."""
    from robot_rl.envs.gym_env import make_gym_env

    assert cfg.env.gym_id is not None
    return make_gym_env(cfg.env.gym_id, kwargs=dict(cfg.env.gym_kwargs), obs_map=cfg.env.gym_obs,
                        max_episode_steps=cfg.env.max_episode_steps, render_mode=render_mode)


def config_spaces_env(cfg: Config) -> gym.Env:
    """An env with the spaces an actor of ``cfg`` sends, computed from the config alone.

    The actors' env (:func:`make_env` and :func:`policy_view`) built on backends that hold
    no robot (:mod:`robot_rl.envs.spaces_only`): the same wrappers give the same spaces,
    with no sim, driver or topic. The learner of any robot backend, and every config of a
    real-only task, get their spaces here. Task state (``state``/``both`` modes) is the sim
    task's on ``robot.backend: sim`` and none on a robot, as the actors' tasks have.
    Resetting or stepping it raises.
    """
    from robot_rl.envs.spaces_only import NoCamera, NoClock, NoRobot, NoTask

    if cfg.env.gym_id is not None:  # its spaces are the built env's: building one is cheap and moves nothing
        return policy_view(gym_env(cfg), cfg)
    spec = get_task(cfg.task.name)
    state_dim = spec.task.state_dim if cfg.robot.backend == "sim" and not spec.real_only else 0
    cameras = {name: NoCamera() for name in cfg.env.cameras} if cfg.env.obs_mode != "state" else {}
    return policy_view(make_env(cfg, parts=EnvParts(NoRobot(), cameras, NoClock(), NoTask(state_dim))), cfg)


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


def _simulated(cfg: Any, *, env: gym.Env, task: str, **_: Any) -> InputDevice:
    """The scripted person, with the scripted expert of ``task`` (the env may run over topics)."""
    from robot_rl.sim.intervener import SimulatedIntervener

    return SimulatedIntervener(cfg, env, get_task(task).make_expert)


def person_device(cfg: Config, env: gym.Env, *, over_topic: InputDevice | None = None,
                  **context: Any) -> InputDevice | None:
    """Who may take over ``env``: the devices ``intervention.device`` names, as one device.

    In the node graph the SpaceMouse and keyboard are read by the intervention node and
    reach the actor over topics: pass that reader as ``over_topic`` and it stands for
    them. ``simulated`` (the scripted person) is built here either way; ``none`` and an
    empty list give ``None``. ``context`` goes to the device builders (tests pass fake
    hardware libraries this way).
    """
    from robot_rl.envs.inputs import MergedInput

    names = [n for n in cfg.intervention.device.split("+") if n != "none"]
    devices: list[InputDevice] = []
    if over_topic is not None:
        devices.append(over_topic)
        names = [n for n in names if n not in HELD_DEVICES]
    if names:
        from robot_rl_drivers.input import INPUT_DEVICES, make_input_device

        registry = {**INPUT_DEVICES, "simulated": _simulated}
        wanted = dataclasses.replace(cfg.intervention, device="+".join(names))
        devices.append(make_input_device(wanted, registry, env=env, task=cfg.task.name, **context))
    if not devices:
        return None
    return devices[0] if len(devices) == 1 else MergedInput(devices)


def make_actor_env(cfg: Config, role: EnvRole = "train", *, parts: EnvParts | None = None,
                   human: bool = True, over_topic: InputDevice | None = None, render_mode: str | None = None,
                   **device_context: Any) -> gym.Env:
    """The env an actor practises in, in the one order every actor uses.

    ``make_env``, then the reward classifier (``reward.classifier_path``; not for
    ``eval``, which scores by the task's own success), then the policy's view
    (``env.policy_keys``), then, for ``train`` with ``human``, the person
    (:func:`person_device`), outermost so a person's labels overrule the classifier.
    ``demos`` is the same without the person: scripted demonstrations are rewarded as
    practice is. With ``viz.rerun`` on, ``train`` envs get the live view
    (:class:`~robot_rl.envs.live_view.LiveView`) around all of it, so it shows what the
    learner gets: the executed action, the final reward, intervention and success.
    """
    if role == "demos" and cfg.env.gym_id is not None:
        raise ConfigError(f"env.gym_id '{cfg.env.gym_id}': a gymnasium env has no scripted expert to record "
                          "demos with; set train.scripted_demos=0 and give recorded demos in train.demos "
                          "(robot-rl demos import --format lerobot makes them from a LeRobotDataset)")
    env = make_env(cfg, parts=parts, render_mode=render_mode)
    if role != "eval":
        from robot_rl.reward.wrapper import wrap_reward  # torch: imported only when needed

        env = wrap_reward(env, cfg)
    env = policy_view(env, cfg)
    if role == "train" and human:
        env = with_person(env, cfg, over_topic=over_topic, **device_context)
    if role == "train" and cfg.viz.rerun != "off":
        from robot_rl.envs.live_view import with_live_view  # rerun: imported only when it is on

        env = with_live_view(env, cfg.viz, run_dir=cfg.train.run_dir, name=cfg.task.name)
    return env


def with_person(env: gym.Env, cfg: Config, *, over_topic: InputDevice | None = None, **context: Any) -> gym.Env:
    """``env`` inside :class:`~robot_rl.envs.intervention.HumanIntervention` when anyone may take over."""
    from robot_rl.envs.intervention import HumanIntervention

    device = person_device(cfg, env, over_topic=over_topic, **context)
    return env if device is None else HumanIntervention(env, device, penalty=cfg.intervention.penalty)


def make_recording_env(cfg: Config, source: str, **device_context: Any) -> gym.Env:
    """The env a source records in, with the observation the learner trains on.

    ``scripted``: the actor's ``demos`` env. A human source: the actor's ``train`` env,
    whose outermost wrapper reads ``cfg``'s input device (pass ``human_config(cfg,
    source)``); a missing device or display is the driver's one-line DeviceError, raised
    here. ``device_context`` goes to the device builders (tests hand in fake hidapi or
    pynput here).
    """
    from robot_rl.data.recording import HUMAN_SOURCES

    if source in HUMAN_SOURCES:
        return make_actor_env(cfg, "train", human=True, **device_context)
    return make_actor_env(cfg, "demos")


def reward_recording_env(cfg: Config) -> gym.Env:
    """The sim env reward frames are recorded in: ``reward.cameras`` observed, no classifier."""
    from robot_rl.reward.collect import recording_config

    return make_env(recording_config(cfg))


def make_registered_env(task: str, obs_mode: str = "state", config: str | None = None,
                        overrides: tuple[str, ...] = (), render_mode: str | None = None) -> gym.Env:
    """Entry point of the gymnasium ids ``robot_rl/<Task>-v0``: the task's own config by default."""
    path = resolve_config(config or get_task(task).config)
    cfg = load_config(path, [f"env.obs_mode={obs_mode}", *overrides])
    if cfg.task.name != task:
        raise ConfigError(f"{path}: task.name is '{cfg.task.name}', expected '{task}'")
    return make_env(cfg, render_mode=render_mode)
