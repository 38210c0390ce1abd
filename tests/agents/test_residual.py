"""Residual RL on the actor's side and in the agent: the executed action stays within base +- scale under
fuzzed residuals, a non-finite residual or base holds and is counted, a person's action is stored as the
residual that comes closest to it, and the critic is trained on the combined (executed) action."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from point_reach import make_point_env

from robot_rl.agents.base_policy import CallablePolicy
from robot_rl.agents.residual import (
    BASE_ACTION_KEY,
    ResidualActor,
    ResidualEnv,
    combine,
    residual_target,
    scale_vector,
)
from robot_rl.agents.sac import SACAgent
from robot_rl.config.agent import AgentConfig
from robot_rl.data.rollout import ActorLoop
from robot_rl.errors import ConfigError

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FUZZED = 100_000
LOW, HIGH = -np.ones(3), np.ones(3)


def point_base(action_fn=None) -> CallablePolicy:
    env = make_point_env()
    act = action_fn or (lambda obs: np.array([0.5, -0.9, 0.2], np.float32))
    return CallablePolicy(act, "test:base", env.observation_space, env.action_space)


def fuzzed_residuals(rng: np.random.Generator, n: int) -> np.ndarray:
    """Rows of raw residual outputs: normal, NaN, +-inf, huge, tiny and fast-alternating +-1e6."""
    u = rng.standard_normal((n, 3))
    kind = rng.integers(0, 6, n)
    u[kind == 1] = np.nan
    u[kind == 2] = np.where(rng.random((int((kind == 2).sum()), 3)) < 0.5, np.inf, -np.inf)
    u[kind == 3] *= 1e30
    u[kind == 4] *= 1e-30
    alternating = np.flatnonzero(kind == 5)
    u[alternating] = np.where((alternating % 2 == 0)[:, None], 1e6, -1e6)
    one_bad = rng.random(n) < 0.05  # a single NaN among finite values
    u[one_bad, rng.integers(0, 3, int(one_bad.sum()))] = np.nan
    return u


def test_the_combined_action_never_leaves_base_plus_minus_scale_under_fuzzed_residuals():
    rng = np.random.default_rng(0)
    env = make_point_env()
    scale = np.array([0.3, 0.0, 1.0], np.float32)
    actor = ResidualActor(point_base(), env, scale)
    residuals = fuzzed_residuals(rng, FUZZED)
    bases = rng.uniform(-1, 1, (FUZZED, 3)).astype(np.float32)
    bases[::7] = np.sign(bases[::7])  # at the box edge
    finite = np.isfinite(residuals).all(axis=1)
    worst, held = 0.0, 0
    for base, u, ok in zip(bases, residuals, finite):
        executed = actor.execute(base, u)
        assert executed.dtype == np.float32 and executed.shape == (3,)
        if ok:
            worst = max(worst, float((np.abs(executed - base) - scale).max()))
            assert np.all(executed >= LOW) and np.all(executed <= HIGH)
            assert not actor.residual_guard.holding
        else:
            assert actor.residual_guard.holding and np.array_equal(executed, np.zeros(3, np.float32))  # hold
            held += 1
    assert worst <= 1e-6, worst
    assert held == int((~finite).sum()) > FUZZED // 5
    assert actor.status()["residual_refused"] == held and actor.status()["base_refused"] == 0
    # the figures, not only the bounds: a finite residual moves the action by exactly scale * clip(u)
    expected = np.clip(bases[finite][:1000] + scale * np.clip(residuals[finite][:1000], -1, 1), -1, 1)
    got = np.stack([combine(b, u, scale, LOW, HIGH) for b, u in zip(bases[finite][:1000], residuals[finite][:1000])])
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_a_base_action_that_is_not_finite_or_out_of_space_holds_and_is_counted():
    calls = iter([np.array([np.nan, 0, 0]), np.array([5.0, 0, 0]), np.array([0.2, 0.2, 0.2]), np.array([np.inf] * 3)])
    env = make_point_env()
    actor = ResidualActor(point_base(lambda obs: next(calls)), env, scale_vector(0.5, 3))
    obs, _ = env.reset(seed=0)
    for expect_held in (True, True, False, True):
        base = actor.base_action(obs)
        assert np.isfinite(base).all()
        executed = actor.execute(base, np.array([1.0, 1.0, 1.0]))
        if expect_held:
            assert actor.base_held and np.array_equal(executed, np.zeros(3, np.float32))  # no residual added
            assert np.array_equal(actor.stored(base, executed), np.zeros(3, np.float32))
        else:
            np.testing.assert_allclose(executed, [0.7, 0.7, 0.7], atol=1e-6)
    assert actor.status()["base_refused"] == 3


class _Person(gym.Wrapper):
    """Takes over every third step with a fixed action, reporting it as HumanIntervention does."""

    def __init__(self, env: gym.Env, action: np.ndarray) -> None:
        super().__init__(env)
        self.human, self.t, self.sent = action, 0, []

    def reset(self, **kwargs):
        self.t = 0
        return self.env.reset(**kwargs)

    def step(self, action):
        self.t += 1
        if self.t % 3 == 0:
            obs, r, term, trunc, info = self.env.step(self.human)
            self.sent.append(("human", self.human))
            return obs, r, term, trunc, {**info, "intervened": True, "intervene_action": self.human}
        self.sent.append(("policy", np.asarray(action)))
        return self.env.step(action)


def test_a_persons_action_is_stored_as_the_residual_clipped_to_the_scale():
    rng = np.random.default_rng(1)
    scale = np.array([0.2, 0.5, 0.0], np.float32)
    human = np.array([1.0, -1.0, 0.9], np.float32)
    inner = _Person(make_point_env(max_steps=12), human)
    base = point_base(lambda obs: np.clip(obs["state"][2:5] - obs["state"][0:3], -1, 1).astype(np.float32))

    class Random:
        def act(self, obs):
            return rng.uniform(-1, 1, 3).astype(np.float32)

    env = ResidualEnv(inner, ResidualActor(base, inner, scale))
    assert BASE_ACTION_KEY in env.observation_space.spaces
    steps = ActorLoop(env, Random(), seed=3).run_episode()
    assert len(steps) == 12 and sum(s.intervened for s in steps) == 4
    for step, (who, sent) in zip(steps, inner.sent):
        b = step.obs[BASE_ACTION_KEY]
        np.testing.assert_allclose(b, base.act({"state": step.obs["state"]}), atol=1e-6)
        if step.intervened:
            assert who == "human"
            np.testing.assert_allclose(step.action * scale, np.clip(human - b, -scale, scale), atol=1e-6)
            assert step.action[2] == 0.0  # a zero scale: no residual, whatever the person did
        else:
            assert who == "policy"
            np.testing.assert_allclose(sent, combine(b, step.action, scale, LOW, HIGH), atol=1e-6)
            assert np.all(np.abs(sent - b) <= scale + 1e-6)
    assert residual_target(np.zeros(3), np.array([0.1, -2.0, 3.0]), scale).tolist() == pytest.approx([0.5, -1.0, 0.0])


def _residual_agent(scale=0.25) -> tuple[SACAgent, gym.spaces.Dict]:
    cfg = AgentConfig(hidden_dims=(32, 32))
    cfg.base.mode, cfg.base.source, cfg.residual.scale = "residual", "test:base", scale
    env = make_point_env()
    obs_space = ResidualEnv(env, ResidualActor(point_base(), env, scale_vector(scale, 3))).observation_space
    return SACAgent(cfg, obs_space, env.action_space, seed=0), obs_space


def test_the_critic_is_trained_on_the_combined_action_and_the_residual_starts_at_zero():
    agent, obs_space = _residual_agent()
    rows = 16
    g = torch.Generator().manual_seed(0)
    base = torch.rand(rows, 3, generator=g) * 2 - 1
    base[:4] = torch.tensor([1.0, -1.0, 1.0])  # at the edge: the combined action is clipped into the box
    u = torch.rand(rows, 3, generator=g) * 2 - 1
    next_base = torch.rand(rows, 3, generator=g) * 2 - 1
    batch = {"obs": {"state": torch.randn(rows, 5, generator=g), BASE_ACTION_KEY: base},
             "next_obs": {"state": torch.randn(rows, 5, generator=g), BASE_ACTION_KEY: next_base},
             "action": u, "reward": torch.zeros(rows), "terminated": torch.zeros(rows),
             "grasp_penalty": torch.zeros(rows)}
    seen: list[torch.Tensor] = []
    seen_target: list[torch.Tensor] = []
    agent.critic.register_forward_hook(lambda m, args, out: seen.append(args[1].detach().clone()))
    agent.critic_target.register_forward_hook(lambda m, args, out: seen_target.append(args[1].detach().clone()))
    agent.update(batch)
    expected = (base + 0.25 * u).clamp(-1, 1)
    torch.testing.assert_close(seen[0], expected)  # the critic loss: the executed action of the data
    assert not torch.allclose(seen[0], u)
    assert ((seen_target[0] - next_base).abs() <= 0.25 + 1e-6).all()  # the target's next action: next base +- scale
    assert len(seen) == 2 and ((seen[1] - base).abs() <= 0.25 + 1e-6).all()  # the actor loss: base +- scale
    fresh, _ = _residual_agent()
    obs = {"state": np.zeros(5, np.float32), BASE_ACTION_KEY: np.array([0.3, -0.2, 0.9], np.float32)}
    assert np.array_equal(fresh.act(obs, deterministic=True), np.zeros(3, np.float32))  # no residual at first


def test_a_residual_agent_needs_the_base_action_in_its_observation():
    cfg = AgentConfig(hidden_dims=(32, 32))
    cfg.base.mode, cfg.base.source = "residual", "test:base"
    env = make_point_env()
    with pytest.raises(ConfigError, match="no 'base_action'"):
        SACAgent(cfg, env.observation_space, env.action_space)


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), -0.1, 1.5, [0.1, 0.2]])
def test_a_scale_that_cannot_bound_the_residual_is_refused(scale):
    with pytest.raises(ValueError):
        scale_vector(scale, 3)
