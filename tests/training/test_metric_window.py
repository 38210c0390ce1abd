"""Training metrics averaged over the logging window, from device-side sums."""

import math

import numpy as np
import pytest
import torch

from robot_rl.config.agent import AgentConfig, TrainConfig
from robot_rl.data.rollout import ActorLoop
from robot_rl.training.learner import Learner
from robot_rl.training.metric_window import MetricWindow

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # small learner ops run faster on one thread


def filled_learner(env_fn, expert_cls, ratio=1):
    env = env_fn()
    expert = expert_cls(env)
    learner = Learner(AgentConfig(hidden_dims=(32, 32), gripper_critic=True, critic_actor_ratio=ratio),
                      TrainConfig(batch_size=32), env.observation_space, env.action_space, seed=4)
    loop = ActorLoop(env, expert, seed=0)
    for _ in range(80):
        learner.ingest(loop.step())
    return learner


def test_the_window_average_is_the_mean_of_each_update_and_the_window_resets(point_env_fn, point_expert_cls):
    # one learner logs through the window; its twin (same seed, same data) reads every update on its own
    logged = filled_learner(point_env_fn, point_expert_cls, ratio=2)
    twin = filled_learner(point_env_fn, point_expert_cls, ratio=2)
    per_update = []
    for _ in range(5):
        logged.update()
        per_update.append({k: float(v) for k, v in twin.update().items()})
    window = logged.window_metrics()
    assert set(window) == {"critic_loss", "q_mean", "target_q_mean", "gripper_loss", "gripper_q_mean",
                           "actor_loss", "entropy", "temperature", "temperature_loss"}
    for key, value in window.items():
        values = [m[key] for m in per_update if key in m]
        assert len(values) == (2 if key in ("actor_loss", "entropy", "temperature", "temperature_loss") else 5)
        assert value == pytest.approx(np.mean(values), rel=1e-6, abs=1e-9), key
    assert len({m["critic_loss"] for m in per_update}) == 5  # the updates differ: a last value is not the mean
    assert logged.window_metrics() == {}  # the window was reset: nothing since
    for _ in range(2):
        logged.update()
        per_update.append({k: float(v) for k, v in twin.update().items()})
    window = logged.window_metrics()
    assert window["critic_loss"] == pytest.approx(np.mean([m["critic_loss"] for m in per_update[5:]]), rel=1e-6)
    assert window["actor_loss"] == pytest.approx(per_update[5]["actor_loss"], rel=1e-6)  # update 6 of 7 only


def test_non_finite_and_huge_values_are_averaged_not_hidden():
    window = MetricWindow()
    window.add({"loss": torch.tensor(1.0), "q": torch.tensor(3e38)})
    window.add({"loss": torch.tensor(float("nan")), "q": torch.tensor(3e38)})
    window.add({"other": torch.tensor(float("inf"))})
    assert window.updates == 3
    means = window.means()
    assert math.isnan(means["loss"]) and means["other"] == math.inf
    assert means["q"] == pytest.approx(3e38, rel=1e-6)  # float64 sums: two float32 maxima do not overflow
    window.add({})
    assert window.means() == {} and window.updates == 0
    window.add({"loss": torch.tensor([2.0]), "bf16": torch.tensor(0.5, dtype=torch.bfloat16)})
    assert window.means() == {"loss": 2.0, "bf16": 0.5}
