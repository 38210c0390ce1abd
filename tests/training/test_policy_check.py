"""A loaded policy is run before it acts; a policy that gives NaN at run time holds the arm.

A real checkpoint is made with the project's own trainer (the point-mass env: no MuJoCo),
then poisoned the ways a finite-looking file can still be unusable: a normalizer variance
of -1, weights times 1e38, a NaN or inf normalizer mean, a zeroed variance, a huge bias, a
negative count. Each is one CheckpointError line naming the state file, from the loader
and from ``--resume`` of the trainer and of the learner. Then the core check itself
(:mod:`robot_rl.agents.policy_check`) on plain callables, and :class:`ActionGuard`, which
holds and counts, in an actor process too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from point_reach import make_point_env
from poisoned_checkpoints import rewrite_policy, variance_minus_one, weights_times_1e38

from robot_rl.agents.policy_check import (
    MAX_PRE_SQUASH,
    ActionGuard,
    EndOnRefusal,
    action_problem,
    network_problem,
    policy_problem,
    sample_observations,
)
from robot_rl.config import Config
from robot_rl.config.agent import TrainConfig
from robot_rl.training.checkpoint import CheckpointError
from robot_rl.training.saved_policy import load_policy

pytestmark = pytest.mark.usefixtures("one_torch_thread")

BOX = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)


def make_cfg(run_dir: Path) -> Config:
    cfg = Config()
    cfg.agent.hidden_dims = (32, 32)
    cfg.train = TrainConfig(total_env_steps=60, utd_ratio=1.0, batch_size=16, learning_starts=20, scripted_demos=0,
                            eval_every=0, eval_episodes=0, checkpoint_every=0, progress=False, run_dir=str(run_dir),
                            replay_capacity=500, demo_capacity=200)
    return cfg


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory) -> Path:
    """A ``robot-rl train`` run of the point-mass env, ended with its checkpoint after real updates."""
    from robot_rl.training.trainer import Trainer

    run = tmp_path_factory.mktemp("policy_check") / "run"
    torch.set_num_threads(1)
    trainer = Trainer(make_cfg(run), env_fn=lambda c: make_point_env(), tensorboard=False)
    try:
        trainer.run()
    finally:
        trainer.close()
    assert trainer.learner.updates_done > 0
    return run


@pytest.fixture
def run_copy(trained_run, tmp_path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(trained_run, run)
    return run


def _set(key: str, fill) -> callable:
    def change(policy: dict) -> None:
        value = policy[key].clone()
        policy[key] = fill(value)
    return change


POISONS = {
    "variance -1": (variance_minus_one, "the policy cannot act: normalizer variance of 'state'[0] is -1"),
    "weights x1e38": (weights_times_1e38, "the policy computes non-finite values on sampled observations"),
    "NaN mean": (_set("encoder.normalizer.mean", lambda v: v.fill_(float("nan"))),
                 "holds NaN or inf in 'agent.policy.encoder.normalizer.mean'"),
    "inf mean": (_set("encoder.normalizer.mean", lambda v: v.fill_(float("inf"))),
                 "holds NaN or inf in 'agent.policy.encoder.normalizer.mean'"),
    "zeroed variance": (_set("encoder.normalizer.m2", lambda v: v.zero_()),
                        "the policy cannot act: normalizer variance is 0 in every dimension after"),
    "one dimension's variance -1e-3": (_set("encoder.normalizer.m2", lambda v: v.index_fill_(0, torch.tensor([3]),
                                                                                             -1e-3)),
                                       "normalizer variance of 'state'[3] is -"),
    "huge bias": (_set("actor_head.mean.bias", lambda v: v.fill_(1e30)),
                  "the policy's actions are far outside the action space before the squash on sampled "
                  "observations ([1e+30, 1e+30, 1e+30]; at most 1000 is accepted)"),
    "huge trunk bias": (_set("actor_trunk.0.bias", lambda v: v.fill_(1e37)), "on sampled observations"),
    "negative count": (_set("encoder.normalizer.count", lambda v: v.fill_(-5.0)),
                       "the policy cannot act: its state normalizer's count is -5"),
}


def test_the_trained_policy_passes_the_check_and_its_statistics_are_real(trained_run):
    env = make_point_env()
    cfg = make_cfg(trained_run)
    saved = load_policy(trained_run, cfg.agent, env.observation_space, env.action_space)
    count = float(saved.policy.encoder.normalizer.count)
    assert count >= 20  # the poisons below change statistics a real run produced
    assert network_problem(saved.policy, env.observation_space, env.action_space) is None


@pytest.mark.parametrize("poison", list(POISONS))
def test_a_poisoned_checkpoint_is_one_line_naming_the_file(run_copy, poison):
    change, words = POISONS[poison]
    path = rewrite_policy(run_copy, change)
    env = make_point_env()
    cfg = make_cfg(run_copy)
    with pytest.raises(CheckpointError) as err:
        load_policy(run_copy, cfg.agent, env.observation_space, env.action_space)
    message = str(err.value)
    assert "\n" not in message and str(path) in message, message
    assert words in message, message
    print(f"\n{poison}: {message}")


@pytest.mark.parametrize("poison", ["variance -1", "weights x1e38", "huge bias"])
def test_resume_refuses_a_poisoned_checkpoint_in_one_line(run_copy, poison):
    from robot_rl.training.trainer import Trainer

    path = rewrite_policy(run_copy, POISONS[poison][0])
    with pytest.raises(CheckpointError) as err:
        Trainer(make_cfg(run_copy), resume=True, env_fn=lambda c: make_point_env(), tensorboard=False)
    message = str(err.value)
    assert "\n" not in message and str(path) in message and "move the checkpoint folder aside" in message, message
    assert POISONS[poison][1] in message, message


def test_the_learner_refuses_a_poisoned_checkpoint_at_resume(tmp_path):
    from point_reach import PointExpert

    from robot_rl.data.rollout import ActorLoop
    from robot_rl.training.remote.learner_process import LearnerProcess

    cfg = make_cfg(tmp_path / "learner")
    learner = LearnerProcess(cfg, "token", env_fn=lambda c: make_point_env(), evaluate=False, tensorboard=False)
    env = make_point_env()
    learner.learner.add_demos([ActorLoop(env, PointExpert(env), seed=i).run_episode() for i in range(3)])
    for _ in range(5):
        learner.learner.update()
    learner.save()
    learner.metrics.close()
    learner.close()
    path = rewrite_policy(tmp_path / "learner", POISONS["variance -1"][0])
    with pytest.raises(CheckpointError) as err:
        LearnerProcess(cfg, "token", resume=True, env_fn=lambda c: make_point_env(), evaluate=False,
                       tensorboard=False)
    message = str(err.value)
    assert "\n" not in message and str(path) in message, message
    assert "normalizer variance of 'state'[0] is -1" in message and "move the checkpoint folder aside" in message


# --- the core check on plain callables --------------------------------------------------------


OBS = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (4,), np.float32),
                       "front": gym.spaces.Box(0, 255, (8, 8, 3), np.uint8)})


def test_sampled_observations_are_seeded_fit_the_space_and_leave_its_rng_alone():
    before = OBS.np_random.bit_generator.state if OBS._np_random is not None else None
    a, b = sample_observations(OBS, 4, seed=1), sample_observations(OBS, 4, seed=1)
    assert all(np.array_equal(x[k], y[k]) for x, y in zip(a, b) for k in OBS.spaces)
    assert all(OBS.contains(obs) for obs in a)
    assert not np.array_equal(a[0]["state"], sample_observations(OBS, 1, seed=2)[0]["state"])
    assert (OBS.np_random.bit_generator.state if OBS._np_random is not None else None) == before


@pytest.mark.parametrize("action, words", [
    (np.array([0.1, np.nan, 0.0]), "non-finite actions ([0.1, nan, 0])"),
    (np.array([0.1, np.inf, 0.0]), "non-finite actions ([0.1, inf, 0])"),
    (np.array([0.1, 1.5, 0.0]), "an action outside the action space ([0.1, 1.5, 0]: dimension 1 is 1.5, "
                                "the space is [-1, 1])"),
    (np.array([-1e30, 0.0, 0.0]), "dimension 0 is -1e+30"),
    (np.zeros(4), "an action of shape (4,) (the action space's is (3,))"),
    (np.array(["0.5", "0", "0"]), "an action of dtype <U3 (not real numbers)"),
    (np.array([1 + 1j, 0, 0]), "an action of dtype complex128 (not real numbers)"),
    (None, "an action of dtype object (not real numbers)"),
])
def test_an_action_that_cannot_be_sent_is_named(action, words):
    assert words in action_problem(action, BOX)


def test_actions_at_the_bounds_up_to_float_rounding_pass():
    assert action_problem(np.array([1.0, -1.0, 0.0], np.float32), BOX) is None
    assert action_problem(np.array([1.0 + 1e-6, -1.0 - 1e-6, 0.0]), BOX) is None
    assert action_problem(np.array([1.01, 0.0, 0.0]), BOX) is not None


def test_a_callable_policy_is_run_on_sampled_and_recorded_observations():
    def sane(obs):
        return np.tanh(obs["state"][:3]).astype(np.float32)

    assert policy_problem(sane, OBS, BOX) is None

    def nan_on_marker(obs):  # fine on anything sampled, NaN on what the task really showed
        return np.full(3, np.nan) if obs["state"][0] == 1234.0 else sane(obs)

    recorded = [{"state": np.array([1234.0, 0, 0, 0], np.float32), "front": np.zeros((8, 8, 3), np.uint8),
                 "extra": np.zeros(2)}]
    assert policy_problem(nan_on_marker, OBS, BOX) is None
    assert policy_problem(nan_on_marker, OBS, BOX, recorded=recorded) == (
        "the policy gives non-finite actions ([nan, nan, nan]) on recorded observations")
    misfit = [{"state": np.zeros(7, np.float32), "front": np.zeros((8, 8, 3), np.uint8)}]  # another space: unused
    assert policy_problem(lambda o: np.full(3, np.nan) if o["state"].shape != (4,) else sane(o), OBS, BOX,
                          recorded=misfit) is None

    def raises(obs):
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied {1x4}")

    assert policy_problem(raises, OBS, BOX) == ("the policy fails on sampled observations (RuntimeError: mat1 and "
                                                "mat2 shapes cannot be multiplied {1x4})")
    assert "outside the action space" in policy_problem(lambda o: np.full(3, 2.0), OBS, BOX)


def test_a_network_is_also_judged_before_its_squash_and_inside():
    from robot_rl.agents.policy import Policy

    cfg = Config()
    cfg.agent.hidden_dims = (16,)
    policy = Policy(cfg.agent, make_point_env().observation_space, BOX)
    space = make_point_env().observation_space
    assert network_problem(policy, space, BOX) is None
    with torch.no_grad():
        policy.actor_head.mean.bias.fill_(MAX_PRE_SQUASH * 2)
    assert "far outside the action space before the squash" in network_problem(policy, space, BOX)
    with torch.no_grad():
        policy.actor_head.mean.bias.fill_(MAX_PRE_SQUASH / 2)  # saturated, but within the bound
    assert network_problem(policy, space, BOX) is None
    with torch.no_grad():
        policy.actor_head.log_std.bias.fill_(float("nan"))
    assert network_problem(policy, space, BOX).startswith(
        "the policy computes non-finite values on sampled observations (log-std: [nan")


# --- at run time: hold and count ---------------------------------------------------------------


class EveryKth:
    """A policy that gives NaN on every k-th call and a fixed good action otherwise."""

    def __init__(self, k: int, good: np.ndarray) -> None:
        self.k, self.good, self.calls = k, good, 0

    def act(self, obs, *args, **kwargs):
        self.calls += 1
        return np.full_like(self.good, np.nan) if self.calls % self.k == 0 else self.good.copy()


def test_the_guard_holds_instead_of_a_bad_action_and_counts():
    env = make_point_env()
    policy = EveryKth(3, np.array([0.5, -0.5, 0.0], np.float32))
    guard = ActionGuard(env, policy)
    env.reset(seed=0)
    actions = [guard.act({"state": np.zeros(5, np.float32)}) for _ in range(9)]
    held = [i for i, a in enumerate(actions) if not np.array_equal(a, policy.good)]
    assert held == [2, 5, 8] and all(np.array_equal(actions[i], np.zeros(3)) for i in held)
    assert guard.refused == 3 and guard.episode_refused == 3 and guard.holding
    assert guard.status()["last_refused_action"] == "non-finite actions ([nan, nan, nan])"
    guard.reset()
    assert guard.episode_refused == 0 and guard.refused == 3 and not guard.holding


def test_eval_s_wrapper_ends_the_episode_as_failed_with_the_reason():
    from robot_rl.data.rollout import ActorLoop

    env = make_point_env()
    policy = EveryKth(4, np.array([0.1, 0.1, 0.0], np.float32))
    guard = ActionGuard(env, policy)
    ended = EndOnRefusal(env, guard)
    loop = ActorLoop(ended, guard, seed=0)
    steps = loop.run_episode(seed=0)
    assert len(steps) == 4 and steps[-1].truncated and not steps[-1].success
    assert np.array_equal(steps[-1].action, np.zeros(3))  # what was executed is recorded, never the NaN
    assert ended.faults == [{"episode": 0, "step": 3, "reason": "non-finite actions ([nan, nan, nan])"}]


def test_an_actor_process_holds_and_counts_when_its_weights_give_nan(monkeypatch):
    from robot_rl.training.remote.actor_process import ActorProcess

    cfg = make_cfg(Path("unused"))
    process = ActorProcess(cfg, "token", target="127.0.0.1:9", actor_id="a", env_fn=lambda c: make_point_env())
    try:
        process.trained = True
        monkeypatch.setattr(process.policy, "act", lambda obs, **kw: np.full(3, np.nan, np.float32))
        step = process.loop.step()
        assert np.array_equal(step.action, np.zeros(3)) and np.isfinite(step.action).all()
        assert process.summary()["refused_actions"] == 1
    finally:
        process.env.close()


def test_recorded_observations_come_from_the_run_s_replay_and_never_open_a_fifo(trained_run, tmp_path):
    import os

    from robot_rl.training.saved_policy import recorded_observations

    env = make_point_env()
    seen = recorded_observations(trained_run, {"train": {"demos": None}}, env.observation_space, env.action_space)
    assert 2 <= len(seen) <= 8 and all(env.observation_space.contains(obs) for obs in seen)
    demos = tmp_path / "demos"
    demos.mkdir()
    os.mkfifo(demos / "episode_000000.npz")  # reading it would wait for a writer forever
    again = recorded_observations(trained_run, {"train": {"demos": str(demos)}}, env.observation_space,
                                  env.action_space)
    assert 1 <= len(again) <= 8 and all(env.observation_space.contains(obs) for obs in again)  # and no wait
    other = gym.spaces.Dict({"state": gym.spaces.Box(-np.inf, np.inf, (9,), np.float32)})
    assert recorded_observations(trained_run, {}, other, env.action_space) == []  # another space: none
