"""Reward from the classifier instead of from the task: :class:`ClassifierReward`.

Contract with the env it wraps: observations hold the classifier's cameras as
``uint8 (H, W, 3)`` images (any size; they are resized as at recording time), and
``info["success"]`` is the task's own verdict (ground truth in sim). Outward:

* ``reward`` is 1.0 and ``terminated`` is true when the classifier has called the last
  ``consecutive`` frames success; otherwise reward is 0.0. The inner env's termination
  *on success* (ground truth) is dropped; a termination without success (some other
  end, e.g. a failure) passes through, and so does ``truncated``.
* ``info["success"]`` is the classifier's verdict; ``info["gt_success"]`` keeps the inner
  verdict, for evaluation only (never for learning); ``info["reward_score"]`` is the logit
  and ``info["reward_streak"]`` the current run of positive frames.

Place it inside :class:`robot_rl.envs.intervention.HumanIntervention` (which stays the
outermost wrapper), so that a person's success/failure keys overrule the classifier.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from robot_rl.agents import resolve_device
from robot_rl.config import Config
from robot_rl.errors import ConfigError
from robot_rl.reward.model import RewardClassifier, load_classifier


class ConsecutivePositives:
    """Success once ``n`` frames in a row were positive; any negative frame starts over."""

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError(f"consecutive must be at least 1, got {n}")
        self.n = int(n)
        self.streak = 0

    def reset(self) -> None:
        self.streak = 0

    def update(self, positive: bool) -> bool:
        self.streak = self.streak + 1 if positive else 0
        return self.streak >= self.n


class ClassifierReward(gym.Wrapper):
    """Replace the env's reward and success with a reward classifier's (see module doc)."""

    def __init__(self, env: gym.Env, classifier: RewardClassifier, consecutive: int = 1) -> None:
        super().__init__(env)
        space = env.observation_space
        missing = [c for c in classifier.cameras
                   if not isinstance(space, gym.spaces.Dict) or c not in space.spaces]
        if missing:
            raise ConfigError(f"the reward classifier needs camera(s) {missing}, which the env's observation "
                              "lacks; list them in env.cameras and use env.obs_mode pixels or both")
        self.classifier = classifier
        self.counter = ConsecutivePositives(consecutive)

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self.counter.reset()
        info["gt_success"] = bool(info.get("success", False))
        info["success"] = False
        info["reward_streak"] = 0
        return obs, info

    def step(self, action: np.ndarray):
        obs, _, inner_terminated, truncated, info = self.env.step(action)
        score = self.classifier.score(obs)
        success = self.counter.update(self.classifier.decide(score))
        gt_success = bool(info.get("success", False))
        info["gt_success"] = gt_success
        info["success"] = success
        info["reward_score"] = score
        info["reward_streak"] = self.counter.streak
        terminated = success or (bool(inner_terminated) and not gt_success)
        return obs, float(success), terminated, truncated, info


def wrap_reward(env: gym.Env, cfg: Config, classifier: RewardClassifier | None = None) -> gym.Env:
    """``env`` with its reward from ``reward.classifier_path`` (unchanged when that is null)."""
    if classifier is None:
        if cfg.reward.classifier_path is None:
            return env
        classifier = load_classifier(cfg.reward.classifier_path, cfg.reward, device=resolve_device(cfg.reward.device))
    return ClassifierReward(env, classifier, cfg.reward.consecutive)
