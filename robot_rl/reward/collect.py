"""The recording loop: drive the env, label each observed frame, write it at once.

It knows neither where motions come from (a sim scenario driver, a scripted expert, a
human moving the arm) nor where labels come from (ground truth or keys): both are
passed in. Episodes end on truncation or when the driver is done; an env's own
``terminated`` does not end them, because the frames after success are the positives.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

import gymnasium as gym
import numpy as np

from robot_rl.config import Config
from robot_rl.errors import ConfigError
from robot_rl.reward.dataset import FrameWriter
from robot_rl.reward.frames import classifier_images
from robot_rl.reward.labels import LabelSource


class Driver(Protocol):
    """What moves the robot while frames are recorded."""

    tag: str
    done: bool

    def reset(self) -> None: ...

    def act(self, obs: dict[str, np.ndarray]) -> np.ndarray: ...


@dataclass
class RecordStats:
    frames: int = 0
    positives: int = 0
    episodes: int = 0
    stopped: bool = False
    per_tag: dict[str, list[int]] = field(default_factory=dict)  # tag -> [frames, positives]

    def summary(self) -> str:
        share = self.positives / max(1, self.frames)
        return f"{self.frames} frames ({self.positives} success, {share:.0%}) in {self.episodes} episodes"


def record_frames(env: gym.Env, driver: Driver, labels: LabelSource, writer: FrameWriter, *, frames: int,
                  seed: int = 0, max_episode_steps: int | None = None,
                  on_frame: Callable[[RecordStats], None] | None = None) -> RecordStats:
    """Record until ``frames`` frames are written or the label source says stop.

    Episode ``i`` resets with seed ``seed + i``. ``max_episode_steps`` bounds an episode
    when the env has no time limit of its own.
    """
    stats = RecordStats()
    cams, size = writer.cameras, writer.image_size

    def keep(obs: dict[str, np.ndarray]) -> bool:
        label = labels.read(env)
        if label.stop:
            stats.stopped = True
            return False
        if label.success is not None:
            writer.add(classifier_images(obs, cams, size), label.success, driver.tag or "recorded")
            stats.frames += 1
            stats.positives += int(label.success)
            counts = stats.per_tag.setdefault(driver.tag or "recorded", [0, 0])
            counts[0] += 1
            counts[1] += int(label.success)
            if on_frame is not None:
                on_frame(stats)
        return True

    try:
        while stats.frames < frames and not stats.stopped:
            obs, _ = env.reset(seed=seed + stats.episodes)
            driver.reset()
            labels.start_episode()
            steps = 0
            running = keep(obs)
            while running and stats.frames < frames:
                obs, _, _, truncated, _ = env.step(driver.act(obs))
                steps += 1
                running = keep(obs)
                if truncated or driver.done or (max_episode_steps is not None and steps >= max_episode_steps):
                    break
            writer.end_episode()
            stats.episodes += 1
    finally:
        writer.close()
    return stats


def recording_config(cfg: Config) -> Config:
    """``cfg`` with an env that observes the reward cameras (obs_mode ``both`` if it was ``state``)."""
    rcfg = cfg.reward
    undefined = [c for c in rcfg.cameras if c not in cfg.cameras]
    if undefined:
        raise ConfigError(f"reward.cameras names {undefined}, which 'cameras' does not define")
    cams = list(cfg.env.cameras) + [c for c in rcfg.cameras if c not in cfg.env.cameras]
    obs_mode = "both" if cfg.env.obs_mode == "state" else cfg.env.obs_mode
    return dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, obs_mode=obs_mode, cameras=cams))


def record_sim(cfg: Config, out: str | Path, *, frames: int, labels: LabelSource | None = None, seed: int = 0,
               append: bool = False, env: gym.Env | None = None,
               on_frame: Callable[[RecordStats], None] | None = None) -> RecordStats:
    """Record ``frames`` reward frames in sim with the hard-case scenarios into ``out``.

    Labels are ground truth unless another ``labels`` source is given (e.g. keys).
    """
    from robot_rl.envs import make_env
    from robot_rl.reward.labels import GroundTruthLabels
    from robot_rl.reward.scenarios import make_scenario_driver

    if cfg.robot.backend != "sim":
        raise ConfigError(f"robot.backend is '{cfg.robot.backend}': sim recording needs the sim backend")
    own_env = env is None
    env = make_env(recording_config(cfg)) if env is None else env
    labels = GroundTruthLabels() if labels is None else labels
    try:
        driver = make_scenario_driver(env, cfg.reward.collect, seed=seed)
        writer = FrameWriter(out, cameras=cfg.reward.cameras, image_size=cfg.reward.image_size,
                             task=cfg.task.name, label_source=labels.name, tags=driver.tags,
                             chunk_frames=cfg.reward.collect.chunk_frames, append=append)
        return record_frames(env, driver, labels, writer, frames=frames, seed=seed, on_frame=on_frame)
    finally:
        if own_env:
            env.close()
