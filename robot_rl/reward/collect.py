"""The recording loop: drive the env, label each observed frame, write it at once.

It knows neither where motions come from (a sim scenario driver, a scripted expert, a
human moving the arm) nor where labels come from (ground truth or keys): both are
passed in. Episodes end on truncation or when the driver is done; an env's own
``terminated`` does not end them, because the frames after success are the positives.

On a robot the actor node runs the episodes (its policy, often ``human``) and
:class:`StepFrames` records the frames of its Steps as they come, labelled by the
person's keys (:func:`actor_frames`): the same frame format, written chunk by chunk.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

import gymnasium as gym
import numpy as np

from robot_rl.config import Config
from robot_rl.data.transition import Step
from robot_rl.errors import ConfigError, DeviceError
from robot_rl.interfaces import InputDevice
from robot_rl.reward.dataset import FrameWriter
from robot_rl.reward.frames import classifier_images
from robot_rl.reward.labels import KeyLabels, LabelSource

log = logging.getLogger(__name__)


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
    """``cfg`` with an env that observes the reward cameras (obs_mode ``both`` if it was ``state``).

    The classifier is off (``reward.classifier_path`` null): frames are recorded to train
    one, and its verdict must not end episodes while they are.
    """
    rcfg = cfg.reward
    undefined = [c for c in rcfg.cameras if c not in cfg.cameras]
    if undefined:
        raise ConfigError(f"reward.cameras names {undefined}, which 'cameras' does not define")
    cams = list(cfg.env.cameras) + [c for c in rcfg.cameras if c not in cfg.env.cameras]
    obs_mode = "both" if cfg.env.obs_mode == "state" else cfg.env.obs_mode
    return dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, obs_mode=obs_mode, cameras=cams),
                               reward=dataclasses.replace(rcfg, classifier_path=None))


def record_sim(cfg: Config, out: str | Path, env: gym.Env, *, frames: int, labels: LabelSource | None = None,
               seed: int = 0, append: bool = False,
               on_frame: Callable[[RecordStats], None] | None = None) -> RecordStats:
    """Record ``frames`` reward frames in sim with the hard-case scenarios into ``out``.

    ``env`` is the sim env of ``recording_config(cfg)`` (built by the caller through
    :mod:`robot_rl.assemble`; the caller closes it). Labels are ground truth unless
    another ``labels`` source is given (e.g. keys).
    """
    from robot_rl.reward.labels import GroundTruthLabels

    if cfg.robot.backend != "sim":
        raise ConfigError(f"robot.backend is '{cfg.robot.backend}': sim recording needs the sim backend")
    labels = GroundTruthLabels() if labels is None else labels
    driver = env.unwrapped.task.make_scenarios(env, cfg.reward.collect, seed=seed)  # the sim task's own
    writer = FrameWriter(out, cameras=cfg.reward.cameras, image_size=cfg.reward.image_size,
                         task=cfg.task.name, label_source=labels.name, tags=driver.tags,
                         chunk_frames=cfg.reward.collect.chunk_frames, append=append)
    return record_frames(env, driver, labels, writer, frames=frames, seed=seed, on_frame=on_frame)


# --- on a robot: the actor node's episodes ------------------------------------------------


class StepFrames:
    """Records the frames of an actor's Steps as they come: the actor node's reward-frame hook.

    Contract: feed every Step in order with :meth:`add`. A step's frame is its
    ``next_obs`` (what the step led to); its label is read from ``labels`` once, right
    after the step, so a press during step ``t`` labels frame ``t`` on. ``labels``
    starts a new episode at each step 0 and the writer one after each last step; a step
    a stop cut short (``stopped``: its observation is the previous one again) writes
    nothing. A label source whose device is lost ends the recording (one warning), not
    the session. Full chunks are on disk as they fill; :meth:`close` writes the rest.
    """

    def __init__(self, env: gym.Env, writer: FrameWriter, labels: LabelSource, tag: str = "recorded") -> None:
        self.env, self.writer, self.labels, self.tag = env, writer, labels, tag
        self.stats = RecordStats()
        self.lost = False
        self._label: bool | None = None

    def add(self, step: Step, *, stopped: bool = False) -> None:
        if self.lost:
            return
        if step.step == 0:
            self.labels.start_episode()
        if not stopped:
            try:
                label = self.labels.read(self.env)
            except DeviceError as err:
                log.warning("reward frames: recording ended, %s", err)
                self.lost = True
                label = None
            else:
                self.stats.stopped |= label.stop
            if label is not None and label.success is not None and not label.stop:
                self._write(step.next_obs, label.success)
        if step.last or stopped:
            self.writer.end_episode()
            self.stats.episodes += 1

    def _write(self, obs: dict[str, np.ndarray], success: bool) -> None:
        if success != self._label:
            log.info("reward frames: labelling %s from frame %d", "success" if success else "failure",
                     self.stats.frames)
            self._label = success
        self.writer.add(classifier_images(obs, self.writer.cameras, self.writer.image_size), success, self.tag)
        self.stats.frames += 1
        self.stats.positives += int(success)
        counts = self.stats.per_tag.setdefault(self.tag, [0, 0])
        counts[0] += 1
        counts[1] += int(success)

    def close(self) -> None:
        self.writer.close()


def check_frame_cameras(cfg: Config, space: gym.Space) -> None:
    """Refuse an actor env whose observation lacks a reward camera (``env.policy_keys`` can drop one)."""
    have = list(space.spaces) if isinstance(space, gym.spaces.Dict) else []
    missing = [c for c in cfg.reward.cameras if c not in have]
    if missing:
        raise ConfigError(f"ros.reward_frames_dir records reward.cameras {list(cfg.reward.cameras)} from the actor's "
                          f"observation, which lacks {missing} (it has {have}); add them to env.policy_keys, or set "
                          "env.policy_keys null while recording")


def actor_frames(cfg: Config, env: gym.Env, device: InputDevice) -> StepFrames:
    """The recorder for ``ros.reward_frames_dir`` (appending), labelled by keys from ``device``.

    ``device`` is the label side of the session's :class:`~robot_rl.reward.labels.LabelKeyTap`.
    """
    check_frame_cameras(cfg, env.observation_space)
    labels = KeyLabels(device)
    writer = FrameWriter(cfg.ros.reward_frames_dir, cameras=cfg.reward.cameras, image_size=cfg.reward.image_size,
                         task=cfg.task.name, label_source=labels.name, tags=["recorded"],
                         chunk_frames=cfg.reward.collect.chunk_frames, append=True)
    return StepFrames(env, writer, labels)
