"""ClassifierReward: the classifier decides reward and success; ground truth stays in info."""

import gymnasium as gym
import numpy as np
import pytest
import torch

from robot_rl.config.reward import RewardEncoderConfig
from robot_rl.errors import ConfigError
from robot_rl.reward.model import RewardClassifier
from robot_rl.reward.wrapper import ClassifierReward, ConsecutivePositives


class ScriptedEnv(gym.Env):
    """Front image brightness and ground-truth success follow a script, one entry per step."""

    def __init__(self, brightness, gt, size=(24, 24)):
        self.brightness, self.gt = list(brightness), list(gt)
        h, w = size[1], size[0]
        self.observation_space = gym.spaces.Dict({
            "state": gym.spaces.Box(-1, 1, (2,), np.float32),
            "front": gym.spaces.Box(0, 255, (h, w, 3), np.uint8)})
        self.action_space = gym.spaces.Box(-1, 1, (2,), np.float32)
        self.t = 0

    def _obs(self, value):
        space = self.observation_space["front"]
        return {"state": np.zeros(2, np.float32), "front": np.full(space.shape, value, np.uint8)}

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return self._obs(0), {"success": False}

    def step(self, action):
        b, s = self.brightness[self.t], self.gt[self.t]
        self.t += 1
        return self._obs(b), float(s), bool(s), self.t >= len(self.gt), {"success": bool(s)}


class BrightnessClassifier:
    """Duck-typed classifier: logit = mean brightness / 255 * 10 - 5 (positive above ~128)."""

    cameras = ["front"]
    image_size = (8, 8)
    threshold = 0.0

    def score(self, obs):
        return float(obs["front"].mean() / 255.0 * 10 - 5)

    def decide(self, score):
        return score > self.threshold


def test_consecutive_positives_counts_runs():
    c = ConsecutivePositives(3)
    assert [c.update(x) for x in [1, 1, 0, 1, 1, 1, 1, 0]] == [False, False, False, False, False, True, True, False]
    c.update(True)
    c.reset()
    assert c.streak == 0 and not c.update(True)
    assert ConsecutivePositives(1).update(True)
    with pytest.raises(ValueError):
        ConsecutivePositives(0)


@pytest.mark.parametrize("n, ends_at", [(1, 1), (2, 4)])
def test_reward_and_termination_come_from_the_classifier(n, ends_at):
    # step:           0    1    2    3    4    5
    brightness = [0, 255, 0, 255, 255, 255]
    gt = [False, False, False, True, True, True]  # ground truth disagrees on purpose
    env = ClassifierReward(ScriptedEnv(brightness, gt), BrightnessClassifier(), consecutive=n)
    _, info = env.reset()
    assert info["success"] is False and info["gt_success"] is False
    for t in range(len(gt)):
        _, reward, terminated, truncated, info = env.step(np.zeros(2))
        assert info["gt_success"] == gt[t]  # kept for evaluation
        assert info["reward_streak"] == [0, 1, 0, 1, 2, 3][t]
        assert info["success"] == (info["reward_streak"] >= n)
        if t < ends_at:
            assert reward == 0.0 and not terminated  # inner terminated (gt) is ignored at t=3 when n=2
        if t == ends_at:
            assert reward == 1.0 and terminated and info["reward_streak"] == n
            break


def test_streak_restarts_each_episode():
    env = ClassifierReward(ScriptedEnv([255, 255, 255], [0, 0, 0]), BrightnessClassifier(), consecutive=2)
    env.reset()
    env.step(np.zeros(2))
    env.reset()
    _, r, term, _, info = env.step(np.zeros(2))
    assert not term and info["reward_streak"] == 1


def test_missing_camera_is_a_clear_error():
    clf = BrightnessClassifier()
    clf.cameras = ["front", "wrist"]
    with pytest.raises(ConfigError, match=r"needs camera\(s\) \['wrist'\]"):
        ClassifierReward(ScriptedEnv([0], [0]), clf)


def test_real_classifier_resizes_observations_as_at_recording():
    torch.manual_seed(0)
    clf = RewardClassifier(["front"], (16, 16), RewardEncoderConfig(channels=(4,), strides=(2,), latent_dim=4), 4)
    env = ClassifierReward(ScriptedEnv([10, 200], [0, 0], size=(40, 30)), clf, consecutive=1)
    env.reset()
    _, _, _, _, info = env.step(np.zeros(2))
    direct = float(clf.logits({"front": np.full((1, 16, 16, 3), 10, np.uint8)})[0])
    assert info["reward_score"] == pytest.approx(direct, abs=1e-5)
    assert info["success"] == (direct > clf.threshold)


def test_a_termination_other_than_success_passes_through():
    class FailingEnv(ScriptedEnv):
        def step(self, action):
            obs, r, _, trunc, info = super().step(action)
            return obs, 0.0, True, trunc, {"success": False}  # e.g. the cube fell off the table

    env = ClassifierReward(FailingEnv([0, 0], [False, False]), BrightnessClassifier(), consecutive=1)
    env.reset()
    _, reward, terminated, _, info = env.step(np.zeros(2))
    assert terminated and reward == 0.0 and info["success"] is False


def test_wrap_reward_loads_the_configured_classifier_around_a_sim_env(tmp_path):
    from robot_rl.assemble import make_env
    from robot_rl.paths import resolve_config
    from robot_rl.reward.model import ClassifierFileError, save_classifier
    from robot_rl.reward.wrapper import wrap_reward
    from robot_rl.tasks import load_config

    overrides = ["env.obs_mode=pixels", "reward.image_size=[16,16]", "reward.encoder.channels=[4]",
                 "reward.encoder.strides=[2]", "reward.encoder.latent_dim=4", "reward.hidden_dim=4"]
    cfg = load_config(resolve_config("pick_cube"), overrides)
    env = make_env(cfg)
    assert wrap_reward(env, cfg) is env  # no classifier configured: ground truth stays the reward
    torch.manual_seed(0)
    clf = RewardClassifier.from_config(cfg.reward)
    clf.threshold = 1e9  # never success: the episode must run on past ground-truth success
    path = tmp_path / "clf.pt"
    save_classifier(path, clf, held_out={"accuracy": 1.0, "fpr": 0.0, "recall": 1.0})
    cfg = load_config(resolve_config("pick_cube"), overrides + [f"reward.classifier_path={path}",
                                                                 "reward.consecutive=3"])
    wrapped = wrap_reward(env, cfg)
    assert isinstance(wrapped, ClassifierReward) and wrapped.counter.n == 3
    expert = wrapped.unwrapped.task.make_expert(wrapped, seed=0)
    obs, _ = wrapped.reset(seed=0)
    seen_gt = False
    for _ in range(cfg.env.max_episode_steps):
        obs, reward, terminated, truncated, info = wrapped.step(expert.act(obs))
        assert info["gt_success"] == env.unwrapped.task.success()
        assert reward == 0.0 and not info["success"] and not terminated
        seen_gt |= info["gt_success"]
        if truncated:
            break
    assert seen_gt  # the expert did succeed; only the classifier's verdict counted
    bad = load_config(resolve_config("pick_cube"), overrides + [f"reward.classifier_path={path}",
                                                                "reward.image_size=[32,32]"])
    with pytest.raises(ClassifierFileError, match="trained on 16x16 images, but reward.image_size is 32x32"):
        wrap_reward(env, bad)
    env.close()
